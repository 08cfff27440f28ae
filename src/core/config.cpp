// Reads the settings table once: defaults, then the config file, then GDDT_* variables.
// This is the only file that reads the environment.
#include "core/config.hpp"

#include <algorithm>
#include <strings.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <utility>

#include "core/log.hpp"

extern char** environ;

namespace gddt::config {
namespace {

constexpr char kPrefix[] = "GDDT_";
constexpr std::size_t kPrefixLength = sizeof kPrefix - 1;

// One table row plus the typed code to parse text into its field and print it back.
struct Entry {
  const char* name;
  Kind kind;
  const char* default_text;
  const char* values;
  const char* help;
  // Stores the parsed value; false (field untouched) when `text` is not valid for the row.
  bool (*assign)(const Entry& entry, const std::string& text, Settings* settings);
  std::string (*format)(const Entry& entry, const Settings& settings);
};

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string trim(const std::string& text) {
  const char* spaces = " \t\r\n";
  std::size_t first = text.find_first_not_of(spaces);
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(spaces) - first + 1);
}

bool parse_value(const Entry&, const std::string& text, bool* field) {
  std::string word = lowercase(text);
  if (word == "1" || word == "true" || word == "yes" || word == "on") {
    *field = true;
    return true;
  }
  if (word == "0" || word == "false" || word == "no" || word == "off") {
    *field = false;
    return true;
  }
  return false;
}

// Size rows may bound their values: "LOW..HIGH" in the values column.
bool parse_value(const Entry& entry, const std::string& text, std::uint64_t* field) {
  std::uint64_t value = 0;
  if (!parse_size(text, &value)) return false;
  unsigned long long low = 0, high = 0;
  if (std::sscanf(entry.values, "%llu..%llu", &low, &high) == 2 && (value < low || value > high)) return false;
  *field = value;
  return true;
}

// The '|'-separated values of an enum row.
std::vector<std::string> values_of(const Entry& entry) {
  std::vector<std::string> values;
  const std::string text = entry.values;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('|', start);
    if (end == std::string::npos) end = text.size();
    values.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return values;
}

// Enum rows accept one of their values (any case) and keep its position.
bool parse_value(const Entry& entry, const std::string& text, int* field) {
  const std::vector<std::string> values = values_of(entry);
  const auto found = std::find(values.begin(), values.end(), lowercase(text));
  if (found == values.end()) return false;
  *field = static_cast<int>(found - values.begin());
  return true;
}

bool parse_value(const Entry&, const std::string& text, std::string* field) {
  *field = text;
  return true;
}

std::string format_value(const Entry&, bool value) { return value ? "1" : "0"; }
std::string format_value(const Entry&, const std::string& value) { return value; }
std::string format_value(const Entry& entry, int position) {
  return values_of(entry)[static_cast<std::size_t>(position)];
}

// The largest binary suffix that divides the value exactly, so "4M" reads back as "4M".
std::string format_value(const Entry&, std::uint64_t bytes) {
  const char suffixes[] = "KMGT";
  int suffix = -1;
  while (suffix < 3 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++suffix;
  }
  std::string text = std::to_string(bytes);
  if (suffix >= 0) text += suffixes[suffix];
  return text;
}

const Entry kEntries[] = {
#define GDDT_CONFIG_ENTRY(field, suffix, kind, def, values, help)                                  \
  {"GDDT_" suffix, Kind::kind, def, values, help,                                                   \
   [](const Entry& entry, const std::string& text, Settings* settings) {                            \
     return parse_value(entry, text, &settings->field);                                             \
   },                                                                                               \
   [](const Entry& entry, const Settings& settings) { return format_value(entry, settings.field); }},
#include "core/config_table.def"
#undef GDDT_CONFIG_ENTRY
};
constexpr std::size_t kEntryCount = sizeof kEntries / sizeof kEntries[0];

const Entry* find_entry(const std::string& name) {
  for (const Entry& entry : kEntries) {
    if (strcasecmp(entry.name, name.c_str()) == 0) return &entry;
  }
  return nullptr;
}

std::size_t index_of(const Entry& entry) { return static_cast<std::size_t>(&entry - kEntries); }

struct State {
  Settings settings;
  std::string sources[kEntryCount];
  std::vector<std::string> problems;

  void apply(const Entry& entry, const std::string& text, const std::string& source) {
    if (entry.assign(entry, text, &settings)) {
      sources[index_of(entry)] = source;
      return;
    }
    std::string problem = std::string(entry.name) + "=" + text + " (" + source + "): invalid ";
    if (entry.kind == Kind::kEnum) {
      problem += std::string("value, expected one of ") + entry.values;
    } else if (entry.kind == Kind::kSize) {
      problem += "size, expected bytes with an optional K/M/G/T suffix";
      if (*entry.values != '\0') problem += std::string(" in ") + entry.values;
    } else {
      problem += "boolean, expected 1/0/true/false/yes/no/on/off";
    }
    problems.push_back(problem + "; keeping " + entry.format(entry, settings));
  }
};

// GDDT_CONFIG_FILE names the file (set but empty: no file); otherwise the XDG location is
// read if it exists. Returns "" when there is nothing to read.
std::string config_file_path(State* state) {
  const Entry& entry = *find_entry("GDDT_CONFIG_FILE");
  if (const char* named = std::getenv(entry.name)) {
    state->apply(entry, named, "environment");
    return named;
  }
  std::string directory;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    directory = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    directory = std::string(home) + "/.config";
  } else {
    return "";
  }
  std::string path = directory + "/gddt/gddt.conf";
  if (!std::ifstream(path)) return "";
  state->apply(entry, path, "default location");
  return path;
}

void read_file(const std::string& path, State* state) {
  struct stat info {};
  std::ifstream file(path);
  if (!file || stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    state->problems.push_back("cannot read config file " + path + " (not a readable regular file)");
    return;
  }
  const std::string source = "file " + path;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    const std::string where = path + ":" + std::to_string(number) + ": ";
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    std::size_t equals = line.find('=');
    if (equals == std::string::npos) {
      state->problems.push_back(where + "expected NAME=VALUE, got '" + line + "'");
      continue;
    }
    std::string name = trim(line.substr(0, equals));
    if (strncasecmp(name.c_str(), kPrefix, kPrefixLength) != 0) name = kPrefix + name;
    const Entry* entry = find_entry(name);
    if (entry == nullptr) {
      state->problems.push_back(where + "unknown setting " + name);
    } else if (std::string(entry->name) == "GDDT_CONFIG_FILE") {
      state->problems.push_back(where + "GDDT_CONFIG_FILE has no effect inside a config file");
    } else {
      state->apply(*entry, trim(line.substr(equals + 1)), source);
    }
  }
}

void read_environment(State* state) {
  for (const Entry& entry : kEntries) {
    if (std::string(entry.name) == "GDDT_CONFIG_FILE") continue;  // read before the file
    if (const char* text = std::getenv(entry.name)) state->apply(entry, text, "environment");
  }
  // A misspelt variable would otherwise be silently ignored.
  for (char** variable = environ; *variable != nullptr; ++variable) {
    std::string assignment = *variable;
    if (assignment.compare(0, kPrefixLength, kPrefix) != 0) continue;
    std::string name = assignment.substr(0, assignment.find('='));
    bool known = false;
    for (const Entry& entry : kEntries) known = known || name == entry.name;
    if (!known) state->problems.push_back("unknown environment variable " + name);
  }
}

std::unique_ptr<State> load() {
  auto state = std::make_unique<State>();
  for (const Entry& entry : kEntries) {
    if (!entry.assign(entry, entry.default_text, &state->settings)) {
      state->problems.push_back(std::string("table default of ") + entry.name + " is invalid: " + entry.default_text);
    }
    state->sources[index_of(entry)] = "default";
  }
  std::string path = config_file_path(state.get());
  if (!path.empty()) read_file(path, state.get());
  read_environment(state.get());
  // GDDT_LOG would ask the logger, which asks for these very settings while they are being
  // built; write directly, honouring the level just read.
  if (static_cast<LogLevel>(state->settings.log_level) != LogLevel::kError) {
    for (const std::string& problem : state->problems) log::write(log::Level::kWarn, "config: %s", problem.c_str());
  }
  return state;
}

std::unique_ptr<State>& current() {
  static std::unique_ptr<State> state = load();  // thread-safe one-time initialisation
  return state;
}

}  // namespace

const Settings& settings() { return current()->settings; }

std::vector<Row> rows() {
  const State& state = *current();
  std::vector<Row> result;
  result.reserve(kEntryCount);
  for (const Entry& entry : kEntries) {
    result.push_back(Row{entry.name, entry.kind, entry.default_text, entry.values, entry.help,
                         entry.format(entry, state.settings), state.sources[index_of(entry)]});
  }
  return result;
}

const std::vector<std::string>& problems() { return current()->problems; }

bool parse_size(const std::string& text, std::uint64_t* bytes) {
  std::string word = trim(text);
  std::size_t digits = 0;
  while (digits < word.size() && std::isdigit(static_cast<unsigned char>(word[digits]))) ++digits;
  if (digits == 0) return false;
  std::string suffix = lowercase(trim(word.substr(digits)));
  // "4M", "4MB" and "4MiB" all mean 4 * 2^20.
  if (suffix.size() == 3 && suffix.compare(1, 2, "ib") == 0) suffix.resize(1);
  if (suffix.size() == 2 && suffix[1] == 'b') suffix.resize(1);
  int shift = 0;
  if (suffix == "k") {
    shift = 10;
  } else if (suffix == "m") {
    shift = 20;
  } else if (suffix == "g") {
    shift = 30;
  } else if (suffix == "t") {
    shift = 40;
  } else if (!suffix.empty() && suffix != "b") {
    return false;
  }
  std::uint64_t value = 0;
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < digits; ++i) {
    unsigned digit = static_cast<unsigned>(word[i] - '0');
    if (value > (max - digit) / 10) return false;
    value = value * 10 + digit;
  }
  if (value > (max >> shift)) return false;
  *bytes = value << shift;
  return true;
}

void reload_for_testing() { current() = load(); }

std::vector<EnumSpelling> enum_spellings() {
  return {
#define GDDT_CONFIG_ENUM(field, suffix, Type, ...) {"GDDT_" suffix, #__VA_ARGS__},
#include "core/config_enums.def"
#undef GDDT_CONFIG_ENUM
  };
}

}  // namespace gddt::config
