#include "exchange.hpp"
#include "subarray.hpp"

namespace halo3d {
namespace {

class NeighborExchange final : public Exchange {
 public:
  NeighborExchange(const Domain& d, MPI_Comm comm) : ones_(d.directions.size(), 1), zeros_(d.directions.size(), 0) {
    const bool cartesian = d.points == 7;
    for (const Direction& dir : d.directions) {
      send_.push_back(apps::subarray(d.array(), d.interior(dir), MPI_DOUBLE));
      // A Cartesian communicator receives block i from the rank that block i goes to.
      const Direction from = cartesian ? dir : Direction{-dir[0], -dir[1], -dir[2]};
      recv_.push_back(apps::subarray(d.array(), d.ghost(from), MPI_DOUBLE));
    }
    const int k = static_cast<int>(d.directions.size());
    if (cartesian)
      MPI_Comm_dup(comm, &comm_);
    else
      MPI_Dist_graph_create_adjacent(comm, k, d.from.data(), MPI_UNWEIGHTED, k, d.to.data(), MPI_UNWEIGHTED,
                                     MPI_INFO_NULL, 0, &comm_);
  }
  ~NeighborExchange() override {
    for (std::size_t i = 0; i < send_.size(); ++i) MPI_Type_free(&send_[i]), MPI_Type_free(&recv_[i]);
    MPI_Comm_free(&comm_);
  }

  void run(double* block) override {
    MPI_Neighbor_alltoallw(block, ones_.data(), zeros_.data(), send_.data(), block, ones_.data(), zeros_.data(),
                           recv_.data(), comm_);
  }

 private:
  MPI_Comm comm_;
  std::vector<int> ones_;
  std::vector<MPI_Aint> zeros_;
  std::vector<MPI_Datatype> send_, recv_;
};

}  // namespace

std::unique_ptr<Exchange> make_neighbor_exchange(const Domain& domain, MPI_Comm comm) {
  return std::make_unique<NeighborExchange>(domain, comm);
}

}  // namespace halo3d
