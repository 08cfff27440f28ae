// gddt-bench-receive-hole: what gddt's receive staging costs on Open MPI 4, where it is
// described by a datatype of its N bytes, a one-byte hole and one more byte instead of N
// contiguous bytes (docs/design/protocol.md, point-to-point). Host-memory ping-pong between two ranks of
// the library alone (the program links MPI only), the two receive descriptions in turns, median
// of several runs per size; prints one-way microseconds and their ratio.
//   mpiexec -n 2 gddt-bench-receive-hole [runs]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "median.hpp"

namespace {

// One-way time of `iterations` round trips of `bytes`, receives described by `type` (count 1)
// or as contiguous bytes when `type` is MPI_DATATYPE_NULL.
double one_way_us(int rank, int bytes, int iterations, MPI_Datatype type, std::vector<char>& out,
                  std::vector<char>& in) {
  auto receive = [&](int from) {
    if (type == MPI_DATATYPE_NULL) {
      MPI_Recv(in.data(), bytes, MPI_BYTE, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(in.data(), 1, type, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  };
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) {
    if (rank == 0) {
      MPI_Send(out.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      receive(1);
    } else {
      receive(0);
      MPI_Send(out.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - start) / iterations / 2 * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int runs = argc > 1 ? std::atoi(argv[1]) : 7;
  if (rank == 0) std::printf("%10s %14s %14s %8s\n", "bytes", "contiguous us", "holed us", "ratio");
  for (int bytes : {1024, 16384, 65536, 262144, 1048576, 4194304}) {
    MPI_Datatype holed;
    const int lengths[] = {bytes, 1};
    const MPI_Aint displacements[] = {0, static_cast<MPI_Aint>(bytes) + 1};
    MPI_Type_create_hindexed(2, lengths, displacements, MPI_BYTE, &holed);
    MPI_Type_commit(&holed);
    std::vector<char> out(static_cast<std::size_t>(bytes), 1), in(static_cast<std::size_t>(bytes) + 2);
    const int iterations = std::max(20, (64 << 20) / bytes / 8);
    std::vector<double> contiguous, holes;
    one_way_us(rank, bytes, iterations, MPI_DATATYPE_NULL, out, in);  // warm-up
    for (int run = 0; run < runs; ++run) {
      contiguous.push_back(one_way_us(rank, bytes, iterations, MPI_DATATYPE_NULL, out, in));
      holes.push_back(one_way_us(rank, bytes, iterations, holed, out, in));
    }
    if (rank == 0)
      std::printf("%10d %14.2f %14.2f %8.2f\n", bytes, median(contiguous), median(holes),
                  median(holes) / median(contiguous));
    MPI_Type_free(&holed);
  }
  MPI_Finalize();
  return 0;
}
