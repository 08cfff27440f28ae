#include "core/event_pool.hpp"

#include <algorithm>

namespace gddt::gpu {

Event EventPool::take(Stream stream) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto idle = std::find_if(idle_.begin(), idle_.end(),
                             [stream](const std::pair<Stream, Event> &entry) { return entry.first == stream; });
    if (idle != idle_.end()) {
      const Event event = idle->second;
      idle_.erase(idle);
      return event;
    }
  }
  Event event = nullptr;
  return event_create(stream_device(stream), &event) == GDDT_OK ? event : nullptr;
}

void EventPool::give(Stream stream, Event event) {
  if (event == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.emplace_back(stream, event);
}

void EventPool::destroy_idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &entry : idle_) event_destroy(entry.second);
  idle_.clear();
}

}  // namespace gddt::gpu
