// Himeno, host-driven MPI + CUDA: each iteration the host exchanges the faces of p with
// MPI_Irecv/MPI_Isend/MPI_Waitall on device memory (subarray types, through gddt), launches the
// Jacobi, residual and copy kernels, waits for them and sums the residual with MPI_Allreduce.
//
//   mpiexec -n 2 gddt-bench-himeno-host [XS|S|M|L] [iterations]
#include "himeno_common.cuh"

using namespace himeno;

namespace {

void exchange(const Grid& g, float* p, MPI_Datatype recv_lo, MPI_Datatype recv_hi, MPI_Datatype send_lo,
              MPI_Datatype send_hi, int lo, int hi) {
  MPI_Request requests[4];
  MPI_Irecv(p, 1, recv_lo, lo, 0, g.cart, &requests[0]);
  MPI_Irecv(p, 1, recv_hi, hi, 1, g.cart, &requests[1]);
  MPI_Isend(p, 1, send_lo, lo, 1, g.cart, &requests[2]);
  MPI_Isend(p, 1, send_hi, hi, 0, g.cart, &requests[3]);
  MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Grid g = make_grid(argc, argv);
  Faces f = make_faces(g);
  float *p, *wrk2;
  make_arrays(g, &p, &wrk2);
  double* partial = device_partials(g);
  double *gosa_device, *gosa_host;
  cudaMalloc(&gosa_device, sizeof(double));
  cudaMallocHost(&gosa_host, sizeof(double));
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  double gosa = 0.0;
  MPI_Barrier(g.cart);
  const double start = MPI_Wtime();
  for (int it = 0; it < g.iterations; ++it) {
    exchange(g, p, f.recv_lo_k, f.recv_hi_k, f.send_lo_k, f.send_hi_k, g.lo_k, g.hi_k);
    exchange(g, p, f.recv_lo_j, f.recv_hi_j, f.send_lo_j, f.send_hi_j, g.lo_j, g.hi_j);
    jacobi_kernel<<<g.ntiles, kThreads, 0, stream>>>(g, p, wrk2, partial);
    sum_kernel<<<1, 1, 0, stream>>>(partial, g.ntiles, gosa_device);
    copy_kernel<<<g.ntiles, kThreads, 0, stream>>>(g, p, wrk2);
    cudaMemcpyAsync(gosa_host, gosa_device, sizeof(double), cudaMemcpyDeviceToHost, stream);
    HIMENO_CHECK(cudaStreamSynchronize(stream) == cudaSuccess, "an iteration's kernels");
    MPI_Allreduce(gosa_host, &gosa, 1, MPI_DOUBLE, MPI_SUM, g.cart);
  }
  const double seconds = MPI_Wtime() - start;
  report(g, "host", seconds, gosa);
  free_faces(&f);
  cudaFree(p), cudaFree(wrk2), cudaFree(partial), cudaFree(gosa_device), cudaFreeHost(gosa_host);
  cudaStreamDestroy(stream);
  MPI_Comm_free(&g.cart);
  MPI_Finalize();
  return 0;
}
