#include "kernel.hpp"

#include <limits>

#include "parallel.hpp"
#include "stencil.hpp"

namespace stencil2d {
namespace {

template <typename T>
struct Initialize {
  T* block;
  std::size_t pitch;
  long long first_row, first_col;
  int last_row, last_col;  // the far halo's indices
  bool poison_north, poison_south, poison_west, poison_east;
  T poison;

  // The cells an exchange fills: halo rows whole, halo columns along the interior rows (a
  // corner without a neighbour above or below it is the matrix's boundary).
  APPS_HD void operator()(long long row, int col) const {
    const bool interior_row = row > 0 && row < last_row;
    const bool from_neighbour = (row == 0 && poison_north) || (row == last_row && poison_south) ||
                                (interior_row && ((col == 0 && poison_west) || (col == last_col && poison_east)));
    block[static_cast<std::size_t>(row) * pitch + col] =
        from_neighbour ? poison : initial_value<T>(first_row + row, first_col + col);
  }
};

}  // namespace

template <typename T>
void initialize(const Grid& g, T* block) {
  apps::for_each_2d(g.rows + 2, g.cols + 2,
                    Initialize<T>{block, g.pitch(), g.first_row, g.first_col, g.rows + 1, g.cols + 1,
                                  g.north != MPI_PROC_NULL, g.south != MPI_PROC_NULL, g.west != MPI_PROC_NULL,
                                  g.east != MPI_PROC_NULL, std::numeric_limits<T>::quiet_NaN()});
}

template <typename T>
void sweep(const Grid& g, const T* in, T* out) {
  apps::for_each_2d(g.rows, g.cols, Sweep<T>{in, out, g.pitch()});
}

template void initialize<float>(const Grid&, float*);
template void initialize<double>(const Grid&, double*);
template void sweep<float>(const Grid&, const float*, float*);
template void sweep<double>(const Grid&, const double*, double*);

}  // namespace stencil2d
