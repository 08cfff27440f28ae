// gddt's operations behind real MPI requests. A staged send or receive is posted to the MPI
// library as an ordinary request on the staging buffer; the user gets that request itself, so
// it works with every completion function and mixes with requests gddt never touched. What
// remains to do when it completes (unpack a receive, give staging back) is kept here, keyed
// by the request handle, and done by the interposed completion functions.
#pragma once

#include <mpi.h>

#include <memory>

#include "protocol/message.hpp"

namespace gddt::mpi {

struct Operation {
  enum class Kind { kSend, kReceive };
  Kind kind = Kind::kSend;
  bool persistent = false;
  bool active = true;     // a persistent request between MPI_Start and its completion
  bool finished = false;  // completion work done early (MPI_Request_get_status)
  protocol::Route route = protocol::Route::kForward;
  protocol::Message message;  // the user's buffer
  protocol::Staging staging;  // what the MPI library really sends or receives
  MPI_Comm comm = MPI_COMM_NULL;  // whose error handler hears of a failure at completion
};

namespace requests {

// True when any gddt operation is alive: completion calls forward untouched otherwise.
bool any();
// Only for requests the library has not completed yet: completed ones may share one handle.
void add(MPI_Request request, std::unique_ptr<Operation> operation);
Operation* find(MPI_Request request);
std::unique_ptr<Operation> take(MPI_Request request);

// A request the user freed (MPI_Request_free) while active: kept, with its handle, until the
// library completes it, so staging outlives the transfer and receives are still unpacked.
void detach(MPI_Request request, std::unique_ptr<Operation> operation);
// Completes what it can of the detached requests; cheap when there are none.
void progress_detached();
// Waits for every detached request (at MPI_Finalize).
void drain_detached();

}  // namespace requests

// The completion work of `operation` whose request completed with `error` (the MPI code for
// it) and `status`: unpacks a receive unless it failed or was cancelled. Returns MPI_SUCCESS
// or the class it raised on the operation's communicator.
int finish(Operation& operation, int error, const MPI_Status& status);

}  // namespace gddt::mpi
