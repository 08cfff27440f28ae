// The FFT pencil decomposition (as 2DECOMP&FFT, heFFTe and mpi4py-fft lay it out): an n^3 array
// of complex doubles, C order, on a P1 x P2 process grid. An x-pencil holds every x of its share
// of y (split over P1) and z (split over P2); a y-pencil every y, x split over P1; a z-pencil
// every z, y split over P2. A 3-D FFT transposes x -> y among the P1 ranks of a process row and
// y -> z among the P2 ranks of a column, and back for the inverse.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "boxes.hpp"

namespace fft {

struct Pencil {
  apps::Extent shape;   // local extents
  apps::Extent offset;  // global index of local (0, 0, 0)
  long long elements() const { return static_cast<long long>(shape[0]) * shape[1] * shape[2]; }
};

struct Pencils {
  MPI_Comm cart = MPI_COMM_NULL;  // P1 x P2
  int dims[2] = {0, 0};
  int n = 0;
  Pencil x, y, z;
};

// n: the global edge, a multiple of P1 and P2 (0: the largest with at most `mib_per_rank` MiB of
// one pencil a rank). False where the grid does not fit the ranks or n the grid.
bool make_pencils(MPI_Comm world, int n, double mib_per_rank, const std::string& process_grid, Pencils* pencils);

// One transpose among `peers` ranks: the box of the source that goes to peer j and the box of the
// destination that peer j's block fills, in peer order.
struct Blocks {
  apps::Extent from_shape, to_shape;
  std::vector<apps::Box> send, recv;
};
Blocks blocks(const Pencil& from, const Pencil& to, int peers);

}  // namespace fft
