#include "core/log.hpp"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "core/config.hpp"

namespace gddt::log {
namespace {

Level configured_level() {
  static const Level level = [] {
    switch (config::log_level()) {
      case config::LogLevel::kError: return Level::kError;
      case config::LogLevel::kInfo: return Level::kInfo;
      case config::LogLevel::kDebug: return Level::kDebug;
      case config::LogLevel::kWarn: break;
    }
    return Level::kWarn;
  }();
  return level;
}

const char* level_name(Level level) {
  switch (level) {
    case Level::kError: return "error";
    case Level::kWarn: return "warn";
    case Level::kInfo: return "info";
    case Level::kDebug: return "debug";
  }
  return "?";
}

}  // namespace

bool enabled(Level level) { return static_cast<int>(level) <= static_cast<int>(configured_level()); }

void write(Level level, const char* format, ...) {
  char line[1024];
  int n = std::snprintf(line, sizeof line, "gddt[%d] %s: ", static_cast<int>(getpid()), level_name(level));
  va_list args;
  va_start(args, format);
  std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n) - 1, format, args);
  va_end(args);
  size_t len = std::strlen(line);
  line[len++] = '\n';
  // One write() per line keeps lines of concurrent ranks and threads whole.
  ssize_t ignored = ::write(STDERR_FILENO, line, len);
  (void)ignored;
}

}  // namespace gddt::log
