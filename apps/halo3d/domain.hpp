// The 3-D halo exchange's domain (the shape of Comb, AMReX and lattice-QCD codes): a periodic
// global grid of doubles split into n^3 blocks over a 3-D Cartesian process grid, each block with
// one ghost layer. A 7-point stencil needs the 6 faces of the neighbours; a 27-point one also
// the 12 edges and 8 corners, 26 regions in all.
#pragma once

#include <mpi.h>

#include <array>
#include <string>
#include <vector>

#include "boxes.hpp"

namespace halo3d {

using Direction = std::array<int, 3>;

struct Domain {
  MPI_Comm cart = MPI_COMM_NULL;
  int dims[3] = {0, 0, 0}, coords[3] = {0, 0, 0};
  int n = 0;       // interior points a side
  int points = 7;  // the stencil's
  // The regions exchanged: 7 points, the faces in the Cartesian order (-x, +x, -y, +y, -z, +z),
  // which MPI_Neighbor_alltoallw on a Cartesian communicator follows; 27 points, all 26.
  std::vector<Direction> directions;
  std::vector<int> to, from;  // the ranks at +d and at -d of each direction d

  apps::Extent array() const { return {{n + 2, n + 2, n + 2}}; }
  std::size_t elements() const { return static_cast<std::size_t>(n + 2) * (n + 2) * (n + 2); }
  apps::Box interior(const Direction& d) const { return box(d, false); }  // sent towards d
  apps::Box ghost(const Direction& d) const { return box(d, true); }      // filled from the rank at d
  apps::Box box(const Direction& d, bool ghost) const;
};

// `process_grid`: "PxQxR" or "auto" (MPI_Dims_create). False where it does not fit the ranks.
bool make_domain(MPI_Comm world, int n, int points, const std::string& process_grid, Domain* domain);

}  // namespace halo3d
