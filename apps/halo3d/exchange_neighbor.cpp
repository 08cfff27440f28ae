#include "exchange.hpp"
#include "subarray.hpp"

namespace halo3d {
namespace {

class NeighborExchange final : public Exchange {
 public:
  NeighborExchange(const Domain& d, MPI_Comm comm) : ones_(d.directions.size(), 1), zeros_(d.directions.size(), 0) {
    for (const Direction& dir : d.directions) {
      send_.push_back(apps::subarray(d.array(), d.interior(dir), MPI_DOUBLE));
      recv_.push_back(apps::subarray(d.array(), d.ghost({-dir[0], -dir[1], -dir[2]}), MPI_DOUBLE));
    }
    const int k = static_cast<int>(d.directions.size());
    // The graph is made from a communicator without a topology: Open MPI 5.0 keeps the Cartesian
    // flag on a graph made from a Cartesian communicator (open-mpi/ompi#14438), and its queries and
    // neighbourhood collectives on it then fail or crash. Same ranks, by the split's key.
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm plain;
    MPI_Comm_split(comm, 0, rank, &plain);
    MPI_Dist_graph_create_adjacent(plain, k, d.from.data(), MPI_UNWEIGHTED, k, d.to.data(), MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &graph_);
    MPI_Comm_free(&plain);
  }
  ~NeighborExchange() override {
    for (std::size_t i = 0; i < send_.size(); ++i) MPI_Type_free(&send_[i]), MPI_Type_free(&recv_[i]);
    MPI_Comm_free(&graph_);
  }

  void run(double* block) override {
    MPI_Neighbor_alltoallw(block, ones_.data(), zeros_.data(), send_.data(), block, ones_.data(), zeros_.data(),
                           recv_.data(), graph_);
  }

 private:
  MPI_Comm graph_;
  std::vector<int> ones_;
  std::vector<MPI_Aint> zeros_;
  std::vector<MPI_Datatype> send_, recv_;
};

}  // namespace

std::unique_ptr<Exchange> make_neighbor_exchange(const Domain& domain, MPI_Comm comm) {
  return std::make_unique<NeighborExchange>(domain, comm);
}

}  // namespace halo3d
