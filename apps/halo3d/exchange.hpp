// The 3-D halo exchange in the versions the app compares; each fills every ghost region the
// stencil reads and returns with the GPU idle. exchange_hand.cpp is the communication code users
// write today, exchange_p2p.cpp, exchange_neighbor.cpp and exchange_cartesian.cpp what gddt lets
// them write (apps/count_lines.py counts them). Region i of the domain's list goes to the rank at +d_i with
// tag i; the ghost region at -d_i comes from the rank at -d_i.
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
std::unique_ptr<Exchange> make_hand_exchange(const Domain& domain, MPI_Comm comm, apps::MemoryKind arrays,
                                             bool stage);
// "p2p": MPI_Irecv and MPI_Isend of subarray datatypes straight from device memory.
std::unique_ptr<Exchange> make_p2p_exchange(const Domain& domain, MPI_Comm comm);
// "neighbor": one MPI_Neighbor_alltoallw of the same subarrays: on the Cartesian communicator
// (7 points: its neighbours are the faces'), on a distributed graph of the 26 directions made
// from it (27 points: a Cartesian communicator's neighbourhood has the faces only).
std::unique_ptr<Exchange> make_neighbor_exchange(const Domain& domain, MPI_Comm comm);
// "cartesian" (27 points): the faces, edges and corners on the Cartesian communicator itself, by
// three MPI_Neighbor_alltoallw calls, an axis each, whose faces take in the ghosts the calls
// before filled.
std::unique_ptr<Exchange> make_cartesian_exchange(const Domain& domain, MPI_Comm comm);

}  // namespace halo3d
