#include "exchange.hpp"
#include "subarray.hpp"

namespace halo3d {
namespace {

class P2pExchange final : public Exchange {
 public:
  P2pExchange(const Domain& d, MPI_Comm comm) : d_(d), comm_(comm), requests_(2 * d.directions.size()) {
    for (const Direction& dir : d.directions) {
      send_.push_back(apps::subarray(d.array(), d.interior(dir), MPI_DOUBLE));
      recv_.push_back(apps::subarray(d.array(), d.ghost({-dir[0], -dir[1], -dir[2]}), MPI_DOUBLE));
    }
  }
  ~P2pExchange() override {
    for (std::size_t i = 0; i < send_.size(); ++i) MPI_Type_free(&send_[i]), MPI_Type_free(&recv_[i]);
  }

  void run(double* block) override {
    const int k = static_cast<int>(send_.size());
    for (int i = 0; i < k; ++i) MPI_Irecv(block, 1, recv_[i], d_.from[i], i, comm_, &requests_[i]);
    for (int i = 0; i < k; ++i) MPI_Isend(block, 1, send_[i], d_.to[i], i, comm_, &requests_[k + i]);
    MPI_Waitall(2 * k, requests_.data(), MPI_STATUSES_IGNORE);
  }

 private:
  const Domain& d_;
  MPI_Comm comm_;
  std::vector<MPI_Datatype> send_, recv_;
  std::vector<MPI_Request> requests_;
};

}  // namespace

std::unique_ptr<Exchange> make_p2p_exchange(const Domain& domain, MPI_Comm comm) {
  return std::make_unique<P2pExchange>(domain, comm);
}

}  // namespace halo3d
