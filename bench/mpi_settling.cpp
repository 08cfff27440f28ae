// How many messages the MPI library itself takes to reach its steady latency: a plain
// MPI_Send/MPI_Recv ping-pong of one buffer between two ranks (gddt is not involved; link or
// preload nothing), printing the median one-way latency of each run of 100 round trips.
// Open MPI 5 + UCX moves its first ~300 host messages of 4 KiB about 5x slower than the rest,
// which is why gddt-bench warms every point up for as long as it measures it.
//   mpiexec -n 2 gddt-bench-settling [bytes] [pageable|pinned]   (default 4096 pageable)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "median.hpp"
#include "memory_buffer.hpp"

namespace {

constexpr int kRuns = 10;
constexpr int kRoundTripsPerRun = 100;

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int bytes = argc > 1 ? std::atoi(argv[1]) : 4096;
  const std::string memory = argc > 2 ? argv[2] : "pageable";
  if (size != 2 || bytes <= 0 || (memory != "pageable" && memory != "pinned")) {
    if (rank == 0) std::fprintf(stderr, "usage: mpiexec -n 2 gddt-bench-settling [bytes] [pageable|pinned]\n");
    MPI_Finalize();
    return 2;
  }
  const gddt_test::MemoryKind kind = memory == "pinned" ? gddt_test::MemoryKind::kPinned : gddt_test::MemoryKind::kHost;
  const std::string unavailable = gddt_test::prepare_memory_kind(kind);
  if (!unavailable.empty()) {
    std::fprintf(stderr, "gddt-bench-settling: %s\n", unavailable.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  gddt_test::Buffer buffer(kind, static_cast<size_t>(bytes));
  buffer.fill(1);
  const int peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("%d B, %s: one-way us, median of each %d round trips:", bytes, memory.c_str(), kRoundTripsPerRun);
  }
  std::vector<double> one_way;
  for (int run = 0; run < kRuns; ++run) {
    one_way.clear();
    for (int i = 0; i < kRoundTripsPerRun; ++i) {
      const double start = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buffer.data(), bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buffer.data(), bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      }
      one_way.push_back((MPI_Wtime() - start) / 2 * 1e6);
    }
    if (rank == 0) std::printf(" %.1f", median(one_way));
  }
  if (rank == 0) std::printf("\n");
  buffer = gddt_test::Buffer();  // freed while MPI, which may cache a registration of it, is up
  MPI_Finalize();
  return 0;
}
