// gddt-bench-onesided-halo: the 3-D halo exchange of gddt-bench-halo (two ranks, an n^3 float
// grid in device memory, six interior faces as MPI_Type_create_subarray into the peer's ghost
// layers) by one-sided communication against point-to-point:
//   MPI_Irecv + MPI_Isend            the point-to-point exchange, the baseline of the ratios
//   fence, subarray puts             a window over the grid; MPI_Win_fence, six MPI_Put of the
//                                    faces (origin and target subarrays), MPI_Win_fence
//   fence + assertions               the same with MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE opening
//                                    and MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED closing, which
//                                    spare gddt all but the pass that brings the peer's puts in
//   PSCW, subarray puts              MPI_Win_post/start, six puts, MPI_Win_complete/wait
//   packed, one contiguous put       the faces packed by hand (MPI_Pack on the GPU) into one
//                                    contiguous buffer, one MPI_Put of its bytes into a window
//                                    over the peer's contiguous receive buffer (fence), unpacked
//                                    into the ghost layers (MPI_Unpack)
// Between gddt processes of one node the window is reached through CUDA IPC (GDDT_RMA_IPC): each
// put is one kernel into the peer's grid. Otherwise it is a host public copy for the library: each
// epoch gddt merges the peer's puts into the grid (a pass over the whole window: it grows with n^3,
// not with the faces) and, unless MPI_MODE_NOSTORE says there were none, this rank's stores into
// the public copy.
// Prints the median, 10th and 90th percentile of an exchange and its ratio to point-to-point.
// Every method's ghost layers are checked against the peer's faces before it is timed.
//   mpiexec -n 2 gddt-bench-onesided-halo [n] [iterations]      (defaults 128, 300)
#include <mpi.h>

#include "halo_common.hpp"

namespace {

using gddt_bench::halo::cuda_ok;
using gddt_bench::halo::face_type;
using gddt_bench::halo::kFaces;
using gddt_bench::halo::opposite;

class Exchange {
 public:
  Exchange(float* grid, int n, int peer) : grid_(grid), peer_(peer), face_bytes_((n - 2) * (n - 2) * 4) {
    for (int f = 0; f < kFaces; ++f) {
      interior_[f] = face_type(n, f, false);
      ghost_[f] = face_type(n, f, true);
    }
    const MPI_Aint grid_bytes = static_cast<MPI_Aint>(n) * n * n * sizeof(float);
    MPI_Win_create(grid_, grid_bytes, sizeof(float), MPI_INFO_NULL, MPI_COMM_WORLD, &grid_win_);
    cuda_ok(cudaMalloc(&packed_, kFaces * face_bytes_), "cudaMalloc");
    cuda_ok(cudaMalloc(&received_, kFaces * face_bytes_), "cudaMalloc");
    MPI_Win_create(received_, kFaces * face_bytes_, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &packed_win_);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer_, &peer_group_);
    MPI_Group_free(&world);
  }
  ~Exchange() {
    MPI_Win_free(&grid_win_);
    MPI_Win_free(&packed_win_);
    MPI_Group_free(&peer_group_);
    cudaFree(packed_);
    cudaFree(received_);
    for (int f = 0; f < kFaces; ++f) {
      MPI_Type_free(&interior_[f]);
      MPI_Type_free(&ghost_[f]);
    }
  }
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  // The grid's bytes were stored anew (outside any epoch): a fence that opens none makes them its
  // window's, so that the assertions of the timed exchanges hold.
  void stored() { MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, grid_win_); }

  void point_to_point() {
    MPI_Request requests[2 * kFaces];
    for (int f = 0; f < kFaces; ++f) MPI_Irecv(grid_, 1, ghost_[f], peer_, f, MPI_COMM_WORLD, &requests[f]);
    for (int f = 0; f < kFaces; ++f)
      MPI_Isend(grid_, 1, interior_[opposite(f)], peer_, f, MPI_COMM_WORLD, &requests[kFaces + f]);
    MPI_Waitall(2 * kFaces, requests, MPI_STATUSES_IGNORE);
  }
  void puts() {
    for (int f = 0; f < kFaces; ++f) MPI_Put(grid_, 1, interior_[opposite(f)], peer_, 0, 1, ghost_[f], grid_win_);
  }
  void fence() {
    MPI_Win_fence(0, grid_win_);
    puts();
    MPI_Win_fence(0, grid_win_);
  }
  void fence_asserted() {
    MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSTORE, grid_win_);
    puts();
    MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, grid_win_);
  }
  void pscw() {
    MPI_Win_post(peer_group_, 0, grid_win_);
    MPI_Win_start(peer_group_, 0, grid_win_);
    puts();
    MPI_Win_complete(grid_win_);
    MPI_Win_wait(grid_win_);
  }
  void packed() {
    // Face f of the buffer is the one the peer's ghost layer f takes.
    int position = 0;
    for (int f = 0; f < kFaces; ++f)
      MPI_Pack(grid_, 1, interior_[opposite(f)], packed_, kFaces * face_bytes_, &position, MPI_COMM_WORLD);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, packed_win_);
    MPI_Put(packed_, kFaces * face_bytes_, MPI_BYTE, peer_, 0, kFaces * face_bytes_, MPI_BYTE, packed_win_);
    MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, packed_win_);
    position = 0;
    for (int f = 0; f < kFaces; ++f)
      MPI_Unpack(received_, kFaces * face_bytes_, &position, grid_, 1, ghost_[f], MPI_COMM_WORLD);
  }

 private:
  float* grid_;
  int peer_;
  int face_bytes_;
  MPI_Datatype interior_[kFaces];
  MPI_Datatype ghost_[kFaces];
  MPI_Win grid_win_ = MPI_WIN_NULL;
  MPI_Win packed_win_ = MPI_WIN_NULL;
  MPI_Group peer_group_ = MPI_GROUP_NULL;
  void* packed_ = nullptr;
  void* received_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  gddt_bench::halo::Grid grid;
  if (const int failed = gddt_bench::halo::start(&argc, &argv, "gddt-bench-onesided-halo", 300, 400, &grid))
    return failed;
  int status = 0;
  {
    Exchange exchange(grid.device, grid.n, grid.peer);
    if (grid.rank == 0) {
      std::printf("halo exchange of %d faces of %.1f KiB (float subarrays of a %d^3 grid of %.1f MiB in device memory), "
                  "2 ranks, one GPU each; us per exchange over %d exchanges; ratio to MPI_Irecv + MPI_Isend\n",
                  kFaces, (grid.n - 2.0) * (grid.n - 2.0) * 4 / 1024, grid.n, grid.cells() * 4.0 / (1 << 20),
                  grid.iterations);
    }
    status = gddt_bench::halo::compare(grid,
                                       {{"MPI_Irecv + MPI_Isend", [&] { exchange.point_to_point(); }},
                                        {"fence, subarray puts", [&] { exchange.fence(); }},
                                        {"fence + assertions", [&] { exchange.fence_asserted(); }},
                                        {"PSCW, subarray puts", [&] { exchange.pscw(); }},
                                        {"packed, one contiguous put", [&] { exchange.packed(); }}},
                                       [&] { exchange.stored(); });
  }
  cudaFree(grid.device);
  MPI_Finalize();
  return status;
}
