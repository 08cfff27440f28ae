// Ordering events kept for reuse. An event must belong to the GPU of the streams that record it,
// so each idle one is filed under the stream it was last recorded on (gddt's streams are one per
// GPU and purpose): taking one for a stream asks the driver for that stream's GPU only when none is
// idle there.
#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include "core/gpu.hpp"

namespace gddt::gpu {

class EventPool {
 public:
  // An event to record on `stream`; null when none could be made.
  Event take(Stream stream);
  // Gives back an event taken for `stream` (null is ignored).
  void give(Stream stream, Event event);
  // Destroys the idle events (at MPI_Finalize).
  void destroy_idle();

 private:
  std::mutex mutex_;
  std::vector<std::pair<Stream, Event>> idle_;
};

}  // namespace gddt::gpu
