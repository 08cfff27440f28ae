// A program's own CUDA objects outlive its exchanges through gddt: a 3-D halo exchange of
// subarray faces in device memory with persistent requests, then, after MPI_Finalize, the
// program synchronizes and destroys its own events and streams, frees its memory and resets the
// device, every call checked. With --at-exit the same teardown runs in an atexit handler, as a
// program's static objects do; with --reset-before-finalize the program resets the device before
// MPI_Finalize instead, which gddt must survive. An unmodified MPI + CUDA program: gddt is
// preloaded (or linked). Skipped without a GPU (a "skipped:" line, exit 0).
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int kN = 24;  // interior points per dimension
constexpr int kSide = kN + 2;
constexpr int kRounds = 8;

bool ok(cudaError_t error, const char* what, int rank) {
  if (error == cudaSuccess) return true;
  std::printf("cuda_teardown: rank %d: %s: %s\n", rank, what, cudaGetErrorString(error));
  return false;
}

// Whole numbers, exact in a double, so the host computes what the kernel wrote.
__host__ __device__ double value(int rank, int round, size_t i) { return rank * 1e7 + round * 1e5 + double(i); }

__global__ void fill(double* grid, int rank, int round) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kSide * kSide * kSide) grid[i] = value(rank, round, i);
}

// The x faces: the first interior plane goes to the next rank, the halo plane x=0 comes from
// the previous one.
MPI_Datatype x_face(int x) {
  const int sizes[] = {kSide, kSide, kSide}, subsizes[] = {1, kN, kN}, starts[] = {x, 1, 1};
  MPI_Datatype face;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &face);
  MPI_Type_commit(&face);
  return face;
}

}  // namespace

// The program's CUDA objects, for the teardown after MPI_Finalize.
struct Objects {
  int rank = 0;
  double* grid = nullptr;
  cudaStream_t compute = nullptr, copies = nullptr;
  cudaEvent_t filled = nullptr, timing = nullptr;
};
Objects objects;

bool teardown() {
  const Objects& o = objects;
  return ok(cudaEventSynchronize(o.filled), "cudaEventSynchronize after MPI_Finalize", o.rank) &&
         ok(cudaEventDestroy(o.filled), "cudaEventDestroy", o.rank) && ok(cudaEventDestroy(o.timing), "cudaEventDestroy", o.rank) &&
         ok(cudaStreamSynchronize(o.compute), "cudaStreamSynchronize", o.rank) &&
         ok(cudaStreamDestroy(o.compute), "cudaStreamDestroy", o.rank) &&
         ok(cudaStreamDestroy(o.copies), "cudaStreamDestroy", o.rank) && ok(cudaFree(o.grid), "cudaFree", o.rank) &&
         ok(cudaDeviceReset(), "cudaDeviceReset", o.rank);
}

void teardown_at_exit() {
  const bool good = teardown();
  std::printf("cuda_teardown: rank %d: teardown at exit %s\n", objects.rank, good ? "ok" : "FAILED");
  std::fflush(stdout);
  if (!good) std::_Exit(1);
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const bool reset_before = mode == "--reset-before-finalize";
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, devices = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Every rank skips together: one leaving alone would keep the others waiting for it.
  int usable = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 ? 1 : 0, all_usable = 0;
  MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_usable) {
    if (rank == 0) std::printf("cuda_teardown: skipped: no GPU\n");
    MPI_Finalize();
    return 0;  // the line above skips the test (gddt_add_mpi_test)
  }
  bool good = ok(cudaSetDevice(rank % devices), "cudaSetDevice", rank);
  const size_t points = size_t{kSide} * kSide * kSide;
  objects.rank = rank;
  double*& grid = objects.grid;
  cudaStream_t &compute = objects.compute, &copies = objects.copies;
  cudaEvent_t &filled = objects.filled, &timing = objects.timing;
  good = good && ok(cudaMalloc(&grid, points * sizeof(double)), "cudaMalloc", rank) &&
         ok(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), "cudaStreamCreate", rank) &&
         ok(cudaStreamCreate(&copies), "cudaStreamCreate", rank) && ok(cudaEventCreate(&filled), "cudaEventCreate", rank) &&
         ok(cudaEventCreate(&timing), "cudaEventCreate", rank);

  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Datatype send_face = x_face(kN), recv_face = x_face(0);
  MPI_Request requests[2];
  MPI_Recv_init(grid, 1, recv_face, prev, 7, MPI_COMM_WORLD, &requests[0]);
  MPI_Send_init(grid, 1, send_face, next, 7, MPI_COMM_WORLD, &requests[1]);
  std::vector<double> host(points);
  int wrong = 0;
  for (int round = 0; round < kRounds && good; ++round) {
    fill<<<static_cast<unsigned>((points + 255) / 256), 256, 0, compute>>>(grid, rank, round);
    good = ok(cudaGetLastError(), "fill", rank) && ok(cudaEventRecord(filled, compute), "cudaEventRecord", rank) &&
           ok(cudaEventSynchronize(filled), "cudaEventSynchronize", rank);
    MPI_Startall(2, requests);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    good = good && ok(cudaEventRecord(timing, copies), "cudaEventRecord", rank) &&
           ok(cudaMemcpyAsync(host.data(), grid, points * sizeof(double), cudaMemcpyDeviceToHost, copies),
              "cudaMemcpyAsync", rank) &&
           ok(cudaStreamSynchronize(copies), "cudaStreamSynchronize", rank);
    for (int y = 1; y <= kN && good; ++y)
      for (int z = 1; z <= kN; ++z) {
        const size_t at = (size_t{0} * kSide + y) * kSide + z, from = (size_t{kN} * kSide + y) * kSide + z;
        if (host[at] != value(prev, round, from)) ++wrong;
      }
  }
  MPI_Request_free(&requests[0]);
  MPI_Request_free(&requests[1]);
  MPI_Type_free(&send_face);
  MPI_Type_free(&recv_face);
  if (wrong != 0) std::printf("cuda_teardown: rank %d: %d halo values wrong\n", rank, wrong);
  good = good && wrong == 0;

  if (reset_before) {
    good = ok(cudaDeviceReset(), "cudaDeviceReset before MPI_Finalize", rank) && good;
    MPI_Finalize();
  } else if (mode == "--at-exit") {
    std::atexit(teardown_at_exit);
    MPI_Finalize();
  } else {
    MPI_Finalize();
    good = teardown() && good;
  }
  std::printf("cuda_teardown: rank %d: %s\n", rank, good ? "ok" : "FAILED");
  return good ? 0 : 1;
}
