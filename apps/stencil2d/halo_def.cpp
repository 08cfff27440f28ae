#include "device.hpp"
#include "halo.hpp"

namespace stencil2d {
namespace {

enum Side { kNorth, kSouth, kWest, kEast };

template <typename T>
class DefHalo final : public Halo<T> {
 public:
  DefHalo(const Grid& grid, MPI_Comm comm, bool gpu) : g_(grid), comm_(comm), type_(mpi_type<T>()) {
    const apps::MemoryKind host = gpu ? apps::MemoryKind::kPinned : apps::MemoryKind::kHost;
    for (int side = kNorth; side <= kEast; ++side) {
      const std::size_t bytes = (side <= kSouth ? g_.pitch() : g_.rows) * sizeof(T);
      send_[side] = apps::Buffer(host, bytes);
      recv_[side] = apps::Buffer(host, bytes);
    }
  }

  void exchange(T* block) override {
    const std::size_t pitch = g_.pitch(), row_bytes = pitch * sizeof(T), one = sizeof(T);
    MPI_Request requests[2];
    int n = 0;
    // West and east: each interior column copied into host memory by cudaMemcpy2D.
    if (g_.west != MPI_PROC_NULL)
      PMPI_Irecv(recv_[kWest].data(), g_.rows, type_, g_.west, kToEast, comm_, &requests[n++]);
    if (g_.east != MPI_PROC_NULL)
      PMPI_Irecv(recv_[kEast].data(), g_.rows, type_, g_.east, kToWest, comm_, &requests[n++]);
    if (g_.west != MPI_PROC_NULL) {
      apps::copy_2d(send_[kWest].data(), one, block + pitch + 1, row_bytes, one, g_.rows);
      PMPI_Send(send_[kWest].data(), g_.rows, type_, g_.west, kToWest, comm_);
    }
    if (g_.east != MPI_PROC_NULL) {
      apps::copy_2d(send_[kEast].data(), one, block + pitch + g_.cols, row_bytes, one, g_.rows);
      PMPI_Send(send_[kEast].data(), g_.rows, type_, g_.east, kToEast, comm_);
    }
    PMPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
    if (g_.west != MPI_PROC_NULL) apps::copy_2d(block + pitch, row_bytes, recv_[kWest].data(), one, one, g_.rows);
    if (g_.east != MPI_PROC_NULL)
      apps::copy_2d(block + pitch + g_.cols + 1, row_bytes, recv_[kEast].data(), one, one, g_.rows);
    // North and south: whole rows copied into host memory by cudaMemcpy.
    n = 0;
    if (g_.north != MPI_PROC_NULL)
      PMPI_Irecv(recv_[kNorth].data(), static_cast<int>(pitch), type_, g_.north, kToSouth, comm_, &requests[n++]);
    if (g_.south != MPI_PROC_NULL)
      PMPI_Irecv(recv_[kSouth].data(), static_cast<int>(pitch), type_, g_.south, kToNorth, comm_, &requests[n++]);
    if (g_.north != MPI_PROC_NULL) {
      apps::copy(send_[kNorth].data(), block + pitch, row_bytes);
      PMPI_Send(send_[kNorth].data(), static_cast<int>(pitch), type_, g_.north, kToNorth, comm_);
    }
    if (g_.south != MPI_PROC_NULL) {
      apps::copy(send_[kSouth].data(), block + g_.rows * pitch, row_bytes);
      PMPI_Send(send_[kSouth].data(), static_cast<int>(pitch), type_, g_.south, kToSouth, comm_);
    }
    PMPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
    if (g_.north != MPI_PROC_NULL) apps::copy(block, recv_[kNorth].data(), row_bytes);
    if (g_.south != MPI_PROC_NULL) apps::copy(block + (g_.rows + 1) * pitch, recv_[kSouth].data(), row_bytes);
  }

 private:
  const Grid& g_;
  MPI_Comm comm_;
  MPI_Datatype type_;
  apps::Buffer send_[4], recv_[4];
};

}  // namespace

template <typename T>
std::unique_ptr<Halo<T>> make_def_halo(const Grid& grid, MPI_Comm comm, bool gpu) {
  return std::make_unique<DefHalo<T>>(grid, comm, gpu);
}

template std::unique_ptr<Halo<float>> make_def_halo<float>(const Grid&, MPI_Comm, bool);
template std::unique_ptr<Halo<double>> make_def_halo<double>(const Grid&, MPI_Comm, bool);

}  // namespace stencil2d
