// What every interposed entry point shares: its export marker and the disable switch.
#pragma once

#include "core/config.hpp"

#define GDDT_MPI_ENTRY extern "C" __attribute__((visibility("default")))

namespace gddt::mpi {

inline bool disabled() {
  static const bool off = config::settings().disable;
  return off;
}

}  // namespace gddt::mpi
