// gddt-bench-halo: a 3-D halo exchange between two ranks, each with an n^3 float grid in device
// memory. Six interior faces (MPI_Type_create_subarray, the other two axes without their ghost
// layers) go to the peer's ghost layers, through the plain MPI calls: persistent requests with
// one MPI_Startall, and MPI_Irecv/MPI_Isend; one MPI_Waitall each. Prints the median time of an
// exchange. The received ghost layers are checked against the peer's faces before timing.
//   mpiexec -n 2 gddt-bench-halo [n] [iterations]      (defaults 128, 500)
// Run it twice with -x GDDT_PACK_SETS=0 and =1 to see what packing the faces in one launch saves.
#include <mpi.h>

#include "halo_common.hpp"

namespace {

using gddt_bench::halo::face_type;
using gddt_bench::halo::kFaces;
using gddt_bench::halo::opposite;

class Exchange {
 public:
  Exchange(float* grid, int n, int peer) : grid_(grid), peer_(peer) {
    for (int f = 0; f < kFaces; ++f) {
      interior_[f] = face_type(n, f, false);
      ghost_[f] = face_type(n, f, true);
    }
    for (int f = 0; f < kFaces; ++f) {
      MPI_Recv_init(grid_, 1, ghost_[f], peer_, f, MPI_COMM_WORLD, &persistent_[f]);
      MPI_Send_init(grid_, 1, interior_[opposite(f)], peer_, f, MPI_COMM_WORLD, &persistent_[kFaces + f]);
    }
  }
  ~Exchange() {
    for (MPI_Request& request : persistent_) MPI_Request_free(&request);
    for (int f = 0; f < kFaces; ++f) {
      MPI_Type_free(&interior_[f]);
      MPI_Type_free(&ghost_[f]);
    }
  }
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  void startall() {
    MPI_Startall(2 * kFaces, persistent_);
    MPI_Waitall(2 * kFaces, persistent_, MPI_STATUSES_IGNORE);
  }
  void nonblocking() {
    MPI_Request requests[2 * kFaces];
    for (int f = 0; f < kFaces; ++f) MPI_Irecv(grid_, 1, ghost_[f], peer_, f, MPI_COMM_WORLD, &requests[f]);
    for (int f = 0; f < kFaces; ++f)
      MPI_Isend(grid_, 1, interior_[opposite(f)], peer_, f, MPI_COMM_WORLD, &requests[kFaces + f]);
    MPI_Waitall(2 * kFaces, requests, MPI_STATUSES_IGNORE);
  }

 private:
  float* grid_;
  int peer_;
  MPI_Datatype interior_[kFaces];
  MPI_Datatype ghost_[kFaces];
  MPI_Request persistent_[2 * kFaces];
};

}  // namespace

int main(int argc, char** argv) {
  gddt_bench::halo::Grid grid;
  if (const int failed = gddt_bench::halo::start(&argc, &argv, "gddt-bench-halo", 500, 200, &grid)) return failed;
  int status = 0;
  {
    Exchange exchange(grid.device, grid.n, grid.peer);
    if (grid.rank == 0) {
      std::printf("halo exchange of %d faces of %.1f KiB (float subarrays of a %d^3 grid in device memory), 2 ranks, "
                  "one GPU each; us per exchange over %d exchanges\n",
                  kFaces, (grid.n - 2.0) * (grid.n - 2.0) * 4 / 1024, grid.n, grid.iterations);
    }
    status = gddt_bench::halo::compare(grid,
                                       {{"MPI_Startall (persistent)", [&] { exchange.startall(); }},
                                        {"MPI_Irecv + MPI_Isend", [&] { exchange.nonblocking(); }}},
                                       [] {});
  }
  cudaFree(grid.device);
  MPI_Finalize();
  return status;
}
