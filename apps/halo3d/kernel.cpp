#include "kernel.hpp"

#include <limits>

#include "parallel.hpp"
#include "stencil.hpp"

namespace halo3d {
namespace {

struct Initialize {
  double* block;
  long long n2;
  long long first[3];  // global index of interior point (0, 0, 0)
  int n;
  double poison;

  APPS_HD void operator()(long long row, int k) const {
    const long long i = row / n2, j = row % n2;
    const bool ghost = i == 0 || j == 0 || k == 0 || i == n + 1 || j == n + 1 || k == n + 1;
    block[row * n2 + k] = ghost ? poison : initial_value(first[0] + i - 1, first[1] + j - 1, first[2] + k - 1);
  }
};

}  // namespace

void initialize(const Domain& d, double* block) {
  const long long side = d.n + 2;
  apps::for_each_2d(side * side, d.n + 2,
                    Initialize{block,
                               side,
                               {static_cast<long long>(d.coords[0]) * d.n, static_cast<long long>(d.coords[1]) * d.n,
                                static_cast<long long>(d.coords[2]) * d.n},
                               d.n,
                               std::numeric_limits<double>::quiet_NaN()});
}

void sweep(const Domain& d, const double* in, double* out) {
  apps::for_each_2d(static_cast<long long>(d.n) * d.n, d.n, Sweep{in, out, d.n + 2, d.n + 2, d.n, d.points == 27});
}

}  // namespace halo3d
