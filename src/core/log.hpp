// Logging to stderr, filtered by GDDT_LOG_LEVEL. Messages carry the rank-free prefix
// "gddt:" and the level; formatting is printf-style because it is cheap to leave in.
#pragma once

#include "gddt/gddt.h"

namespace gddt::log {

enum class Level { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

bool enabled(Level level);
void write(Level level, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace gddt::log

#define GDDT_LOG(level, ...)                                                             \
  do {                                                                                   \
    if (::gddt::log::enabled(::gddt::log::Level::level)) ::gddt::log::write(::gddt::log::Level::level, __VA_ARGS__); \
  } while (0)
