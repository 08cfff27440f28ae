// Nonblocking sends whose pack may still be running. MPI_Isend of a staged message queues the pack
// on the GPU, creates the library request as a persistent send of the staging (a real request,
// which the user holds like any other) and returns; the request is started once the pack is done,
// at a later MPI call. A window of sends thus packs back to back on the GPU instead of waiting for
// one kernel completion each.
//
// Two rules keep MPI's semantics. Order: messages are ordered by when their sends are posted, so
// queued sends start in call order, and no other send is posted while any is queued. Progress: a
// call that may wait for another process (receives, waits, probes, collectives) first starts every
// queued send, so no peer waits for a message this process holds back while it blocks. Calls that
// do not block start the sends whose packs are done.
#pragma once

#include <mpi.h>

#include <atomic>

#include "core/gpu.hpp"

namespace gddt::protocol {

struct Operation;

namespace deferred {

namespace detail {
extern std::atomic<int> queued;  // sends queued and not yet started, read without the lock
}

inline bool any() { return detail::queued.load(std::memory_order_acquire) != 0; }

// Queues the start of `request` (a persistent send that is not started), whose operation's pack was
// queued on `stream` (null: the pack is done). The operation must stay alive until the send is
// started.
void enqueue(MPI_Request request, Operation* operation, gpu::Stream stream);
// Whether packs and unpacks of messages posted together share launches (GDDT_PACK_SETS).
bool sets_enabled();
// Whether the next send's pack should wait to share a launch (enqueue_unpacked): it follows at
// least two sends queued back to back, with no other MPI call in between that found sends queued
// (GDDT_PACK_SETS). The first sends of a run launch at once, so a send or two followed by
// computation still pack while it runs.
bool joins_a_set();
// Queues the start of `request` like enqueue(), but its pack too: the packs of such sends are
// queued on `stream` (their message stream) in sets of up to pack::kSetMost per launch, once that
// many wait or at the next MPI call other than a nonblocking send. The operation's pack must be one
// launch (moves_in_one_launch).
void enqueue_unpacked(MPI_Request request, Operation* operation, gpu::Stream stream);
// Starts every queued send in order, waiting for their packs.
void start_all();
// Starts the queued sends whose packs are done, in order, up to the first that is not, first
// queuing the waiting packs unless `in_run` (a nonblocking send adding to them).
void start_ready(bool in_run);

// What every call that may block does first.
inline void before_blocking() {
  if (any()) start_all();
}
// What calls that do not block do first.
inline void advance() {
  if (any()) start_ready(false);
}
// What a nonblocking send does first.
inline void advance_in_run() {
  if (any()) start_ready(true);
}

// Releases the events kept for reuse (at MPI_Finalize, after start_all()).
void release();

}  // namespace deferred
}  // namespace gddt::protocol
