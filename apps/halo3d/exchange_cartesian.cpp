#include "exchange.hpp"
#include "subarray.hpp"

namespace halo3d {
namespace {

constexpr int kBlocks = 6;  // a Cartesian communicator's neighbours: -x, +x, -y, +y, -z, +z

class CartesianExchange final : public Exchange {
 public:
  // 7 points: one call moves the six faces. 27: a call an axis, whose faces span the ghost layers
  // the calls before filled, which carries the edges and corners over two or three hops.
  CartesianExchange(const Domain& d, MPI_Comm comm) : calls_(d.points == 7 ? 1 : 3) {
    MPI_Comm_dup(comm, &comm_);
    for (int call = 0; call < calls_; ++call)
      for (int block = 0; block < kBlocks; ++block) {
        const bool moves = calls_ == 1 || block / 2 == call;
        counts_[call][block] = moves ? 1 : 0;
        send_[call][block] = moves ? apps::subarray(d.array(), face(d, block, false), MPI_DOUBLE) : MPI_DOUBLE;
        recv_[call][block] = moves ? apps::subarray(d.array(), face(d, block, true), MPI_DOUBLE) : MPI_DOUBLE;
      }
  }
  ~CartesianExchange() override {
    for (int call = 0; call < calls_; ++call)
      for (int block = 0; block < kBlocks; ++block)
        if (counts_[call][block] == 1) MPI_Type_free(&send_[call][block]), MPI_Type_free(&recv_[call][block]);
    MPI_Comm_free(&comm_);
  }

  void run(double* block) override {
    for (int call = 0; call < calls_; ++call)
      MPI_Neighbor_alltoallw(block, counts_[call], zeros_, send_[call], block, counts_[call], zeros_, recv_[call],
                             comm_);
  }

 private:
  // Block b's face: axis b / 2, the low side for even b; for 27 points whole (ghosts too) along the
  // earlier axes.
  apps::Box face(const Domain& d, int b, bool ghost) const {
    Direction side{0, 0, 0};
    side[b / 2] = b % 2 == 0 ? -1 : 1;
    apps::Box box = d.box(side, ghost);
    for (int earlier = 0; calls_ > 1 && earlier < b / 2; ++earlier) box.start[earlier] = 0, box.size[earlier] = d.n + 2;
    return box;
  }

  int calls_;
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
