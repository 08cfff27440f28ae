#include "exchange.hpp"
#include "subarray.hpp"

namespace halo3d {
namespace {

constexpr int kBlocks = 6;  // a Cartesian communicator's neighbours: -x, +x, -y, +y, -z, +z

class CartesianExchange final : public Exchange {
 public:
  CartesianExchange(const Domain& d, MPI_Comm comm) {
    MPI_Comm_dup(comm, &comm_);
    for (int axis = 0; axis < 3; ++axis)
      for (int block = 0; block < kBlocks; ++block) {
        const bool moves = block / 2 == axis;
        counts_[axis][block] = moves ? 1 : 0;
        send_[axis][block] = moves ? apps::subarray(d.array(), face(d, block, false), MPI_DOUBLE) : MPI_DOUBLE;
        recv_[axis][block] = moves ? apps::subarray(d.array(), face(d, block, true), MPI_DOUBLE) : MPI_DOUBLE;
      }
  }
  ~CartesianExchange() override {
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side) MPI_Type_free(&send_[axis][2 * axis + side]), MPI_Type_free(&recv_[axis][2 * axis + side]);
    MPI_Comm_free(&comm_);
  }

  // An axis at a time: the faces of the later axes span the ghost layers the earlier ones filled,
  // which carries the edges and corners over two or three hops.
  void run(double* block) override {
    for (int axis = 0; axis < 3; ++axis)
      MPI_Neighbor_alltoallw(block, counts_[axis], zeros_, send_[axis], block, counts_[axis], zeros_, recv_[axis], comm_);
  }

 private:
  // Block b's face: axis b / 2, low side for even b; whole (ghosts too) along the earlier axes.
  static apps::Box face(const Domain& d, int b, bool ghost) {
    Direction side{0, 0, 0};
    side[b / 2] = b % 2 == 0 ? -1 : 1;
    apps::Box box = d.box(side, ghost);
    for (int earlier = 0; earlier < b / 2; ++earlier) box.start[earlier] = 0, box.size[earlier] = d.n + 2;
    return box;
  }

  MPI_Comm comm_;
  int counts_[3][kBlocks];
  MPI_Aint zeros_[kBlocks] = {0, 0, 0, 0, 0, 0};
  MPI_Datatype send_[3][kBlocks], recv_[3][kBlocks];
};

}  // namespace

std::unique_ptr<Exchange> make_cartesian_exchange(const Domain& domain, MPI_Comm comm) {
  return std::make_unique<CartesianExchange>(domain, comm);
}

}  // namespace halo3d
