#include "box_copy.hpp"
#include "device.hpp"
#include "exchange.hpp"

namespace halo3d {
namespace {

class HandExchange final : public Exchange {
 public:
  HandExchange(const Domain& d, MPI_Comm comm, apps::MemoryKind arrays, bool stage) : d_(d), comm_(comm) {
    for (const Direction& dir : d.directions) {
      send_.add(d.interior(dir));
      recv_.add(d.ghost({-dir[0], -dir[1], -dir[2]}));
    }
    const std::size_t bytes = send_.elements() * sizeof(double);
    packed_send_ = apps::Buffer(arrays, bytes);
    packed_recv_ = apps::Buffer(arrays, bytes);
    if (stage) {
      host_send_ = apps::Buffer(apps::MemoryKind::kPinned, bytes);
      host_recv_ = apps::Buffer(apps::MemoryKind::kPinned, bytes);
    }
    wire_send_ = reinterpret_cast<double*>(stage ? host_send_.data() : packed_send_.data());
    wire_recv_ = reinterpret_cast<double*>(stage ? host_recv_.data() : packed_recv_.data());
  }

  void run(double* block) override {
    const int k = send_.count;
    MPI_Request requests[2 * apps::kMaxBoxes];
    for (int i = 0; i < k; ++i)
      PMPI_Irecv(wire_recv_ + recv_.offset[i], static_cast<int>(recv_.boxes[i].count()), MPI_DOUBLE, d_.from[i], i,
                 comm_, &requests[i]);
    apps::pack_boxes(block, d_.array(), send_, packed_send_.data(), sizeof(double));
    if (host_send_.data() != nullptr)
      apps::copy(host_send_.data(), packed_send_.data(), packed_send_.size());
    else
      apps::synchronize();
    for (int i = 0; i < k; ++i)
      PMPI_Isend(wire_send_ + send_.offset[i], static_cast<int>(send_.boxes[i].count()), MPI_DOUBLE, d_.to[i], i, comm_,
                 &requests[k + i]);
    PMPI_Waitall(2 * k, requests, MPI_STATUSES_IGNORE);
    if (host_recv_.data() != nullptr) apps::copy(packed_recv_.data(), host_recv_.data(), packed_recv_.size());
    apps::unpack_boxes(block, d_.array(), recv_, packed_recv_.data(), sizeof(double));
    apps::synchronize();
  }

 private:
  const Domain& d_;
  MPI_Comm comm_;
  apps::BoxList send_, recv_;
  apps::Buffer packed_send_, packed_recv_, host_send_, host_recv_;
  double *wire_send_, *wire_recv_;  // what the library gets
};

}  // namespace

std::unique_ptr<Exchange> make_hand_exchange(const Domain& domain, MPI_Comm comm, apps::MemoryKind arrays, bool stage) {
  return std::make_unique<HandExchange>(domain, comm, arrays, stage);
}

}  // namespace halo3d
