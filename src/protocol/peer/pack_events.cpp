// Events that order a receiver's read after the sender's pack (internal.hpp): those lent to one
// transfer read through CUDA IPC, and those recorded after the parts of staged messages.
#include <algorithm>
#include <mutex>
#include <vector>

#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

namespace {

constexpr std::uint32_t kMostPackEvents = 256;

struct PackEvents {
  std::mutex mutex;
  std::vector<PackEvent> idle;
  std::uint32_t made = 0;
};

PackEvents& pack_events() {
  static PackEvents* instance = new PackEvents;
  return *instance;
}

}  // namespace

gpu::EventPool& part_events() {
  static gpu::EventPool* instance = new gpu::EventPool;
  return *instance;
}

bool take_pack_event(int device, PackEvent* taken) {
  PackEvents& events = pack_events();
  std::lock_guard<std::mutex> lock(events.mutex);
  auto found = std::find_if(events.idle.begin(), events.idle.end(),
                            [device](const PackEvent& event) { return event.device == device; });
  if (found != events.idle.end()) {
    *taken = *found;
    events.idle.erase(found);
    return true;
  }
  if (events.made >= kMostPackEvents) return false;
  PackEvent made;
  made.device = device;
  if (gpu::ipc_event_create(device, &made.event, made.handle) != GDDT_OK) return false;
  made.id = ++events.made;
  *taken = made;
  return true;
}

void give_back(const PackEvent& event) {
  PackEvents& events = pack_events();
  std::lock_guard<std::mutex> lock(events.mutex);
  events.idle.push_back(event);
}

void destroy_pack_events() {
  PackEvents& events = pack_events();
  std::lock_guard<std::mutex> lock(events.mutex);
  for (const PackEvent& event : events.idle) gpu::event_destroy(event.event);
  events.idle.clear();
}

}  // namespace gddt::protocol::peers
