#include "halo.hpp"

namespace stencil2d {
namespace {

template <typename T>
class GddtHalo final : public Halo<T> {
 public:
  GddtHalo(const Grid& grid, MPI_Comm comm) : g_(grid), comm_(comm), type_(mpi_type<T>()) {
    MPI_Type_vector(g_.rows, 1, static_cast<int>(g_.pitch()), type_, &column_);
    MPI_Type_commit(&column_);
  }
  ~GddtHalo() override { MPI_Type_free(&column_); }

  void exchange(T* block) override {
    const std::size_t pitch = g_.pitch();
    const int row = static_cast<int>(pitch);
    MPI_Request requests[2];
    // West and east: the interior columns, straight from device memory.
    MPI_Irecv(block + pitch, 1, column_, g_.west, kToEast, comm_, &requests[0]);
    MPI_Irecv(block + pitch + g_.cols + 1, 1, column_, g_.east, kToWest, comm_, &requests[1]);
    MPI_Send(block + pitch + 1, 1, column_, g_.west, kToWest, comm_);
    MPI_Send(block + pitch + g_.cols, 1, column_, g_.east, kToEast, comm_);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    // North and south: whole rows.
    MPI_Irecv(block, row, type_, g_.north, kToSouth, comm_, &requests[0]);
    MPI_Irecv(block + (g_.rows + 1) * pitch, row, type_, g_.south, kToNorth, comm_, &requests[1]);
    MPI_Send(block + pitch, row, type_, g_.north, kToNorth, comm_);
    MPI_Send(block + g_.rows * pitch, row, type_, g_.south, kToSouth, comm_);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  }

 private:
  const Grid& g_;
  MPI_Comm comm_;
  MPI_Datatype type_, column_;
};

}  // namespace

template <typename T>
std::unique_ptr<Halo<T>> make_gddt_halo(const Grid& grid, MPI_Comm comm) {
  return std::make_unique<GddtHalo<T>>(grid, comm);
}

template std::unique_ptr<Halo<float>> make_gddt_halo<float>(const Grid&, MPI_Comm);
template std::unique_ptr<Halo<double>> make_gddt_halo<double>(const Grid&, MPI_Comm);

}  // namespace stencil2d
