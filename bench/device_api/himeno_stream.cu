// Himeno, stream-ordered: every iteration (the face exchanges through gddt_*_enqueue, the
// Jacobi and copy kernels, and a one-block kernel summing the residual with gddt_allreduce) is
// enqueued on one stream, captured once into a CUDA graph and replayed; the host waits once.
//
//   mpiexec -n 2 gddt-bench-himeno-stream [XS|S|M|L] [iterations] [nograph]
#include "gddt/gddt_device.h"
#include "himeno_common.cuh"

using namespace himeno;

namespace {

// The residual of the iteration: this rank's tiles in order, then summed over the ranks.
__global__ void allreduce_kernel(const double* partial, int ntiles, double* local, double* gosa,
                                 gddt_device_comm_t comm) {
  if (threadIdx.x == 0) *local = sum_partials(partial, ntiles);
  __syncthreads();
  gddt_allreduce(local, gosa, 1, GDDT_DEVICE_DOUBLE, GDDT_DEVICE_SUM, comm, GDDT_SCOPE_BLOCK);
}

void exchange(MPI_Comm comm, float* p, MPI_Datatype recv_lo, MPI_Datatype recv_hi, MPI_Datatype send_lo,
              MPI_Datatype send_hi, int lo, int hi) {
  gddt_stream_request_t requests[4];
  gddt_irecv_enqueue(p, 1, recv_lo, lo, 0, comm, &requests[0]);
  gddt_irecv_enqueue(p, 1, recv_hi, hi, 1, comm, &requests[1]);
  gddt_isend_enqueue(p, 1, send_lo, lo, 1, comm, &requests[2]);
  gddt_isend_enqueue(p, 1, send_hi, hi, 0, comm, &requests[3]);
  gddt_waitall_enqueue(4, requests, MPI_STATUSES_IGNORE);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Grid g = make_grid(argc, argv);
  const bool graph = !(argc > 3 && std::strcmp(argv[3], "nograph") == 0);
  Faces f = make_faces(g);
  float *p, *wrk2;
  make_arrays(g, &p, &wrk2);
  double* partial = device_partials(g);
  double* scalars = nullptr;  // this rank's residual, the sum
  cudaMalloc(&scalars, 2 * sizeof(double));
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  MPI_Comm comm;
  gddt_device_comm_t device_comm;
  HIMENO_CHECK(gddt_stream_comm_create(g.cart, stream, &comm) == MPI_SUCCESS, "gddt_stream_comm_create");
  HIMENO_CHECK(gddt_device_comm_create(g.cart, &device_comm) == MPI_SUCCESS, "gddt_device_comm_create");
  auto iteration = [&]() {
    exchange(comm, p, f.recv_lo_k, f.recv_hi_k, f.send_lo_k, f.send_hi_k, g.lo_k, g.hi_k);
    exchange(comm, p, f.recv_lo_j, f.recv_hi_j, f.send_lo_j, f.send_hi_j, g.lo_j, g.hi_j);
    jacobi_kernel<<<g.ntiles, kThreads, 0, stream>>>(g, p, wrk2, partial);
    allreduce_kernel<<<1, 32, 0, stream>>>(partial, g.ntiles, scalars, scalars + 1, device_comm);
    copy_kernel<<<g.ntiles, kThreads, 0, stream>>>(g, p, wrk2);
  };
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    cudaGraph_t captured;
    // Thread-local capture: gddt's proxy thread keeps calling CUDA meanwhile.
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    iteration();
    HIMENO_CHECK(cudaStreamEndCapture(stream, &captured) == cudaSuccess, "capturing an iteration");
    HIMENO_CHECK(cudaGraphInstantiate(&exec, captured, 0) == cudaSuccess, "cudaGraphInstantiate");
    cudaGraphDestroy(captured);
  }
  MPI_Barrier(g.cart);
  const double start = MPI_Wtime();
  for (int it = 0; it < g.iterations; ++it) {
    if (graph)
      cudaGraphLaunch(exec, stream);
    else
      iteration();
  }
  // Runs gddt's proxy while waiting, which an MPI without MPI_THREAD_MULTIPLE needs.
  HIMENO_CHECK(gddt_device_stream_synchronize(stream) == MPI_SUCCESS, "the iterations");
  const double seconds = MPI_Wtime() - start;
  double gosa = 0.0;
  cudaMemcpy(&gosa, scalars + 1, sizeof(double), cudaMemcpyDeviceToHost);
  report(g, graph ? "stream" : "stream-nograph", seconds, gosa);
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  gddt_device_comm_free(&device_comm);
  MPI_Comm_free(&comm);
  free_faces(&f);
  cudaFree(p), cudaFree(wrk2), cudaFree(partial), cudaFree(scalars);
  cudaStreamDestroy(stream);
  MPI_Comm_free(&g.cart);
  MPI_Finalize();
  return 0;
}
