// MPI-4's large-count _c forms, where the library declares them (MPICH 4; Open MPI 4.1 and 5.0 do
// not): MPI-4 code such as mpi4py 4 calls these instead of the int ones. A count that fits an int
// takes the int call's path, so device data is packed and staged the same way; a larger one goes
// to the library unchanged for host memory and is MPI_ERR_COUNT on device memory, since gddt
// stages a message as one MPI_PACKED message of an int count of bytes. The narrowed rows of
// entry_points.txt are generated from these; the packing forms are written out in
// interpose_large_count.cpp.
#pragma once

#include <mpi.h>

#include <climits>

#include "core/memory.hpp"

namespace gddt::mpi::large_count {

inline bool fits_int(MPI_Count count) { return count >= INT_MIN && count <= INT_MAX; }

// Whether a call takes the int path: every count that fits an int, and every negative one, which
// the int call rejects as the library would.
inline bool int_call_takes(MPI_Count count) { return count <= INT_MAX; }

// What the int call gets for `count`: itself where it fits an int, else -1 for a negative count
// (rejected there as the library would) and INT_MAX for a large one (never reaches it).
inline int narrowed(MPI_Count count) {
  return fits_int(count) ? static_cast<int>(count) : (count < 0 ? -1 : INT_MAX);
}

// Whether the library takes a call of a count beyond an int as it is: the buffer is host memory.
inline bool library_takes(const void* buffer) {
  memory::Kind kind;
  return memory::classify(buffer, &kind) == GDDT_OK && !kind.is_device();
}

// MPI_ERR_COUNT raised on `comm`, logged.
int count_too_large(MPI_Comm comm);

}  // namespace gddt::mpi::large_count
