// The 9-point stencil: one Jacobi sweep of a block's interior, the same code in the GPU kernel
// and in the serial reference. Its weights (1/4 centre, 1/8 each cardinal neighbour, 1/16 each
// diagonal one: they sum to 1, so values stay bounded over any number of sweeps) are powers of
// two: every product is exact, so the GPU's fused multiply-adds and the host's separate ones give
// the same bits.
#pragma once

#include <cstddef>

#include "hd.hpp"

namespace stencil2d {

template <typename T>
struct Sweep {
  const T* in;
  T* out;
  std::size_t pitch;

  // Interior row `row`, column `col` (0-based), one halo cell around.
  APPS_HD void operator()(long long row, int col) const {
    const std::size_t at = (static_cast<std::size_t>(row) + 1) * pitch + col + 1;
    const T cardinal = (in[at - pitch] + in[at + pitch]) + (in[at - 1] + in[at + 1]);
    const T diagonal = (in[at - pitch - 1] + in[at - pitch + 1]) + (in[at + pitch - 1] + in[at + pitch + 1]);
    out[at] = in[at] / 4 + cardinal / 8 + diagonal / 16;
  }
};

}  // namespace stencil2d
