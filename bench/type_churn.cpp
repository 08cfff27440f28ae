// gddt-bench-type-churn: the cost of datatypes gddt never needs to look at. Two ranks create
// derived datatypes of many blocks (vector, indexed, struct in turn), commit each, send one
// element of it on host memory, and free it, as MPI test suites and some applications do by
// the thousand. Run it without and with gddt preloaded (the program links MPI only) and
// compare the time per type: host-only traffic should cost the same.
//   mpiexec -n 2 gddt-bench-type-churn [types] [blocks]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

MPI_Datatype make_type(int index, int blocks, const std::vector<int>& lengths, const std::vector<int>& displacements,
                       const std::vector<MPI_Aint>& bytes) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  switch (index % 3) {
    case 0:
      MPI_Type_vector(blocks, 2, 3, MPI_INT, &type);
      break;
    case 1:
      MPI_Type_indexed(blocks, lengths.data(), displacements.data(), MPI_DOUBLE, &type);
      break;
    default: {
      std::vector<MPI_Datatype> members(static_cast<std::size_t>(blocks));
      for (int i = 0; i < blocks; ++i) members[static_cast<std::size_t>(i)] = i % 2 ? MPI_INT : MPI_DOUBLE;
      MPI_Type_create_struct(blocks, lengths.data(), bytes.data(), members.data(), &type);
    }
  }
  MPI_Type_commit(&type);
  return type;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int types = argc > 1 ? std::atoi(argv[1]) : 3000;
  const int blocks = argc > 2 ? std::atoi(argv[2]) : 512;
  if (size != 2 || types <= 0 || blocks <= 0) {
    if (rank == 0) std::fprintf(stderr, "usage: mpiexec -n 2 gddt-bench-type-churn [types] [blocks]\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<int> lengths(static_cast<std::size_t>(blocks)), displacements(lengths.size());
  std::vector<MPI_Aint> bytes(lengths.size());
  for (int i = 0, at = 0; i < blocks; ++i) {
    lengths[static_cast<std::size_t>(i)] = 1 + i % 3;
    displacements[static_cast<std::size_t>(i)] = at;
    bytes[static_cast<std::size_t>(i)] = static_cast<MPI_Aint>(at) * 8;
    at += 4 + i % 2;
  }
  std::vector<char> buffer(static_cast<std::size_t>(blocks) * 64 + 64);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int index = 0; index < types; ++index) {
    MPI_Datatype type = make_type(index, blocks, lengths, displacements, bytes);
    if (rank == 0) {
      MPI_Send(buffer.data(), 1, type, 1, index, MPI_COMM_WORLD);
    } else {
      MPI_Recv(buffer.data(), 1, type, 0, index, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Type_free(&type);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double seconds = MPI_Wtime() - start;
  if (rank == 0)
    std::printf("type churn: %d types of %d blocks created, committed, sent once on host memory and freed: %.2f us a type\n",
                types, blocks, 1e6 * seconds / types);
  MPI_Finalize();
  return 0;
}
