// A stream-ordered halo exchange: ranks on a ring each own a slab of a 3-D grid in GPU memory
// and trade their x faces (MPI subarray types, non-contiguous) with both neighbours every
// step. The smoothing kernel, the sends and receives (packing and unpacking included) are all
// enqueued on one CUDA stream, captured once into a graph and replayed: the host only
// launches the graph.
//
//   mpiexec -n 2 ./gddt-halo-stream [steps]
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gddt/gddt_device.h"

namespace {

constexpr int nx = 64, ny = 64, nz = 64;  // interior points per rank
constexpr int X = nx + 2, Y = ny + 2, Z = nz + 2;

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "halo_stream: %s failed\n", what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

__global__ void smooth(const double* in, double* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y + 1, z = blockIdx.z + 1;
  if (x > nx) return;
  const int i = (z * Y + y) * X + x;
  out[i] = (in[i - 1] + in[i + 1] + in[i - X] + in[i + X] + in[i - X * Y] + in[i + X * Y]) / 6.0;
}

MPI_Datatype x_face(int x) {
  const int sizes[3] = {Z, Y, X}, subsizes[3] = {nz, ny, 1}, starts[3] = {1, 1, x};
  MPI_Datatype face;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &face);
  MPI_Type_commit(&face);
  return face;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0, rank = 0, size = 1, devices = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? std::atoi(argv[1]) : 100;
  check(cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0, "finding a GPU");
  cudaSetDevice(rank % devices);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;

  std::vector<double> host(X * Y * Z, 0.0);
  for (int i = 0; i < X * Y * Z; ++i) host[i] = rank + (i % 7) * 0.125;
  double* grid[2];
  for (double*& g : grid) {
    check(cudaMalloc(&g, host.size() * sizeof(double)) == cudaSuccess, "cudaMalloc");
    cudaMemcpy(g, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice);
  }
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  // The stream communicator: every operation on it is ordered on `stream`.
  MPI_Comm comm;
  check(gddt_stream_comm_create(MPI_COMM_WORLD, stream, &comm) == MPI_SUCCESS, "gddt_stream_comm_create");
  MPI_Datatype halo_lo = x_face(0), first = x_face(1), last = x_face(nx), halo_hi = x_face(nx + 1);

  // Two steps (from grid 0 into grid 1 and back) captured once. Thread-local capture mode:
  // gddt's proxy thread keeps calling CUDA while this thread captures.
  cudaGraph_t graph;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  for (int half = 0; half < 2; ++half) {
    double* g = grid[half];
    gddt_stream_request_t requests[4];
    gddt_irecv_enqueue(g, 1, halo_lo, left, 0, comm, &requests[0]);
    gddt_irecv_enqueue(g, 1, halo_hi, right, 1, comm, &requests[1]);
    gddt_isend_enqueue(g, 1, last, right, 0, comm, &requests[2]);
    gddt_isend_enqueue(g, 1, first, left, 1, comm, &requests[3]);
    gddt_waitall_enqueue(4, requests, MPI_STATUSES_IGNORE);
    smooth<<<dim3((nx + 63) / 64, ny, nz), 64, 0, stream>>>(g, grid[1 - half]);
  }
  check(cudaStreamEndCapture(stream, &graph) == cudaSuccess, "capturing the step");
  cudaGraphExec_t exec;
  check(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "cudaGraphInstantiate");

  const double start = MPI_Wtime();
  for (int step = 0; step < steps; step += 2) cudaGraphLaunch(exec, stream);
  // Waits while running gddt's proxy, which an MPI without MPI_THREAD_MULTIPLE needs.
  check(gddt_device_stream_synchronize(stream) == MPI_SUCCESS, "gddt_device_stream_synchronize");
  const double elapsed = MPI_Wtime() - start;

  cudaMemcpy(host.data(), grid[0], host.size() * sizeof(double), cudaMemcpyDeviceToHost);
  double sum = 0.0, total = 0.0;
  for (int z = 1; z <= nz; ++z)
    for (int y = 1; y <= ny; ++y)
      for (int x = 1; x <= nx; ++x) sum += host[(z * Y + y) * X + x];
  MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("halo_stream: %d ranks, %d steps of %dx%dx%d in %.3f ms (%.1f us a step), interior sum %.6f\n", size,
                steps, nx, ny, nz, elapsed * 1e3, elapsed * 1e6 / steps, total);

  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  for (MPI_Datatype* t : {&halo_lo, &first, &last, &halo_hi}) MPI_Type_free(t);
  MPI_Comm_free(&comm);
  for (double* g : grid) cudaFree(g);
  cudaStreamDestroy(stream);
  MPI_Finalize();
  return 0;
}
