// The 7- and 27-point stencils: one Jacobi sweep of a block's interior, the same code in the GPU
// kernel and in the serial reference. The weights are powers of two that sum to 1 (7 points: 1/4
// centre, 1/8 a face; 27: 1/8 centre, 1/16 a face, 1/32 an edge, 1/64 a corner), so every product
// is exact and fused or separate multiply-adds give the same bits.
#pragma once

#include "hd.hpp"

namespace halo3d {

struct Sweep {
  const double* in;
  double* out;
  long long n1, n2;  // the array's extents in its two fastest axes, ghosts included
  int interior1;     // interior points of the middle axis
  bool full;         // 27 points

  // Interior point (row / interior1, row % interior1, k), 0-based.
  APPS_HD void operator()(long long row, int k) const {
    const long long at = ((row / interior1 + 1) * n1 + row % interior1 + 1) * n2 + k + 1;
    const long long s1 = n2, s0 = n1 * n2;
    const double faces = ((in[at - s0] + in[at + s0]) + (in[at - s1] + in[at + s1])) + (in[at - 1] + in[at + 1]);
    if (!full) {
      out[at] = in[at] / 4 + faces / 8;
      return;
    }
    double edges = 0, corners = 0;
    for (int a = -1; a <= 1; a += 2)
      for (int b = -1; b <= 1; b += 2) {
        edges += (in[at + a * s0 + b * s1] + in[at + a * s0 + b]) + in[at + a * s1 + b];
        corners += (in[at + a * s0 + b * s1 - 1] + in[at + a * s0 + b * s1 + 1]);
      }
    out[at] = in[at] / 8 + faces / 16 + edges / 32 + corners / 64;
  }
};

// Initial values at a global interior point: multiples of 1/1024, exact.
APPS_HD inline double initial_value(long long i, long long j, long long k) {
  return static_cast<double>((i * 7919 + j * 104729 + k * 1299709) % 1024) / 1024;
}

}  // namespace halo3d
