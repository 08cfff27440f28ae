// Stencil2D's halo exchange, in the two versions the apps compare. Both fill the west and east
// halo columns first (interior rows), then the north and south halo rows whole, halo columns
// included, which carries the corners the 9-point stencil reads. halo_def.cpp and halo_gddt.cpp
// are the communication code whose lines apps/count_lines.py counts.
#pragma once

#include <memory>

#include "grid.hpp"

namespace stencil2d {

// The direction a message travels: its tag.
enum Tag { kToNorth, kToSouth, kToWest, kToEast };

template <typename T>
class Halo {
 public:
  virtual ~Halo() = default;
  virtual void exchange(T* block) = 0;  // returns with the halo in place
};

// "def", as Stencil2D is written today: each column staged through host memory by cudaMemcpy2D,
// each row by cudaMemcpy, host buffers sent by the library alone (PMPI: as without gddt).
template <typename T>
std::unique_ptr<Halo<T>> make_def_halo(const Grid& grid, MPI_Comm comm, bool gpu);

// "gddt": the columns as MPI_Type_vector and the rows sent straight from the block in device
// memory.
template <typename T>
std::unique_ptr<Halo<T>> make_gddt_halo(const Grid& grid, MPI_Comm comm);

}  // namespace stencil2d
