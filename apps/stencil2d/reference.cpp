#include "reference.hpp"

#include <utility>

#include "stencil.hpp"

namespace stencil2d {

template <typename T>
std::vector<T> reference_block(const Grid& g, int sweeps) {
  const long long rows = g.global_rows + 2, cols = g.global_cols + 2;
  std::vector<T> in(static_cast<std::size_t>(rows * cols)), out;
  for (long long r = 0; r < rows; ++r)
    for (long long c = 0; c < cols; ++c) in[r * cols + c] = initial_value<T>(r, c);
  out = in;  // the boundary ring, which no sweep writes
  for (int s = 0; s < sweeps; ++s) {
    const Sweep<T> sweep{in.data(), out.data(), static_cast<std::size_t>(cols)};
    for (long long r = 0; r < g.global_rows; ++r)
      for (int c = 0; c < g.global_cols; ++c) sweep(r, c);
    std::swap(in, out);
  }
  std::vector<T> block(static_cast<std::size_t>(g.rows) * g.cols);
  for (int r = 0; r < g.rows; ++r)
    for (int c = 0; c < g.cols; ++c)
      block[static_cast<std::size_t>(r) * g.cols + c] = in[(g.first_row + 1 + r) * cols + g.first_col + 1 + c];
  return block;
}

template std::vector<float> reference_block<float>(const Grid&, int);
template std::vector<double> reference_block<double>(const Grid&, int);

}  // namespace stencil2d
