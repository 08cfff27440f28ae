// Unpack on arrival: the receives of one completion call unpacked as their messages come in.
#pragma once

#include <mpi.h>

#include "protocol/requests.hpp"

namespace gddt::protocol {

// Unpacks the device receives among a Waitall's `count` requests (handles[i], and operations[i]
// behind it, null where gddt has none) as they arrive, so that the GPU unpacks earlier messages
// while the library still moves later ones; the library's Waitall then only collects them.
// MPI_Request_get_status drives progress without freeing the requests, so errors and statuses still
// come from that Waitall. Receives complete mostly in the order they were posted, so it waits for
// the oldest one not yet unpacked, then asks once about each following one, and unpacks those that
// have arrived too together (up to pack::kSetMost a launch, with GDDT_PACK_SETS): asking about
// every one each pass costs the square of their number in library calls, each of which runs the
// progress engine (several microseconds each with many device transfers in flight), and a launch
// per message costs the host as much again.
void unpack_as_they_arrive(const MPI_Request* handles, Operation* const* operations, int count);

}  // namespace gddt::protocol
