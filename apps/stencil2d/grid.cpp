#include "grid.hpp"

#include "options.hpp"

namespace stencil2d {

template <>
MPI_Datatype mpi_type<float>() {
  return MPI_FLOAT;
}
template <>
MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}

bool make_grid(MPI_Comm world, int rows, int cols, const std::string& process_grid, Grid* g) {
  if (!apps::process_grid(world, process_grid, 2, g->dims) || rows < 1 || cols < 1) return false;
  const int periods[2] = {0, 0};
  MPI_Cart_create(world, 2, g->dims, periods, 0, &g->cart);
  int rank = 0;
  MPI_Comm_rank(g->cart, &rank);
  MPI_Cart_coords(g->cart, rank, 2, g->coords);
  MPI_Cart_shift(g->cart, 0, 1, &g->north, &g->south);
  MPI_Cart_shift(g->cart, 1, 1, &g->west, &g->east);
  g->rows = rows, g->cols = cols;
  g->first_row = static_cast<long long>(g->coords[0]) * rows;
  g->first_col = static_cast<long long>(g->coords[1]) * cols;
  g->global_rows = static_cast<long long>(g->dims[0]) * rows;
  g->global_cols = static_cast<long long>(g->dims[1]) * cols;
  return true;
}

}  // namespace stencil2d
