// How the device API's host calls report an error: as an MPI call does, through an error handler.
#pragma once

#include <mpi.h>

#include "core/log.hpp"

namespace gddt::device_api {

// Raises `cls` (unless MPI_SUCCESS) through `comm`'s error handler, MPI_COMM_SELF's where the call
// has no valid communicator, logs `why` at info level with the `call`'s name, and returns `cls`.
inline int raise(MPI_Comm comm, int cls, const char* call, const char* why) {
  if (cls == MPI_SUCCESS) return cls;
  GDDT_LOG(kInfo, "%s: %s", call, why);
  PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, cls);
  return cls;
}

}  // namespace gddt::device_api
