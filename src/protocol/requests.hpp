// gddt's operations behind real MPI requests. A staged send or receive is posted to the MPI library
// as an ordinary request on the staging buffer; the user gets that request itself, so it works with
// every completion function and mixes with requests gddt never touched. What remains to do when it
// completes (unpack a receive, give staging back) is kept here, keyed by the request handle, and
// done by the interposed completion functions.
#pragma once

#include <mpi.h>

#include <atomic>
#include <memory>
#include <vector>

#include "protocol/operation.hpp"

namespace gddt::protocol {

namespace requests {

namespace detail {
extern std::atomic<std::size_t> alive;  // live + detached operations, read without the lock
}

// True when any gddt operation is alive: completion calls forward untouched otherwise.
inline bool any() { return detail::alive.load(std::memory_order_acquire) != 0; }
// Only for requests the library has not completed yet: completed ones may share one handle. A
// handle can stand for two operations for a moment: once the library frees a request in a
// completion call, another thread may be handed the same handle before the first has taken its
// operation out. So entries are per operation, and the newest one of a handle is its current
// request's.
void add(MPI_Request request, std::unique_ptr<Operation> operation);
// Claims the newest unclaimed operation of `request` for the calling thread (null when the request
// is not gddt's). Other threads' claims skip it until release(), so a handle the library frees
// inside this thread's completion call, and hands to another thread's new request, cannot lead that
// thread to this operation. Two threads never legitimately complete one request at once.
Operation* claim(MPI_Request request);
void release(Operation* operation);
// The partitioned operation of `request`, claimed or not: MPI_Pready and MPI_Parrived may run in
// several threads at once, and beside a completion call. Null where the request is not gddt's.
Operation* partitioned(MPI_Request request);
// Finishes the watched receives on `comm` (peers.hpp; MPI_COMM_NULL: on every communicator) whose
// messages the library has matched, so that the markers they took have their headers taken too (a
// probe then knows which is next), and the buffers lent to them are read.
void finish_arrived_markers(MPI_Comm comm);
// Removes a (claimed) operation whose request is complete.
std::unique_ptr<Operation> take(MPI_Request request, const Operation* operation);

// A request the user freed (MPI_Request_free) while active: kept, with its handle, until the
// library completes it, so staging outlives the transfer and receives are still unpacked.
void detach(MPI_Request request, std::unique_ptr<Operation> operation);
// Completes what it can of the detached requests, then runs the progress hooks (core/hooks.hpp);
// cheap when there is nothing to do.
void progress_detached();
// Waits for every detached request and frees the abandoned ones (at MPI_Finalize).
void drain_detached();
// An operation whose request the library freed without completing it (it reported it
// MPI_ERR_PENDING yet handed back MPI_REQUEST_NULL): out of the table, so the handle's value,
// reused for a later request, is not taken for it; its staging is kept until drain_detached(),
// since the library may still write into it.
void abandon(MPI_Request request, const Operation* operation);

}  // namespace requests

// The completion work of `operation` whose request completed with `error` (the library's MPI code
// for it) and `status`: moves a receive's data into the user's buffer unless it failed or was
// cancelled. With `queued_on`, GPU work may be left running: *queued_on is then the stream to
// synchronize before the user's buffer is read and the operation is dropped (null when nothing was
// left running).
Outcome finish(Operation& operation, int error, const MPI_Status& status, gpu::Stream* queued_on = nullptr);
// finish() with `queued_on` for `count` receives whose requests completed without error, with
// statuses[i] for operations[i]: the unpacks that are one launch each share launches, a set per
// stream, and so do those out of senders' scratch read through CUDA IPC (peers::queue_gathered).
// Every stream left with work is added to *queued (once); failures are kept as each operation's
// early result.
void finish_receives(Operation* const* operations, const MPI_Status* statuses, int count,
                     std::vector<gpu::Stream>* queued);

}  // namespace gddt::protocol
