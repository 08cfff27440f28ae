#include "subarray.hpp"
#include "transpose.hpp"

namespace fft {
namespace {

class GddtTranspose final : public Transpose {
 public:
  GddtTranspose(const Blocks& blocks, MPI_Comm comm)
      : comm_(comm), ones_(blocks.send.size(), 1), zeros_(blocks.send.size(), 0) {
    for (std::size_t j = 0; j < blocks.send.size(); ++j) {
      send_.push_back(apps::subarray(blocks.from_shape, blocks.send[j], MPI_C_DOUBLE_COMPLEX));
      recv_.push_back(apps::subarray(blocks.to_shape, blocks.recv[j], MPI_C_DOUBLE_COMPLEX));
    }
  }
  ~GddtTranspose() override {
    for (std::size_t j = 0; j < send_.size(); ++j) MPI_Type_free(&send_[j]), MPI_Type_free(&recv_[j]);
  }

  void run(const void* from, void* to) override {
    MPI_Alltoallw(from, ones_.data(), zeros_.data(), send_.data(), to, ones_.data(), zeros_.data(), recv_.data(),
                  comm_);
  }

 private:
  MPI_Comm comm_;
  std::vector<int> ones_, zeros_;
  std::vector<MPI_Datatype> send_, recv_;
};

}  // namespace

std::unique_ptr<Transpose> make_gddt_transpose(const Blocks& blocks, MPI_Comm comm) {
  return std::make_unique<GddtTranspose>(blocks, comm);
}

}  // namespace fft
