#include "box_copy.hpp"
#include "transpose.hpp"

namespace fft {
namespace {

constexpr int kComplex = 16;  // bytes of a complex double

class HandTranspose final : public Transpose {
 public:
  HandTranspose(const Blocks& blocks, MPI_Comm comm, apps::MemoryKind arrays, bool stage)
      : from_shape_(blocks.from_shape), to_shape_(blocks.to_shape), comm_(comm) {
    for (std::size_t j = 0; j < blocks.send.size(); ++j) {
      send_.add(blocks.send[j]);
      recv_.add(blocks.recv[j]);
      send_counts_.push_back(static_cast<int>(blocks.send[j].count()));
      recv_counts_.push_back(static_cast<int>(blocks.recv[j].count()));
      send_displs_.push_back(static_cast<int>(send_.offset[j]));
      recv_displs_.push_back(static_cast<int>(recv_.offset[j]));
    }
    packed_send_ = apps::Buffer(arrays, send_.elements() * kComplex);
    packed_recv_ = apps::Buffer(arrays, recv_.elements() * kComplex);
    if (stage) {
      host_send_ = apps::Buffer(apps::MemoryKind::kPinned, packed_send_.size());
      host_recv_ = apps::Buffer(apps::MemoryKind::kPinned, packed_recv_.size());
    } else {
      // A CUDA-aware Open MPI 5.0 copies the process's own block of MPI_Alltoallv with the CPU
      // (ompi_datatype_sndrcv), which crashes on device memory: the own block is copied here, as
      // users of that library do, and the library moves the others.
      MPI_Comm_rank(comm, &self_);
      self_count_ = send_counts_[static_cast<std::size_t>(self_)];
      send_counts_[static_cast<std::size_t>(self_)] = recv_counts_[static_cast<std::size_t>(self_)] = 0;
    }
  }

  void run(const void* from, void* to) override {
    const bool stage = host_send_.data() != nullptr;
    apps::pack_boxes(from, from_shape_, send_, packed_send_.data(), kComplex);
    if (stage)
      apps::copy(host_send_.data(), packed_send_.data(), packed_send_.size());
    else
      apps::synchronize();
    if (self_count_ > 0)
      apps::copy(packed_recv_.data() + recv_displs_[static_cast<std::size_t>(self_)] * kComplex,
                 packed_send_.data() + send_displs_[static_cast<std::size_t>(self_)] * kComplex,
                 static_cast<std::size_t>(self_count_) * kComplex);
    PMPI_Alltoallv(stage ? host_send_.data() : packed_send_.data(), send_counts_.data(), send_displs_.data(),
                   MPI_C_DOUBLE_COMPLEX, stage ? host_recv_.data() : packed_recv_.data(), recv_counts_.data(),
                   recv_displs_.data(), MPI_C_DOUBLE_COMPLEX, comm_);
    if (stage) apps::copy(packed_recv_.data(), host_recv_.data(), packed_recv_.size());
    apps::unpack_boxes(to, to_shape_, recv_, packed_recv_.data(), kComplex);
    apps::synchronize();
  }

 private:
  apps::Extent from_shape_, to_shape_;
  MPI_Comm comm_;
  apps::BoxList send_, recv_;
  std::vector<int> send_counts_, recv_counts_, send_displs_, recv_displs_;
  int self_ = 0, self_count_ = 0;  // the own block copied apart from the library's call
  apps::Buffer packed_send_, packed_recv_, host_send_, host_recv_;
};

}  // namespace

std::unique_ptr<Transpose> make_hand_transpose(const Blocks& blocks, MPI_Comm comm, apps::MemoryKind arrays,
                                               bool stage) {
  return std::make_unique<HandTranspose>(blocks, comm, arrays, stage);
}

}  // namespace fft
