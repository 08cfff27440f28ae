// The configuration table, read once (defaults, then the config file, then GDDT_*
// variables). Everything that reads a setting goes through config().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace gddt::config {

enum class Kind { kBool, kEnum, kSize, kString };

struct Settings {
#define GDDT_CONFIG_FIELD_kBool bool
#define GDDT_CONFIG_FIELD_kEnum int  // the position of the value in the row's values
#define GDDT_CONFIG_FIELD_kSize std::uint64_t
#define GDDT_CONFIG_FIELD_kString std::string
#define GDDT_CONFIG_ENTRY(field, suffix, kind, def, values, help) GDDT_CONFIG_FIELD_##kind field;
#include "core/config_table.def"
#undef GDDT_CONFIG_ENTRY
};

// One row as gddt-info shows it.
struct Row {
  const char* name;      // "GDDT_DISABLE"
  Kind kind;
  const char* default_text;
  const char* values;    // "a|b|c" or ""
  const char* help;
  std::string value_text;  // the value in force, as text
  std::string source;      // "default", "file <path>", "environment"
};

// The settings in force. The first call reads them; later calls are a load of a pointer.
const Settings& settings();

// The enumerated settings, typed: config::protocol() == config::Protocol::kDevice.
#define GDDT_CONFIG_ENUM(field, suffix, Type, ...) \
  enum class Type { __VA_ARGS__ };                 \
  inline Type field() { return static_cast<Type>(settings().field); }
#include "core/config_enums.def"
#undef GDDT_CONFIG_ENUM

// Each enum's variable and enumerators as written ("GDDT_PROTOCOL", "kAuto, kDevice, kHost").
struct EnumSpelling {
  const char* name;
  const char* enumerators;
};
std::vector<EnumSpelling> enum_spellings();

// Every row with the value in force, in table order.
std::vector<Row> rows();

// Problems met while reading (unknown names in the file, bad values); bad values keep the
// default. Empty when all was well.
const std::vector<std::string>& problems();

// Parses "4M", "64K", "1G", "123" into bytes; false when the text is not a size.
bool parse_size(const std::string& text, std::uint64_t* bytes);

// Re-reads everything; for tests only (not thread-safe against concurrent settings()).
void reload_for_testing();

}  // namespace gddt::config
