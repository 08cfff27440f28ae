// Argument errors of the stream-ordered API, on the CPU: they are found at enqueue time and
// returned as MPI error classes (through MPI_ERRORS_RETURN). Built with CUDA, the checks that
// need no stream communicator run anywhere and the rest where gddt_stream_comm_create succeeds
// (a GPU); built without CUDA, every call says MPI_ERR_UNSUPPORTED_OPERATION.
#include <mpi.h>

#include <cstdio>

#include "gddt/gddt_device.h"

namespace {

int failures = 0;

void expect_class(int rc, int want, const char* what) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (cls == want) return;
  ++failures;
  std::fprintf(stderr, "FAILED %s: class %d, expected %d\n", what, cls, want);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int buf[4] = {};
  MPI_Comm comm = MPI_COMM_NULL;
  gddt_stream_request_t request = nullptr;
#ifdef GDDT_TEST_WITH_CUDA
  expect_class(gddt_stream_comm_create(MPI_COMM_NULL, nullptr, &comm), MPI_ERR_COMM, "create on MPI_COMM_NULL");
  expect_class(gddt_stream_comm_create(MPI_COMM_WORLD, nullptr, nullptr), MPI_ERR_ARG, "create without newcomm");
  expect_class(gddt_send_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COMM, "send on a plain comm");
  expect_class(gddt_recv_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_COMM,
               "recv on a plain comm");
  expect_class(gddt_isend_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, nullptr), MPI_ERR_ARG,
               "isend without a request");
  expect_class(gddt_wait_enqueue(nullptr, MPI_STATUS_IGNORE), MPI_ERR_ARG, "wait without a request");
  expect_class(gddt_wait_enqueue(&request, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "wait on a null request");
  expect_class(gddt_waitall_enqueue(-1, &request, MPI_STATUSES_IGNORE), MPI_ERR_COUNT, "waitall of -1");
  expect_class(gddt_waitall_enqueue(1, nullptr, MPI_STATUSES_IGNORE), MPI_ERR_ARG, "waitall without an array");
  expect_class(gddt_waitall_enqueue(0, nullptr, MPI_STATUSES_IGNORE), MPI_SUCCESS, "waitall of none");
  // The rest needs a stream communicator, which needs a GPU (the legacy default stream).
  if (gddt_stream_comm_create(MPI_COMM_WORLD, nullptr, &comm) == MPI_SUCCESS) {
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    expect_class(gddt_send_enqueue(buf, -1, MPI_INT, 0, 0, comm), MPI_ERR_COUNT, "negative count");
    expect_class(gddt_send_enqueue(buf, 1, MPI_DATATYPE_NULL, 0, 0, comm), MPI_ERR_TYPE, "MPI_DATATYPE_NULL");
    expect_class(gddt_send_enqueue(buf, 1, MPI_INT, size, 0, comm), MPI_ERR_RANK, "rank = size");
    expect_class(gddt_send_enqueue(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, comm), MPI_ERR_RANK, "send to any source");
    expect_class(gddt_send_enqueue(buf, 1, MPI_INT, 0, -5, comm), MPI_ERR_TAG, "negative tag");
    expect_class(gddt_send_enqueue(buf, 1, MPI_INT, 0, MPI_ANY_TAG, comm), MPI_ERR_TAG, "send with any tag");
    expect_class(gddt_send_enqueue(nullptr, 1, MPI_INT, 0, 0, comm), MPI_ERR_BUFFER, "null buffer");
    expect_class(gddt_irecv_enqueue(buf, 1, MPI_INT, -7, 0, comm, &request), MPI_ERR_RANK, "recv from -7");
    MPI_Status status;
    expect_class(gddt_recv_enqueue(buf, 1, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, comm, &status), MPI_SUCCESS,
                 "recv from MPI_PROC_NULL");
    if (status.MPI_SOURCE != MPI_PROC_NULL) expect_class(MPI_ERR_OTHER, MPI_SUCCESS, "MPI_PROC_NULL status");
    MPI_Comm_free(&comm);
  } else {
    std::printf("no stream communicator (no GPU): enqueue checks on one skipped\n");
  }
#else
  const int no = MPI_ERR_UNSUPPORTED_OPERATION;
  expect_class(gddt_stream_comm_create(MPI_COMM_WORLD, nullptr, &comm), no, "create");
  expect_class(gddt_send_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), no, "send");
  expect_class(gddt_recv_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), no, "recv");
  expect_class(gddt_isend_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &request), no, "isend");
  expect_class(gddt_irecv_enqueue(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &request), no, "irecv");
  expect_class(gddt_wait_enqueue(&request, MPI_STATUS_IGNORE), no, "wait");
  expect_class(gddt_waitall_enqueue(1, &request, MPI_STATUSES_IGNORE), no, "waitall");
#endif
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
