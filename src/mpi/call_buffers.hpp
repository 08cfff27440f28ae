// What a call's buffer arguments are, in the notation of entry_points.txt's staged rows: how many
// datatypes a buffer has (one, or one per peer or neighbour) and whether it is significant at this
// process of a rooted call. Collectives and file calls (mpi/collective.hpp) and the Fortran
// conversions read them.
#pragma once

#include <mpi.h>

#include <climits>

namespace gddt::mpi::call_buffers {

// How many datatypes a buffer has: one, or an array of one per peer.
enum class Per {
  kCall,
  kPeer,         // every process of the communicator (of the remote group of an intercommunicator)
  kInNeighbor,   // every in-neighbour of the communicator's topology
  kOutNeighbor,  // every out-neighbour
};
// Where a buffer of a rooted call is significant.
enum class Side {
  kAny,   // everywhere but in the root group of an intercommunicator, other than at its root
  kRoot,  // at the root only (MPI_ROOT on an intercommunicator)
  kLeaf,  // everywhere but in the root group of an intercommunicator
};

constexpr int kNotRooted = INT_MIN;

// The number of datatypes of a buffer of `per` on `comm`; 0 where the communicator cannot tell
// (the library reports the erroneous call).
int datatypes_of(MPI_Comm comm, Per per);

// Whether a buffer of `side` is significant at this process of a call with `root` on `comm`.
bool significant(MPI_Comm comm, int root, Side side);

}  // namespace gddt::mpi::call_buffers
