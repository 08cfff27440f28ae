// Reads the settings table once: defaults, then the config file, then GDDT_* variables, then
// the gddt-tune profile and the built-in model for the settings left at `auto`. This is the only
// file that reads the environment.
#include "core/config.hpp"

#include <algorithm>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <utility>

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
  const char* model;  // "" where the machine does not decide the setting
  const char* values;
  const char* help;
  // Stores the parsed value; false (field untouched) when `text` is not valid for the row.
  bool (*assign)(const Entry& entry, const std::string& text, Settings* settings);
  std::string (*format)(const Entry& entry, const Settings& settings);
};

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

// Size rows may bound their values: "LOW..HIGH" or "LOW.." (no upper bound) in the values
// column, each bound a size ("4K..").
bool within_bounds(const Entry& entry, std::uint64_t value) {
  const std::string bounds = entry.values;
  const std::size_t dots = bounds.find("..");
  if (dots == std::string::npos) return true;
  std::uint64_t low = 0, high = std::numeric_limits<std::uint64_t>::max();
  parse_size(bounds.substr(0, dots), &low);
  if (dots + 2 < bounds.size()) parse_size(bounds.substr(dots + 2), &high);
  return value >= low && value <= high;
}

// Sizes and counts; a count is digits alone.
bool parse_value(const Entry& entry, const std::string& text, std::uint64_t* field) {
  std::uint64_t value = 0;
  const std::string word = trim(text);
  if (entry.kind == Kind::kCount && word.find_first_not_of("0123456789") != std::string::npos) return false;
  if (!parse_size(word, &value) || !within_bounds(entry, value)) return false;
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

// A size with the largest binary suffix that divides it exactly, so "4M" reads back as "4M"; a
// count as it is.
std::string format_value(const Entry& entry, std::uint64_t bytes) {
  if (entry.kind == Kind::kCount) return std::to_string(bytes);
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
#define GDDT_CONFIG_ENTRY(field, suffix, kind, def, model, values, help)                           \
  {"GDDT_" suffix, Kind::kind, def, model, values, help,                                            \
   [](const Entry& entry, const std::string& text, Settings* settings) {                            \
     return parse_value(entry, text, &settings->field);                                             \
   },                                                                                               \
   [](const Entry& entry, const Settings& settings) { return format_value(entry, settings.field); }},
#define GDDT_CONFIG_ENUM_ENTRY(field, suffix, Type, enumerators, def, model, values, help) \
  GDDT_CONFIG_ENTRY(field, suffix, kEnum, def, model, values, help)
#include "core/config_table.def"
#undef GDDT_CONFIG_ENUM_ENTRY
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

// Whether the machine decides the setting: it accepts `auto`, which resolves to the profile's
// value or the built-in model's.
bool machine_decided(const Entry& entry) { return *entry.model != '\0'; }

bool is_auto(const std::string& text) { return lowercase(trim(text)) == "auto"; }

// Where a row's value came from; for a row resolved from `auto`, also where `auto` was named
// (empty when it was the default).
struct Origin {
  Source source = Source::kDefault;
  std::string path;  // the file or profile of kFile and kProfile
  std::string auto_named_in;
};

std::string describe(const Origin& origin) {
  std::string text;
  switch (origin.source) {
    case Source::kDefault: return "default";
    case Source::kModel: text = "built-in model"; break;
    case Source::kProfile: text = "gddt-tune profile " + origin.path; break;
    case Source::kFile: return "file " + origin.path;
    case Source::kDefaultLocation: return "default location";
    case Source::kEnvironment: return "environment";
  }
  if (!origin.auto_named_in.empty()) text += " (auto in " + origin.auto_named_in + ")";
  return text;
}

std::string describe_place(Source source, const std::string& path) {
  return source == Source::kEnvironment ? "the environment" : "file " + path;
}

struct State {
  Settings settings;
  Origin origins[kEntryCount];
  bool automatic[kEntryCount] = {};  // left at `auto` so far
  std::string profile;               // the profile read, "" when none
  std::vector<std::string> problems;

  // Stores `text` (or `auto`, where the row allows it); false, changing nothing, when the text
  // is not valid for the row.
  bool set(const Entry& entry, const std::string& text) {
    const std::size_t index = index_of(entry);
    if (machine_decided(entry) && is_auto(text)) {
      automatic[index] = true;
      return true;
    }
    if (!entry.assign(entry, text, &settings)) return false;
    automatic[index] = false;
    return true;
  }

  std::string value_text(const Entry& entry) const {
    return automatic[index_of(entry)] ? "auto" : entry.format(entry, settings);
  }

  void apply(const Entry& entry, const std::string& text, Source source, const std::string& path = "") {
    if (set(entry, text)) {
      origins[index_of(entry)] = Origin{source, path, ""};
      return;
    }
    std::string problem =
        std::string(entry.name) + "=" + text + " (" + describe(Origin{source, path, ""}) + "): invalid ";
    if (entry.kind == Kind::kEnum) {
      problem += std::string("value, expected one of ") + entry.values;
    } else if (entry.kind == Kind::kSize) {
      problem += "size, expected bytes with an optional K/M/G/T suffix";
      if (*entry.values != '\0') problem += std::string(" in ") + entry.values;
      if (machine_decided(entry)) problem += ", or auto";
    } else if (entry.kind == Kind::kCount) {
      problem += "count, expected a whole number";
      if (*entry.values != '\0') problem += std::string(" in ") + entry.values;
      if (machine_decided(entry)) problem += ", or auto";
    } else {
      problem += "boolean, expected 1/0/true/false/yes/no/on/off";
    }
    problems.push_back(problem + "; keeping " + value_text(entry));
  }
};

// $XDG_CONFIG_HOME/gddt or ~/.config/gddt; "" when neither variable is set.
std::string xdg_directory() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/gddt";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.config/gddt";
  }
  return "";
}

// The file at the XDG location named `file_name` where it exists, else "".
std::string existing_at_default_location(const char* file_name) {
  const std::string directory = xdg_directory();
  if (directory.empty()) return "";
  std::string path = directory + "/" + file_name;
  return std::ifstream(path) ? path : "";
}

constexpr char kConfigFileName[] = "gddt.conf";
constexpr char kProfileFileName[] = "profile.conf";

// GDDT_CONFIG_FILE names the file (set but empty: no file); otherwise the XDG location is
// read if it exists. Returns "" when there is nothing to read.
std::string config_file_path(State* state) {
  const Entry& entry = *find_entry("GDDT_CONFIG_FILE");
  if (const char* named = std::getenv(entry.name)) {
    state->apply(entry, named, Source::kEnvironment);
    return named;
  }
  std::string path = existing_at_default_location(kConfigFileName);
  if (!path.empty()) state->apply(entry, path, Source::kDefaultLocation);
  return path;
}

// GDDT_PROFILE (from the file or the environment) names the profile (set but empty: none);
// otherwise the XDG location is read if it exists. Returns "" when there is nothing to read.
std::string profile_path(State* state) {
  const Entry& entry = *find_entry("GDDT_PROFILE");
  if (state->origins[index_of(entry)].source != Source::kDefault) return state->settings.profile;
  std::string path = existing_at_default_location(kProfileFileName);
  if (!path.empty()) state->apply(entry, path, Source::kDefaultLocation);
  return path;
}

// Calls on_setting(entry, value, where) for each NAME=VALUE line of `path` that names a setting
// (NAME with or without the GDDT_ prefix); reports other lines as problems.
template <typename OnSetting>
void read_lines(const std::string& path, const char* what, State* state, OnSetting&& on_setting) {
  struct stat info {};
  std::ifstream file(path);
  if (!file || stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    state->problems.push_back(std::string("cannot read ") + what + " " + path + " (not a readable regular file)");
    return;
  }
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
    } else {
      on_setting(*entry, trim(line.substr(equals + 1)), where);
    }
  }
}

void read_file(const std::string& path, State* state) {
  read_lines(path, "config file", state, [&](const Entry& entry, const std::string& value, const std::string& where) {
    if (std::string(entry.name) == "GDDT_CONFIG_FILE") {
      state->problems.push_back(where + "GDDT_CONFIG_FILE has no effect inside a config file");
    } else {
      state->apply(entry, value, Source::kFile, path);
    }
  });
}

void read_environment(State* state) {
  for (const Entry& entry : kEntries) {
    if (std::string(entry.name) == "GDDT_CONFIG_FILE") continue;  // read before the file
    if (const char* text = std::getenv(entry.name)) state->apply(entry, text, Source::kEnvironment);
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

// The profile's values of the settings the machine decides, by row (last line wins); "" where
// the profile has none. A profile holds measurements, so any other setting, or `auto`, in it is
// a problem: those belong in the config file.
std::vector<std::string> read_profile(const std::string& path, State* state) {
  std::vector<std::string> measured(kEntryCount);
  read_lines(path, "profile", state, [&](const Entry& entry, const std::string& value, const std::string& where) {
    if (!machine_decided(entry)) {
      state->problems.push_back(where + entry.name + " is not decided by the machine; set it in the config file");
    } else if (is_auto(value) || value.empty()) {
      state->problems.push_back(where + entry.name + " needs a measured value, not '" + value + "'");
    } else {
      measured[index_of(entry)] = value;
    }
  });
  return measured;
}

// Gives every setting still at `auto` its profile value, else its built-in model's.
void resolve_automatic(State* state) {
  const std::string path = profile_path(state);
  std::vector<std::string> measured(kEntryCount);
  if (!path.empty()) {
    measured = read_profile(path, state);
    state->profile = path;
  }
  for (const Entry& entry : kEntries) {
    const std::size_t index = index_of(entry);
    if (!state->automatic[index]) continue;
    Origin& origin = state->origins[index];
    const std::string named_in = origin.source == Source::kDefault ? "" : describe_place(origin.source, origin.path);
    if (!measured[index].empty()) {
      if (entry.assign(entry, measured[index], &state->settings)) {
        state->automatic[index] = false;
        origin = Origin{Source::kProfile, path, named_in};
        continue;
      }
      state->problems.push_back(std::string(entry.name) + "=" + measured[index] + " (gddt-tune profile " + path +
                                "): invalid; using the built-in model's " + entry.model);
    }
    if (!entry.assign(entry, entry.model, &state->settings)) {
      state->problems.push_back(std::string("built-in model of ") + entry.name + " is invalid: " + entry.model);
    }
    state->automatic[index] = false;
    origin = Origin{Source::kModel, "", named_in};
  }
}

std::unique_ptr<State> load() {
  auto state = std::make_unique<State>();
  for (const Entry& entry : kEntries) {
    if (!state->set(entry, entry.default_text)) {
      state->problems.push_back(std::string("table default of ") + entry.name + " is invalid: " + entry.default_text);
    }
  }
  std::string path = config_file_path(state.get());
  if (!path.empty()) read_file(path, state.get());
  read_environment(state.get());
  resolve_automatic(state.get());
  // The logger (log.cpp) asks for these very settings, so the problems go straight to stderr as its
  // warnings look, honouring the level just read.
  if (static_cast<LogLevel>(state->settings.log_level) != LogLevel::kError) {
    for (const std::string& problem : state->problems)
      std::fprintf(stderr, "gddt[%d] warn: config: %s\n", static_cast<int>(getpid()), problem.c_str());
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
    const Origin& origin = state.origins[index_of(entry)];
    result.push_back(Row{entry.name, entry.kind, entry.default_text, entry.model, entry.values, entry.help,
                         entry.format(entry, state.settings), origin.source, describe(origin)});
  }
  return result;
}

const std::vector<std::string>& problems() { return current()->problems; }

const std::string& profile_in_use() { return current()->profile; }

std::string profile_path_for_writing() {
  if (!settings().profile.empty()) return settings().profile;
  const std::string directory = xdg_directory();
  return directory.empty() ? "" : directory + "/" + kProfileFileName;
}

bool write_profile(const std::string& path, const std::string& comment, const std::vector<Measurement>& measured,
                   std::string* problem) {
  std::string text = "# " + comment + "\n";
  for (const Measurement& measurement : measured) {
    const Entry* entry = find_entry(kPrefix + measurement.name);
    if (entry == nullptr || !machine_decided(*entry)) {
      *problem = "GDDT_" + measurement.name + " is not a setting the machine decides";
      return false;
    }
    text += measurement.name + "=" + format_value(*entry, measurement.value) + "\n";
  }
  std::ofstream file(path);
  file << text;
  if (!file.flush()) {
    *problem = "cannot write " + path;
    return false;
  }
  return true;
}

void reload_for_testing() { current() = load(); }

std::vector<EnumSpelling> enum_spellings() {
  return {
#define GDDT_CONFIG_ENTRY(field, suffix, kind, def, model, values, help)
#define GDDT_CONFIG_ENUM_ENTRY(field, suffix, Type, enumerators, def, model, values, help) \
  {"GDDT_" suffix, GDDT_CONFIG_SPELLING enumerators},
#define GDDT_CONFIG_SPELLING(...) #__VA_ARGS__
#include "core/config_table.def"
#undef GDDT_CONFIG_SPELLING
#undef GDDT_CONFIG_ENUM_ENTRY
#undef GDDT_CONFIG_ENTRY
  };
}

}  // namespace gddt::config
