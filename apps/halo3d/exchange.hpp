// The 3-D halo exchange in the versions the app compares; each fills every ghost region the
// stencil reads and returns with the GPU idle. exchange_hand.cpp is the communication code users
// write today, exchange_p2p.cpp, exchange_neighbor.cpp and exchange_cartesian.cpp what gddt lets
// them write (apps/count_lines.py counts them). Region i of the domain's list goes to the rank at
// +d_i with tag i; the ghost region at -d_i comes from the rank at -d_i.
#pragma once

#include <memory>

#include "device.hpp"
#include "domain.hpp"

namespace halo3d {

class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual void run(double* block) = 0;
};

// "hand": one fused kernel packs every region into a contiguous buffer, which goes to the
// library as one contiguous message a region (PMPI: without gddt) from device memory, or through
// pinned host memory where `stage` (a library that is not CUDA-aware); one kernel unpacks.
std::unique_ptr<Exchange> make_hand_exchange(const Domain& domain, MPI_Comm comm, apps::MemoryKind arrays, bool stage);
// "p2p": MPI_Irecv and MPI_Isend of subarray datatypes straight from device memory.
std::unique_ptr<Exchange> make_p2p_exchange(const Domain& domain, MPI_Comm comm);
// "neighbor": one MPI_Neighbor_alltoallw of the same subarrays on a distributed graph of the
// domain's directions made from the Cartesian communicator (whose own neighbourhood has the faces
// only).
std::unique_ptr<Exchange> make_neighbor_exchange(const Domain& domain, MPI_Comm comm);
// "cartesian": MPI_Neighbor_alltoallw on the Cartesian communicator itself: one call of the six
// faces for 7 points; for 27, three calls, an axis each, whose faces take in the ghosts the calls
// before filled.
std::unique_ptr<Exchange> make_cartesian_exchange(const Domain& domain, MPI_Comm comm);

// Whether the library's MPI_Neighbor_alltoallw on a periodic Cartesian dimension of extent 1 (or
// 2) delivers the block sent towards -d into the block of +d, as MPI-4.0 orders it (mpi-forum
// issue 153, an erratum to MPI-3.1). MPICH 4.0 swaps the two: there "cartesian" cannot run on
// such a grid.
bool library_orders_cartesian_blocks();

}  // namespace halo3d
