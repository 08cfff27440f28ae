#include "reference.hpp"

#include <utility>

#include "stencil.hpp"

namespace halo3d {
namespace {

// The global grid with one ghost layer, which the periodic wrap fills before each sweep.
struct Global {
  long long g[3];  // interior points a side
  std::vector<double> values;

  long long at(long long i, long long j, long long k) const { return (i * (g[1] + 2) + j) * (g[2] + 2) + k; }
  void wrap() {
    auto inside = [](long long x, long long n) { return x == 0 ? n : x == n + 1 ? 1 : x; };
    for (long long i = 0; i < g[0] + 2; ++i)
      for (long long j = 0; j < g[1] + 2; ++j)
        for (long long k = 0; k < g[2] + 2; ++k)
          values[at(i, j, k)] = values[at(inside(i, g[0]), inside(j, g[1]), inside(k, g[2]))];
  }
};

}  // namespace

std::vector<double> reference_block(const Domain& d, int sweeps) {
  Global in{{static_cast<long long>(d.dims[0]) * d.n, static_cast<long long>(d.dims[1]) * d.n,
             static_cast<long long>(d.dims[2]) * d.n},
            {}};
  in.values.resize(static_cast<std::size_t>((in.g[0] + 2) * (in.g[1] + 2) * (in.g[2] + 2)));
  for (long long i = 1; i <= in.g[0]; ++i)
    for (long long j = 1; j <= in.g[1]; ++j)
      for (long long k = 1; k <= in.g[2]; ++k) in.values[in.at(i, j, k)] = initial_value(i - 1, j - 1, k - 1);
  Global out = in;
  for (int s = 0; s < sweeps; ++s) {
    in.wrap();
    const Sweep sweep{in.values.data(), out.values.data(),         in.g[1] + 2,
                      in.g[2] + 2,      static_cast<int>(in.g[1]), d.points == 27};
    for (long long row = 0; row < in.g[0] * in.g[1]; ++row)
      for (int k = 0; k < in.g[2]; ++k) sweep(row, k);
    std::swap(in, out);
  }
  std::vector<double> block;
  for (int i = 1; i <= d.n; ++i)
    for (int j = 1; j <= d.n; ++j)
      for (int k = 1; k <= d.n; ++k)
        block.push_back(in.values[in.at(static_cast<long long>(d.coords[0]) * d.n + i,
                                        static_cast<long long>(d.coords[1]) * d.n + j,
                                        static_cast<long long>(d.coords[2]) * d.n + k)]);
  return block;
}

}  // namespace halo3d
