#include "mpi/errors.hpp"

#include "gddt/gddt_mpi.h"

namespace gddt::mpi {

int error_class(Status status) {
  switch (status) {
    case GDDT_OK:
    case GDDT_IN_PROGRESS: return MPI_SUCCESS;
    case GDDT_ERR_INVALID_ARG: return MPI_ERR_ARG;
    case GDDT_ERR_INVALID_TYPE: return MPI_ERR_TYPE;
    case GDDT_ERR_COUNT: return MPI_ERR_COUNT;
    case GDDT_ERR_BUFFER: return MPI_ERR_BUFFER;
    case GDDT_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case GDDT_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
    case GDDT_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case GDDT_ERR_INTERNAL: return MPI_ERR_INTERN;
    case GDDT_ERR_TAG: return MPI_ERR_TAG;
    case GDDT_ERR_RANK: return MPI_ERR_RANK;
    case GDDT_ERR_NO_DEVICE:
    case GDDT_ERR_CUDA:
    case GDDT_ERR_MPI:
    case GDDT_ERR_CONFIG: return MPI_ERR_OTHER;
  }
  return MPI_ERR_OTHER;
}

namespace {

// Raises `status` through `call_errhandler` on `handle`, a `what`.
template <typename Handle>
int raise_through(int (*call_errhandler)(Handle, int), Handle handle, const char* what, Status status) {
  const int cls = error_class(status);
  if (cls == MPI_SUCCESS) return MPI_SUCCESS;
  GDDT_LOG(kInfo, "raising %s (%s) on the %s", status_name(status), gddt_status_string(status), what);
  call_errhandler(handle, cls);
  return cls;
}

}  // namespace

int raise(MPI_Comm comm, Status status) { return raise_through(PMPI_Comm_call_errhandler, comm, "communicator", status); }
int raise_on_window(MPI_Win win, Status status) { return raise_through(PMPI_Win_call_errhandler, win, "window", status); }
int raise_on_file(MPI_File file, Status status) { return raise_through(PMPI_File_call_errhandler, file, "file", status); }
int raise_on_owner(MPI_Comm comm, MPI_Win win, MPI_File file, Status status) {
  if (win != MPI_WIN_NULL) return raise_on_window(win, status);
  return file != MPI_FILE_NULL ? raise_on_file(file, status) : raise(comm, status);
}

}  // namespace gddt::mpi

extern "C" int gddt_status_to_mpi_error(gddt_status_t status) { return gddt::mpi::error_class(status); }
