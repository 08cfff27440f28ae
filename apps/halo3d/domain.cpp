#include "domain.hpp"

#include "options.hpp"

namespace halo3d {

apps::Box Domain::box(const Direction& d, bool ghost) const {
  apps::Box b;
  for (int axis = 0; axis < 3; ++axis) {
    b.size[axis] = d[axis] == 0 ? n : 1;
    b.start[axis] = d[axis] == 0 ? 1 : d[axis] < 0 ? (ghost ? 0 : 1) : (ghost ? n + 1 : n);
  }
  return b;
}

bool make_domain(MPI_Comm world, int n, int points, const std::string& process_grid, Domain* d) {
  if (!apps::process_grid(world, process_grid, 3, d->dims) || n < 1 || (points != 7 && points != 27)) return false;
  const int periods[3] = {1, 1, 1};
  MPI_Cart_create(world, 3, d->dims, periods, 0, &d->cart);
  int rank = 0;
  MPI_Comm_rank(d->cart, &rank);
  MPI_Cart_coords(d->cart, rank, 3, d->coords);
  d->n = n;
  d->points = points;
  if (points == 7) {
    for (int axis = 0; axis < 3; ++axis)
      for (int side : {-1, 1}) {
        Direction face{0, 0, 0};
        face[axis] = side;
        d->directions.push_back(face);
      }
  } else {
    for (int x = -1; x <= 1; ++x)
      for (int y = -1; y <= 1; ++y)
        for (int z = -1; z <= 1; ++z)
          if (x != 0 || y != 0 || z != 0) d->directions.push_back({x, y, z});
  }
  for (const Direction& dir : d->directions) {
    int there[3], back[3];
    for (int axis = 0; axis < 3; ++axis)
      there[axis] = d->coords[axis] + dir[axis], back[axis] = d->coords[axis] - dir[axis];
    d->to.push_back(0), d->from.push_back(0);
    MPI_Cart_rank(d->cart, there, &d->to.back());
    MPI_Cart_rank(d->cart, back, &d->from.back());
  }
  return true;
}

}  // namespace halo3d
