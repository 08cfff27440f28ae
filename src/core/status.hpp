// Internal status handling: the public gddt_status_t plus the check macros that log the
// failing frame, so an error that climbs several layers leaves a call chain in the log.
#pragma once

#include "gddt/gddt.h"

namespace gddt {

using Status = gddt_status_t;

constexpr bool is_error(Status s) { return s < 0; }

const char* status_name(Status s);  // "GDDT_ERR_TRUNCATE", ...

// Logs a failing frame at debug level (GDDT_CHECK).
void trace_failure(const char* file, int line, const char* expr, Status status);

}  // namespace gddt

// Evaluates `expr` (a Status); on error logs this frame at debug level and returns it.
#define GDDT_CHECK(expr)                                                               \
  do {                                                                                 \
    ::gddt::Status gddt_check_status_ = (expr);                                        \
    if (::gddt::is_error(gddt_check_status_)) {                                        \
      ::gddt::trace_failure(__FILE__, __LINE__, #expr, gddt_check_status_);       \
      return gddt_check_status_;                                                       \
    }                                                                                  \
  } while (0)

#include "core/log.hpp"
