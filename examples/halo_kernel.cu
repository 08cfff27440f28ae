// Kernel-initiated halo exchange with gddt's device API: a 2-D grid split into slabs of columns
// across ranks, Jacobi sweeps and the exchange of the column faces (an MPI_Type_vector: the
// faces are strided) all inside one kernel, with no launch or host synchronization per sweep.
//
// The grid starts as gx + 2y (gx the global column), a harmonic function that Jacobi keeps
// exactly, except that the ghost columns start empty: only correct halos leave every cell as it
// was, which the kernel counts at the end with gddt_allreduce.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "gddt/gddt_device.h"

constexpr int kNx = 64;          // interior columns per rank
constexpr int kNy = 48;          // rows; the first and last are fixed boundary
constexpr int kPitch = kNx + 2;  // a ghost column at each end
constexpr int kIters = 200;

__host__ __device__ double exact(int gx, int y) { return gx + 2.0 * y; }

// One block, so that __syncthreads orders each sweep against the next exchange; a multi-block
// version would need a grid-wide barrier (a cooperative launch) there instead. Every call is at
// block scope: all threads pack and unpack the faces.
__global__ void jacobi(gddt_device_comm_t comm, gddt_device_type_t column, double *u, double *v, int *wrong) {
  // The outer ranks have MPI_PROC_NULL neighbours: their fixed ghost columns are never touched.
  const int left = comm.rank > 0 ? comm.rank - 1 : MPI_PROC_NULL;
  const int right = comm.rank < comm.size - 1 ? comm.rank + 1 : MPI_PROC_NULL;
  for (int it = 0; it < kIters; ++it) {
    gddt_device_request_t req[4];
    gddt_irecv(u, 1, column, left, 0, comm, &req[0], GDDT_SCOPE_BLOCK);
    gddt_irecv(u + kNx + 1, 1, column, right, 1, comm, &req[1], GDDT_SCOPE_BLOCK);
    gddt_isend(u + 1, 1, column, left, 1, comm, &req[2], GDDT_SCOPE_BLOCK);
    gddt_isend(u + kNx, 1, column, right, 0, comm, &req[3], GDDT_SCOPE_BLOCK);
    if (gddt_waitall(comm, 4, req, nullptr, GDDT_SCOPE_BLOCK) != MPI_SUCCESS) {
      if (threadIdx.x == 0) *wrong = -1;
      return;  // every thread got the same error class
    }
    for (int c = threadIdx.x; c < kNx * (kNy - 2); c += blockDim.x) {
      const int at = (1 + c / kNx) * kPitch + 1 + c % kNx;
      v[at] = 0.25 * (u[at - 1] + u[at + 1] + u[at - kPitch] + u[at + kPitch]);
    }
    __syncthreads();
    double *t = u;
    u = v;
    v = t;
  }
  __shared__ int bad;
  if (threadIdx.x == 0) bad = 0;
  __syncthreads();
  for (int c = threadIdx.x; c < kNx * kNy; c += blockDim.x)
    if (u[(c / kNx) * kPitch + 1 + c % kNx] != exact(comm.rank * kNx + c % kNx, c / kNx)) atomicAdd(&bad, 1);
  __syncthreads();
  gddt_allreduce(&bad, wrong, 1, GDDT_DEVICE_INT, GDDT_DEVICE_SUM, comm, GDDT_SCOPE_BLOCK);
}

int main(int argc, char **argv) {
  // MPI_THREAD_MULTIPLE lets gddt run its proxy on a thread of its own.
  int provided = 0, rank = 0, size = 1, devices = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int usable = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0, all_usable = 0;
  MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_usable) {
    if (rank == 0) std::printf("halo_kernel: skipped: no GPU\n");
    MPI_Finalize();
    return 0;
  }
  cudaSetDevice(rank % devices);

  // Ghost columns start at zero, except the fixed outer ones at the ends of the global grid.
  std::vector<double> grid(static_cast<size_t>(kPitch) * kNy, 0.0);
  for (int y = 0; y < kNy; ++y)
    for (int i = 0; i < kPitch; ++i) {
      const bool ghost = (i == 0 && rank > 0) || (i == kPitch - 1 && rank < size - 1);
      if (!ghost) grid[y * kPitch + i] = exact(rank * kNx + i - 1, y);
    }
  double *u, *v;
  int *wrong;
  cudaMalloc(&u, grid.size() * sizeof(double));
  cudaMalloc(&v, grid.size() * sizeof(double));
  cudaMalloc(&wrong, sizeof(int));
  cudaMemcpy(u, grid.data(), grid.size() * sizeof(double), cudaMemcpyHostToDevice);
  cudaMemcpy(v, grid.data(), grid.size() * sizeof(double), cudaMemcpyHostToDevice);

  // Handles made once on the host from ordinary MPI ones.
  MPI_Datatype column;
  MPI_Type_vector(kNy, 1, kPitch, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);
  gddt_device_type_t dcolumn;
  gddt_device_comm_t dcomm;
  gddt_device_type_create(column, &dcolumn);
  gddt_device_comm_create(MPI_COMM_WORLD, &dcomm);

  // A non-blocking stream: gddt's own GPU work waits for the legacy default stream.
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  const double start = MPI_Wtime();
  jacobi<<<1, 256, 0, stream>>>(dcomm, dcolumn, u, v, wrong);
  gddt_device_stream_synchronize(stream);  // also runs the proxy when it has no thread
  const double seconds = MPI_Wtime() - start;

  int bad = 0;
  cudaMemcpy(&bad, wrong, sizeof bad, cudaMemcpyDeviceToHost);
  if (rank == 0)
    std::printf("%d ranks, %d sweeps of a %dx%d grid: %.1f us per sweep, %d wrong cell(s)\n", size, kIters, kNx * size,
                kNy, 1e6 * seconds / kIters, bad);

  gddt_device_comm_free(&dcomm);
  gddt_device_type_free(&dcolumn);
  MPI_Type_free(&column);
  cudaStreamDestroy(stream);
  cudaFree(u);
  cudaFree(v);
  cudaFree(wrong);
  MPI_Finalize();
  return bad == 0 ? 0 : 1;
}
