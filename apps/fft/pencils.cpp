#include "pencils.hpp"

#include <cmath>
#include <numeric>

#include "options.hpp"

namespace fft {

bool make_pencils(MPI_Comm world, int n, double mib_per_rank, const std::string& process_grid, Pencils* p) {
  int ranks = 0;
  MPI_Comm_size(world, &ranks);
  if (!apps::process_grid(world, process_grid, 2, p->dims)) return false;
  const int step = std::lcm(p->dims[0], p->dims[1]);
  if (n == 0) n = static_cast<int>(std::cbrt(mib_per_rank * 1048576.0 * ranks / 16)) / step * step;
  if (n < step || n % step != 0) return false;
  const int periods[2] = {0, 0};
  int rank = 0, c[2];
  MPI_Cart_create(world, 2, p->dims, periods, 0, &p->cart);
  MPI_Comm_rank(p->cart, &rank);
  MPI_Cart_coords(p->cart, rank, 2, c);
  const int a = n / p->dims[0], b = n / p->dims[1];
  p->n = n;
  p->x = Pencil{{{n, a, b}}, {{0, c[0] * a, c[1] * b}}};
  p->y = Pencil{{{a, n, b}}, {{c[0] * a, 0, c[1] * b}}};
  p->z = Pencil{{{a, b, n}}, {{c[0] * a, c[1] * b, 0}}};
  return true;
}

Blocks blocks(const Pencil& from, const Pencil& to, int peers) {
  Blocks result{from.shape, to.shape, {}, {}};
  int split = -1, join = -1;  // the axis the peers share out, the one they gather
  for (int axis = 0; axis < 3; ++axis) {
    if (from.shape[axis] > to.shape[axis]) split = axis;
    if (to.shape[axis] > from.shape[axis]) join = axis;
  }
  for (int j = 0; j < peers; ++j) {
    apps::Box send{{{0, 0, 0}}, from.shape}, recv{{{0, 0, 0}}, to.shape};
    if (split >= 0) {
      send.size[split] = to.shape[split];
      send.start[split] = j * to.shape[split];
      recv.size[join] = from.shape[join];
      recv.start[join] = j * from.shape[join];
    }
    result.send.push_back(send);
    result.recv.push_back(recv);
  }
  return result;
}

}  // namespace fft
