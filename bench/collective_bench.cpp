// gddt-bench-collectives: collectives on device buffers, side by side in one run.
//
// FFT pencil transpose (as 2DECOMP&FFT does it): an n^3 array of complex doubles, split in x
// across the ranks, transposed to a split in y with MPI_Alltoallw of subarray types, each rank's
// arrays in device memory. Methods:
//   gddt      MPI_Alltoallw with the subarray types, through gddt
//   pack+v    the user's workaround: cudaMemcpy2DAsync packs each peer's block, MPI_Alltoallv of
//             MPI_BYTE moves them (device buffers for a CUDA-aware library; otherwise staged by
//             cudaMemcpy through pinned host buffers), each received block lands in place
//   library   PMPI_Alltoallw with the subarray types on device memory, the library alone (only
//             under a CUDA-aware library: any other would touch device memory with the CPU)
// MPI_Allreduce of doubles on device buffers: gddt's MPI_Allreduce against the library's own
// (CUDA-aware library) or the user's staging through pinned host memory around PMPI_Allreduce.
// Every result is checked against the workaround's before timing. Times are medians over the
// iterations, each bracketed by barriers; ratios are to the workaround.
//   mpiexec -n P gddt-bench-collectives [iterations]      (default 20)
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "rank_timing.hpp"

namespace {

int rank = 0, ranks = 1;

void check_cuda(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return;
  std::fprintf(stderr, "gddt-bench-collectives: %s: %s\n", what, cudaGetErrorString(error));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// Whether the library below takes device pointers: GDDT_MPI_CUDA_AWARE=yes|no as gddt reads it,
// else MPIX_Query_cuda_support where the library found at run time has it.
bool library_cuda_aware() {
  const char* forced = std::getenv("GDDT_MPI_CUDA_AWARE");
  if (forced != nullptr && std::strcmp(forced, "auto") != 0) return std::strcmp(forced, "yes") == 0;
  using Query = int (*)();
  const auto query = reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support"));
  return query != nullptr && query() == 1;
}

// The median microseconds of `iterations` runs of `body` and the GPU work it left, the slowest
// rank's time of each.
double time_us(int iterations, const std::function<void()>& body) {
  return slowest_rank_median_us(iterations, [&] {
    body();
    check_cuda(cudaDeviceSynchronize(), "synchronize");
  });
}

bool same_on_every_rank(const void* a, const void* b, std::size_t bytes) {
  std::vector<char> ha(bytes), hb(bytes);
  check_cuda(cudaMemcpy(ha.data(), a, bytes, cudaMemcpyDeviceToHost), "download");
  check_cuda(cudaMemcpy(hb.data(), b, bytes, cudaMemcpyDeviceToHost), "download");
  int same = ha == hb, all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all != 0;
}

void transpose(int n, int iterations, bool aware) {
  const int slab = n / ranks;  // x planes before, y planes after
  const std::size_t element = 16;
  const std::size_t bytes = static_cast<std::size_t>(slab) * n * n * element;
  const std::size_t block = static_cast<std::size_t>(slab) * slab * n * element;  // per peer
  char *x_split = nullptr, *y_split = nullptr, *y_check = nullptr, *packed = nullptr;
  check_cuda(cudaMalloc(&x_split, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&y_split, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&y_check, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&packed, bytes), "cudaMalloc");
  std::vector<char> pattern(bytes);
  for (std::size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<char>((i * 131 + rank * 7) % 251);
  check_cuda(cudaMemcpy(x_split, pattern.data(), bytes, cudaMemcpyHostToDevice), "upload");
  char *host_send = nullptr, *host_receive = nullptr;
  check_cuda(cudaMallocHost(&host_send, bytes), "cudaMallocHost");
  check_cuda(cudaMallocHost(&host_receive, bytes), "cudaMallocHost");

  // Peer j gets my x planes' y range j; I get peer j's x planes into x range j of my y planes.
  std::vector<MPI_Datatype> send_types(ranks), receive_types(ranks);
  std::vector<int> ones(ranks, 1), zeros(ranks, 0), byte_counts(ranks, static_cast<int>(block)), byte_displs(ranks);
  for (int j = 0; j < ranks; ++j) {
    const int send_sizes[] = {slab, n, n}, send_sub[] = {slab, slab, n}, send_starts[] = {0, j * slab, 0};
    const int receive_sizes[] = {n, slab, n}, receive_starts[] = {j * slab, 0, 0};
    MPI_Type_create_subarray(3, send_sizes, send_sub, send_starts, MPI_ORDER_C, MPI_C_DOUBLE_COMPLEX, &send_types[j]);
    MPI_Type_create_subarray(3, receive_sizes, send_sub, receive_starts, MPI_ORDER_C, MPI_C_DOUBLE_COMPLEX,
                             &receive_types[j]);
    MPI_Type_commit(&send_types[j]);
    MPI_Type_commit(&receive_types[j]);
    byte_displs[j] = static_cast<int>(j * block);
  }
  const auto gddt = [&] {
    MPI_Alltoallw(x_split, ones.data(), zeros.data(), send_types.data(), y_split, ones.data(), zeros.data(),
                  receive_types.data(), MPI_COMM_WORLD);
  };
  const auto workaround = [&] {
    for (int j = 0; j < ranks; ++j) {
      // My x planes, y range j: slab rows of slab * n elements, one per x plane.
      check_cuda(cudaMemcpy2DAsync(packed + j * block, slab * n * element, x_split + j * slab * n * element,
                                   static_cast<std::size_t>(n) * n * element, slab * n * element, slab,
                                   cudaMemcpyDeviceToDevice),
                 "cudaMemcpy2DAsync");
    }
    if (aware) {
      check_cuda(cudaStreamSynchronize(nullptr), "pack");
      PMPI_Alltoallv(packed, byte_counts.data(), byte_displs.data(), MPI_BYTE, y_check, byte_counts.data(),
                     byte_displs.data(), MPI_BYTE, MPI_COMM_WORLD);
    } else {
      check_cuda(cudaMemcpy(host_send, packed, bytes, cudaMemcpyDeviceToHost), "stage");
      PMPI_Alltoallv(host_send, byte_counts.data(), byte_displs.data(), MPI_BYTE, host_receive, byte_counts.data(),
                     byte_displs.data(), MPI_BYTE, MPI_COMM_WORLD);
      check_cuda(cudaMemcpy(y_check, host_receive, bytes, cudaMemcpyHostToDevice), "unstage");
    }
  };
  const auto library = [&] {
    PMPI_Alltoallw(x_split, ones.data(), zeros.data(), send_types.data(), y_split, ones.data(), zeros.data(),
                   receive_types.data(), MPI_COMM_WORLD);
  };
  gddt();
  workaround();
  check_cuda(cudaDeviceSynchronize(), "check");
  const bool correct = same_on_every_rank(y_split, y_check, bytes);
  const double gddt_us = time_us(iterations, gddt), workaround_us = time_us(iterations, workaround);
  const double library_us = aware ? time_us(std::max(1, iterations / 4), library) : 0;
  if (rank == 0) {
    char library_text[64] = "not run";
    if (aware) std::snprintf(library_text, sizeof library_text, "%10.1f  %6.2fx", library_us, library_us / gddt_us);
    std::printf("transpose %4d^3  %9.1f MiB/rank  %10.1f  %10.1f  %6.2fx  %s  %s\n", n, bytes / 1048576.0, gddt_us,
                workaround_us, gddt_us / workaround_us, library_text, correct ? "ok" : "WRONG");
  }
  for (int j = 0; j < ranks; ++j) {
    MPI_Type_free(&send_types[j]);
    MPI_Type_free(&receive_types[j]);
  }
  cudaFree(x_split);
  cudaFree(y_split);
  cudaFree(y_check);
  cudaFree(packed);
  cudaFreeHost(host_send);
  cudaFreeHost(host_receive);
}

void allreduce(std::size_t doubles, int iterations, bool aware) {
  const std::size_t bytes = doubles * sizeof(double);
  double *in = nullptr, *out = nullptr, *check = nullptr, *host_in = nullptr, *host_out = nullptr;
  check_cuda(cudaMalloc(&in, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&out, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&check, bytes), "cudaMalloc");
  check_cuda(cudaMallocHost(&host_in, bytes), "cudaMallocHost");
  check_cuda(cudaMallocHost(&host_out, bytes), "cudaMallocHost");
  std::vector<double> values(doubles);
  for (std::size_t i = 0; i < doubles; ++i) values[i] = static_cast<double>((i + rank) % 1000);
  check_cuda(cudaMemcpy(in, values.data(), bytes, cudaMemcpyHostToDevice), "upload");
  const int count = static_cast<int>(doubles);
  const auto gddt = [&] { MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); };
  const auto baseline = [&] {
    if (aware) {
      PMPI_Allreduce(in, check, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      return;
    }
    check_cuda(cudaMemcpy(host_in, in, bytes, cudaMemcpyDeviceToHost), "stage");
    PMPI_Allreduce(host_in, host_out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    check_cuda(cudaMemcpy(check, host_out, bytes, cudaMemcpyHostToDevice), "unstage");
  };
  gddt();
  baseline();
  const bool correct = same_on_every_rank(out, check, bytes);
  const double gddt_us = time_us(iterations, gddt), baseline_us = time_us(iterations, baseline);
  if (rank == 0)
    std::printf("allreduce %10zu B  %10.1f  %10.1f  %6.2fx  %s\n", bytes, gddt_us, baseline_us, gddt_us / baseline_us,
                correct ? "ok" : "WRONG");
  cudaFree(in);
  cudaFree(out);
  cudaFree(check);
  cudaFreeHost(host_in);
  cudaFreeHost(host_out);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    if (rank == 0) std::printf("gddt-bench-collectives: no GPU\n");
    MPI_Finalize();
    return 0;
  }
  check_cuda(cudaSetDevice(rank % devices), "cudaSetDevice");
  const bool aware = library_cuda_aware();
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  if (rank == 0) {
    std::printf("%d ranks, %d GPU(s), library %.60s, CUDA-aware: %s, %d iterations\n", ranks, devices, version,
                aware ? "yes" : "no", iterations);
    std::printf("%-16s  %14s  %10s  %10s  %7s  %18s  %s\n", "case", "data", "gddt us", "pack+v us", "gddt/", "library us, /gddt",
                "check");
  }
  for (int n : {64, 128, 256})
    if (n % ranks == 0) transpose(n, iterations, aware);
  if (rank == 0) std::printf("%-16s  %10s  %10s  %7s  %s\n", "case", "gddt us", "baseline us", "gddt/", "check");
  for (std::size_t doubles = 1; doubles <= (std::size_t{8} << 20); doubles *= 16) allreduce(doubles, iterations, aware);
  MPI_Finalize();
  return 0;
}
