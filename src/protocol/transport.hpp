// The transports: the ways one side of a point-to-point call reaches the MPI library. Each is one
// row of a table (transports.def; a row's fields: route.hpp): its route, its name, whether it
// serves a side, and what it does at the three points of a transfer: staging the message (what the
// library is handed), before the library sends (filling the staging), after the library received
// (moving the staging into the user's buffer). A side takes the first row, in the table's order of
// preference, that serves it, and keeps it: nothing overrides a row's choice afterwards.
#pragma once

#include <mpi.h>

#include <memory>

#include "protocol/operation.hpp"
#include "protocol/route.hpp"

namespace gddt::protocol {

const char* route_name(Route route);

// While one lives on a thread, the MPI library gets that thread's device messages as host staging
// only: the device API's proxy moves messages that a running kernel waits for, and the CUDA calls
// of a CUDA-aware library (a synchronous copy, a synchronize) may wait for that very kernel.
class LibraryHostOnly {
 public:
  LibraryHostOnly();
  ~LibraryHostOnly();
  LibraryHostOnly(const LibraryHostOnly&) = delete;
  LibraryHostOnly& operator=(const LibraryHostOnly&) = delete;

 private:
  bool was_;
};

// Chooses the transport of `message` (classified; side->buffer/count/datatype hold the user's
// arguments) and prepares *side: what the library is handed, and the operation with its staging
// where there is work around the library's call. `comm` hears of failures at completion.
Status stage(const Message& message, const Call& call, MPI_Comm comm, Side* side);

// Before the library sends: fills the staging of a send (returns when the bytes are in place).
Status fill_outgoing(Operation& operation);
// The same, but where the GPU packs it in one launch only queued: *stream is then the stream to
// wait for (null when the bytes are in place on return).
Status queue_outgoing(Operation& operation, gpu::Stream* stream);
// Whether the send's whole fill is one launch, which it may share with other sends' (deferred).
bool fills_in_one_launch(const Operation& operation);

// Whether the library moves packed bytes that gddt packs and unpacks: then a persistent send's
// start can be held until its fill is done, and a receive's status counts packed bytes. False
// where the library moves the user's datatype (its status then counts the user's elements).
bool moves_packed_bytes(const Operation& operation);
// Moves what the library received into the user's buffer. With `queued_on`, GPU work may be left
// running: *queued_on is then the stream to wait for.
Status empty_incoming(Operation& operation, std::int64_t received, gpu::Stream* queued_on);
// Whether emptying `received` bytes is one launch that may share a set (queue_unpacks).
bool empties_in_one_launch(const Operation& operation, std::int64_t received);

// A partitioned operation's partition: its part of a send's staging filled from the user's
// buffer, or its part of a receive's moved into the user's buffer unless an earlier MPI_Parrived
// since the start did that already (both return when the bytes are in place).
Status fill_partition(Operation& operation, int partition);
Status empty_partition(Operation& operation, int partition);

// Frees the library datatypes the transports made (at MPI_Finalize).
void release_transports();

}  // namespace gddt::protocol
