// Calls from the lower layers into the ones above, which they may not include:
// an upper layer registers a function once and the layer that owns the moment
// runs it. Today the device API's proxy, which runs wherever gddt drives MPI's
// progress and stops before MPI_Finalize.
#pragma once

namespace gddt::hooks {

enum class Event {
  kProgress,  // inside an MPI call that waits or completes requests
              // (protocol/requests.cpp)
  kFinalize,  // MPI_Finalize, before gddt releases anything (mpi/interpose_finalize.cpp)
  kCount
};

using Hook = void (*)();

// Registers `hook` for `event` (a few per event; registering the same hook
// twice keeps one).
void add(Event event, Hook hook);
// Runs the hooks of `event`: one relaxed load when there are none.
void run(Event event);

}  // namespace gddt::hooks
