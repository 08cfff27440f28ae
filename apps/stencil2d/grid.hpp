// Stencil2D's grid (after SHOC's Stencil2D, reimplemented from the MVAPICH2 paper's description):
// a global matrix whose outer ring is a fixed boundary, split into equal blocks of interior
// rows x columns over a 2-D process grid; each rank keeps its block with a halo of one row and
// one column on every side, row-major.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

#include "hd.hpp"

namespace stencil2d {

struct Grid {
  MPI_Comm cart = MPI_COMM_NULL;
  int dims[2] = {0, 0}, coords[2] = {0, 0};
  int rows = 0, cols = 0;                      // this rank's interior
  long long first_row = 0, first_col = 0;      // global index of local (0, 0)
  long long global_rows = 0, global_cols = 0;  // interior of the whole matrix
  int north = MPI_PROC_NULL, south = MPI_PROC_NULL, west = MPI_PROC_NULL, east = MPI_PROC_NULL;

  std::size_t pitch() const { return static_cast<std::size_t>(cols) + 2; }
  std::size_t elements() const { return (static_cast<std::size_t>(rows) + 2) * pitch(); }
};

// `process_grid`: "PxQ" (P process rows, Q process columns) or "auto" (MPI_Dims_create). Returns
// false where the grid does not match the number of ranks.
bool make_grid(MPI_Comm world, int rows, int cols, const std::string& process_grid, Grid* grid);

// The matrix's initial value at global (row, col), boundary ring included: multiples of 1/1024,
// exact in both precisions.
template <typename T>
APPS_HD T initial_value(long long row, long long col) {
  return static_cast<T>((row * 7919 + col * 104729) % 1024) / static_cast<T>(1024);
}

template <typename T>
MPI_Datatype mpi_type();

}  // namespace stencil2d
