// The configuration table, read once (defaults, then the config file, then GDDT_*
// variables; then settings left at `auto` from the gddt-tune profile or the built-in model).
// Everything that reads a setting goes through settings().
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config_text.hpp"

namespace gddt::config {

// kSize: bytes, with an optional K/M/G/T suffix; kCount: a plain whole number (blocks, waves).
enum class Kind { kBool, kEnum, kSize, kCount, kString };

struct Settings {
#define GDDT_CONFIG_FIELD_kBool bool
#define GDDT_CONFIG_FIELD_kEnum int  // the position of the value in the row's values
#define GDDT_CONFIG_FIELD_kSize std::uint64_t
#define GDDT_CONFIG_FIELD_kCount std::uint64_t
#define GDDT_CONFIG_FIELD_kString std::string
#define GDDT_CONFIG_ENTRY(field, suffix, kind, def, model, values, help) GDDT_CONFIG_FIELD_##kind field;
#define GDDT_CONFIG_ENUM_ENTRY(field, suffix, Type, enumerators, def, model, values, help) \
  GDDT_CONFIG_ENTRY(field, suffix, kEnum, def, model, values, help)
#include "core/config_table.def"
#undef GDDT_CONFIG_ENUM_ENTRY
#undef GDDT_CONFIG_ENTRY
};

// Where the value in force came from. A setting left at `auto` (its default, or named so in the
// file or the environment) takes the profile's value where the profile has one, else the model's.
enum class Source {
  kDefault,          // the table's default
  kModel,            // auto, resolved by the built-in model (the table's model column)
  kProfile,          // auto, resolved by the gddt-tune profile
  kFile,             // the config file
  kDefaultLocation,  // GDDT_CONFIG_FILE and GDDT_PROFILE: the file found at the XDG location
  kEnvironment,      // a GDDT_* variable
};

// One row as gddt-info shows it.
struct Row {
  const char* name;      // "GDDT_DISABLE"
  Kind kind;
  const char* default_text;
  const char* model_text;  // the built-in model's value of a setting the machine decides, else ""
  const char* values;      // "a|b|c", "LOW..HIGH", "LOW.." or ""
  const char* help;
  std::string value_text;  // the value in force, as text
  Source source_kind;
  std::string source;  // "default", "built-in model", "gddt-tune profile <path>", "file <path>", "environment"
};

// The settings in force. The first call reads them; later calls are a load of a pointer.
const Settings& settings();

// The chunk every staging pipeline uses: GDDT_STAGING_CHUNK raised to GDDT_STAGING_CHUNK_MIN.
inline std::uint64_t staging_chunk() { return std::max(settings().staging_chunk, settings().staging_chunk_min); }

// The enumerated settings, typed: config::protocol() == config::Protocol::kDevice.
#define GDDT_CONFIG_ENUMERATORS(...) __VA_ARGS__
#define GDDT_CONFIG_ENTRY(field, suffix, kind, def, model, values, help)
#define GDDT_CONFIG_ENUM_ENTRY(field, suffix, Type, enumerators, def, model, values, help) \
  enum class Type { GDDT_CONFIG_ENUMERATORS enumerators };                                  \
  inline Type field() { return static_cast<Type>(settings().field); }
#include "core/config_table.def"
#undef GDDT_CONFIG_ENUM_ENTRY
#undef GDDT_CONFIG_ENTRY
#undef GDDT_CONFIG_ENUMERATORS

// Each enum's variable and enumerators as written ("GDDT_PROTOCOL", "kAuto, kDevice, kHost").
struct EnumSpelling {
  const char* name;
  const char* enumerators;
};
std::vector<EnumSpelling> enum_spellings();

// Every row with the value in force, in table order.
std::vector<Row> rows();

// Problems met while reading (unknown names in the file or profile, bad values); bad values keep
// the previous value. Empty when all was well.
const std::vector<std::string>& problems();

// The profile the settings left at `auto` were resolved from; "" when none was read.
const std::string& profile_in_use();

// Where gddt-tune writes its profile unless told otherwise: GDDT_PROFILE when set, else the XDG
// location that the reader looks at ("" when neither XDG_CONFIG_HOME nor HOME is set).
std::string profile_path_for_writing();

// A measured value of a setting the machine decides: its name without GDDT_ and the bytes.
struct Measurement {
  std::string name;  // "STAGING_CHUNK"
  std::uint64_t value;
};

// Writes a gddt-tune profile to `path` (whose directory must exist) in the format the reader
// takes: `comment` as a comment line, then NAME=VALUE per measurement. False, with *problem
// set, where a name is not a setting the machine decides or the file cannot be written.
bool write_profile(const std::string& path, const std::string& comment, const std::vector<Measurement>& measured,
                   std::string* problem);

// Re-reads everything; for tests only (not thread-safe against concurrent settings()).
void reload_for_testing();

}  // namespace gddt::config
