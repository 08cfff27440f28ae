// The checks of the calls that carry buffers gddt does not move yet (collectives,
// I/O, partitioned point-to-point: the `blocking` and `checked` rows of entry_points.txt that
// list buffers). The library would pack device data described by a derived datatype with the
// CPU, and under a library that is not CUDA-aware it would touch any device buffer with the
// CPU; either way the process crashes. Such a call is refused with
// MPI_ERR_UNSUPPORTED_OPERATION, raised on its communicator or file, before the library
// sees it. MPI_IN_PLACE, MPI_BOTTOM, buffers not significant at this process and datatypes that
// are not valid are left for the library to judge.
#pragma once

#include <mpi.h>

#include <climits>
#include <initializer_list>

namespace gddt::mpi::guard {

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

struct Buffer {
  const void* address;
  const MPI_Datatype* types;  // one, or an array by `per`
  Per per;
  Side side;
};

constexpr int kNotRooted = INT_MIN;

// The number of datatypes of a buffer of `per` on `comm`; 0 where the communicator cannot tell
// (the library reports the erroneous call).
int datatypes_of(MPI_Comm comm, Per per);

// Whether a buffer of `side` is significant at this process of a call with `root` on `comm`.
bool significant(MPI_Comm comm, int root, Side side);

// Each returns MPI_SUCCESS, or MPI_ERR_UNSUPPORTED_OPERATION raised on the handle. `root` is
// the call's root argument, kNotRooted for calls without one.
int on_comm(MPI_Comm comm, int root, std::initializer_list<Buffer> buffers);
int on_file(MPI_File file, std::initializer_list<Buffer> buffers);

}  // namespace gddt::mpi::guard
