#include "kernel.hpp"

#include "parallel.hpp"

namespace fft {
namespace {

struct Fill {
  double* array;  // pairs: real, imaginary
  apps::Extent shape, offset;
  long long n;

  APPS_HD void operator()(long long row, int k) const {
    const long long i = row / shape[1], j = row % shape[1];
    const double index = static_cast<double>(((offset[0] + i) * n + offset[1] + j) * n + offset[2] + k);
    const long long at = 2 * (row * shape[2] + k);
    array[at] = index;
    array[at + 1] = index + 0.5;
  }
};

}  // namespace

void fill_pencil(const Pencil& pencil, int n, void* array) {
  apps::for_each_2d(static_cast<long long>(pencil.shape[0]) * pencil.shape[1], pencil.shape[2],
                    Fill{static_cast<double*>(array), pencil.shape, pencil.offset, n});
}

}  // namespace fft
