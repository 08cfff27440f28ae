// Himeno, kernel-initiated: one persistent cooperative kernel runs every iteration. Block 0
// exchanges the faces of p with gddt_irecv/gddt_isend/gddt_waitall (block scope: its threads
// pack and unpack the subarray faces) while the others wait at the grid barrier; all blocks
// run the Jacobi tiles; block 0 sums the residual with gddt_allreduce while the others copy.
//
//   mpiexec -n 2 gddt-bench-himeno-kernel [XS|S|M|L] [iterations] [blocks]
//
// blocks: one per multiprocessor by default, fewer where ranks share a GPU (all must fit).
#include <cooperative_groups.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "gddt/gddt_device.h"
#include "himeno_common.cuh"

using namespace himeno;
namespace cg = cooperative_groups;

namespace {

struct DeviceFaces {
  gddt_device_type_t recv_lo, recv_hi, send_lo, send_hi;
  int lo, hi;
};

// One phase of the exchange, by the calling block; neighbours beyond the domain are skipped.
__device__ int exchange(float* p, const DeviceFaces& f, gddt_device_comm_t comm) {
  __shared__ gddt_device_request_t requests[4];
  __shared__ gddt_device_status_t statuses[4];
  int n = 0, rc = MPI_SUCCESS;
  if (f.lo >= 0) rc = gddt_irecv(p, 1, f.recv_lo, f.lo, 0, comm, &requests[n++], GDDT_SCOPE_BLOCK);
  if (rc == MPI_SUCCESS && f.hi >= 0) rc = gddt_irecv(p, 1, f.recv_hi, f.hi, 1, comm, &requests[n++], GDDT_SCOPE_BLOCK);
  if (rc == MPI_SUCCESS && f.lo >= 0) rc = gddt_isend(p, 1, f.send_lo, f.lo, 1, comm, &requests[n++], GDDT_SCOPE_BLOCK);
  if (rc == MPI_SUCCESS && f.hi >= 0) rc = gddt_isend(p, 1, f.send_hi, f.hi, 0, comm, &requests[n++], GDDT_SCOPE_BLOCK);
  if (rc == MPI_SUCCESS && n > 0) rc = gddt_waitall(comm, n, requests, statuses, GDDT_SCOPE_BLOCK);
  return rc;
}

__global__ void himeno_kernel(Grid g, float* p, float* wrk2, double* partial, double* scalars, DeviceFaces k_faces,
                              DeviceFaces j_faces, gddt_device_comm_t comm, int* error) {
  cg::grid_group grid = cg::this_grid();
  for (int it = 0; it < g.iterations; ++it) {
    if (blockIdx.x == 0) {
      int rc = exchange(p, k_faces, comm);
      if (rc == MPI_SUCCESS) rc = exchange(p, j_faces, comm);
      if (rc != MPI_SUCCESS && threadIdx.x == 0) *error = rc;
    }
    grid.sync();
    for (int tile = blockIdx.x; tile < g.ntiles; tile += gridDim.x) jacobi_tile(g, p, wrk2, partial, tile);
    grid.sync();
    if (blockIdx.x == 0) {
      if (threadIdx.x == 0) scalars[0] = sum_partials(partial, g.ntiles);
      __syncthreads();
      const int rc =
          gddt_allreduce(scalars, scalars + 1, 1, GDDT_DEVICE_DOUBLE, GDDT_DEVICE_SUM, comm, GDDT_SCOPE_BLOCK);
      if (rc != MPI_SUCCESS && threadIdx.x == 0) *error = rc;
    }
    copy_back(g, p, wrk2, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x);
    grid.sync();
  }
}

DeviceFaces device_faces(MPI_Datatype recv_lo, MPI_Datatype recv_hi, MPI_Datatype send_lo, MPI_Datatype send_hi, int lo,
                         int hi) {
  DeviceFaces f{};
  MPI_Datatype types[4] = {recv_lo, recv_hi, send_lo, send_hi};
  gddt_device_type_t* out[4] = {&f.recv_lo, &f.recv_hi, &f.send_lo, &f.send_hi};
  for (int i = 0; i < 4; ++i)
    HIMENO_CHECK(gddt_device_type_create(types[i], out[i]) == MPI_SUCCESS, "gddt_device_type_create");
  f.lo = lo == MPI_PROC_NULL ? -1 : lo;
  f.hi = hi == MPI_PROC_NULL ? -1 : hi;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Grid g = make_grid(argc, argv);
  Faces f = make_faces(g);
  float *p, *wrk2;
  make_arrays(g, &p, &wrk2);
  double* partial = device_partials(g);
  double* scalars = nullptr;
  int* error = nullptr;
  cudaMalloc(&scalars, 2 * sizeof(double));
  cudaMalloc(&error, sizeof(int));
  cudaMemset(error, 0, sizeof(int));
  gddt_device_comm_t comm;
  HIMENO_CHECK(gddt_device_comm_create(g.cart, &comm) == MPI_SUCCESS, "gddt_device_comm_create");
  DeviceFaces k_faces = device_faces(f.recv_lo_k, f.recv_hi_k, f.send_lo_k, f.send_hi_k, g.lo_k, g.hi_k);
  DeviceFaces j_faces = device_faces(f.recv_lo_j, f.recv_hi_j, f.send_lo_j, f.send_hi_j, g.lo_j, g.hi_j);
  // Every block resident at once (a grid barrier needs it), at most one per tile.
  int device = 0, sms = 0, per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, himeno_kernel, kThreads, 0);
  // Ranks sharing this GPU (two ranks on one GPU under MPS) run their grids side by side, each
  // waiting at its barrier for the others' faces: together they must fit, or the last to launch
  // never starts. A GPU is known by its UUID: device numbers depend on each process's
  // CUDA_VISIBLE_DEVICES.
  MPI_Comm node;
  int node_ranks = 1, sharing = 0;
  MPI_Comm_split_type(g.cart, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &node_ranks);
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, device);
  std::vector<cudaUUID_t> uuids(node_ranks);
  MPI_Allgather(&properties.uuid, sizeof(cudaUUID_t), MPI_BYTE, uuids.data(), sizeof(cudaUUID_t), MPI_BYTE, node);
  for (const cudaUUID_t& uuid : uuids) sharing += std::memcmp(&uuid, &properties.uuid, sizeof uuid) == 0;
  MPI_Comm_free(&node);
  int blocks = argc > 3 ? std::atoi(argv[3]) : std::min(sms, std::max(1, sms * per_sm / sharing));
  blocks = std::min({blocks, sms * per_sm, g.ntiles});
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  void* args[] = {&g, &p, &wrk2, &partial, &scalars, &k_faces, &j_faces, &comm, &error};
  MPI_Barrier(g.cart);
  const double start = MPI_Wtime();
  HIMENO_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(himeno_kernel), blocks, kThreads, args, 0, stream) ==
                   cudaSuccess,
               "the cooperative launch");
  // Runs gddt's proxy while waiting, which an MPI without MPI_THREAD_MULTIPLE needs.
  HIMENO_CHECK(gddt_device_stream_synchronize(stream) == MPI_SUCCESS, "the persistent kernel");
  const double seconds = MPI_Wtime() - start;
  int failed = 0;
  double gosa = 0.0;
  cudaMemcpy(&failed, error, sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(&gosa, scalars + 1, sizeof(double), cudaMemcpyDeviceToHost);
  HIMENO_CHECK(failed == MPI_SUCCESS, "a device MPI call");
  report(g, "kernel", seconds, gosa);
  for (DeviceFaces* d : {&k_faces, &j_faces})
    for (gddt_device_type_t* t : {&d->recv_lo, &d->recv_hi, &d->send_lo, &d->send_hi}) gddt_device_type_free(t);
  gddt_device_comm_free(&comm);
  free_faces(&f);
  cudaFree(p), cudaFree(wrk2), cudaFree(partial), cudaFree(scalars), cudaFree(error);
  cudaStreamDestroy(stream);
  MPI_Comm_free(&g.cart);
  MPI_Finalize();
  return 0;
}
