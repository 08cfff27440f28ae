#include "core/status.hpp"

#include "core/log.hpp"

extern "C" const char* gddt_status_string(gddt_status_t status) {
  switch (status) {
#define GDDT_STATUS_MESSAGE_CASE(name, value, message) \
  case GDDT_##name:                                    \
    return message;
    GDDT_STATUS_LIST(GDDT_STATUS_MESSAGE_CASE)
#undef GDDT_STATUS_MESSAGE_CASE
  }
  return "unknown gddt status";
}

extern "C" const char* gddt_version_string(void) { return GDDT_VERSION_STRING; }

namespace gddt {

const char* status_name(Status s) {
  switch (s) {
#define GDDT_STATUS_NAME_CASE(name, value, message) \
  case GDDT_##name:                                 \
    return "GDDT_" #name;
    GDDT_STATUS_LIST(GDDT_STATUS_NAME_CASE)
#undef GDDT_STATUS_NAME_CASE
  }
  return "GDDT_UNKNOWN";
}

void trace_failure(const char* file, int line, const char* expr, Status status) {
  if (log::enabled(log::Level::kDebug))
    log::write(log::Level::kDebug, "%s:%d: %s -> %s", file, line, expr, status_name(status));
}

}  // namespace gddt
