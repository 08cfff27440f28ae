// Converting gddt statuses into MPI error classes, raised once at the MPI boundary through
// the communicator's error handler.
#pragma once

#include <mpi.h>

#include "core/status.hpp"

namespace gddt::mpi {

int error_class(Status status);

// Raises `status` on `comm` (its error handler runs: MPI_ERRORS_ARE_FATAL aborts) and
// returns the MPI error class for the caller to return. MPI_SUCCESS for GDDT_OK.
int raise(MPI_Comm comm, Status status);
// The same on a window's and on a file's error handler.
int raise_on_window(MPI_Win win, Status status);
int raise_on_file(MPI_File file, Status status);
// On the handle a call belongs to: its window where it has one, else its file, else `comm`.
int raise_on_owner(MPI_Comm comm, MPI_Win win, MPI_File file, Status status);

}  // namespace gddt::mpi
