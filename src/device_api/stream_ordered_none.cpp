// The stream-ordered API in a build without CUDA: there are no streams to order on, so every
// call fails with MPI_ERR_UNSUPPORTED_OPERATION, through the communicator's error handler as
// an MPI call would, and says why.
#include "core/log.hpp"
#include "gddt/gddt_device.h"

namespace {

int unsupported(MPI_Comm comm, const char* call) {
  GDDT_LOG(kError, "%s: gddt was built without CUDA; the stream-ordered API needs its CUDA backend", call);
  PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, MPI_ERR_UNSUPPORTED_OPERATION);
  return MPI_ERR_UNSUPPORTED_OPERATION;
}

}  // namespace

extern "C" {

GDDT_EXPORT int gddt_stream_comm_create(MPI_Comm comm, void*, MPI_Comm*) {
  return unsupported(comm, "gddt_stream_comm_create");
}

GDDT_EXPORT int gddt_send_enqueue(const void*, int, MPI_Datatype, int, int, MPI_Comm comm) {
  return unsupported(comm, "gddt_send_enqueue");
}

GDDT_EXPORT int gddt_recv_enqueue(void*, int, MPI_Datatype, int, int, MPI_Comm comm, MPI_Status*) {
  return unsupported(comm, "gddt_recv_enqueue");
}

GDDT_EXPORT int gddt_isend_enqueue(const void*, int, MPI_Datatype, int, int, MPI_Comm comm, gddt_stream_request_t*) {
  return unsupported(comm, "gddt_isend_enqueue");
}

GDDT_EXPORT int gddt_irecv_enqueue(void*, int, MPI_Datatype, int, int, MPI_Comm comm, gddt_stream_request_t*) {
  return unsupported(comm, "gddt_irecv_enqueue");
}

GDDT_EXPORT int gddt_wait_enqueue(gddt_stream_request_t*, MPI_Status*) {
  return unsupported(MPI_COMM_SELF, "gddt_wait_enqueue");
}

GDDT_EXPORT int gddt_waitall_enqueue(int, gddt_stream_request_t*, MPI_Status*) {
  return unsupported(MPI_COMM_SELF, "gddt_waitall_enqueue");
}

}  // extern "C"
