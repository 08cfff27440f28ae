// Releases held until the unpacks reading the sender's scratch, or the reads of a lent buffer, are
// done (internal.hpp).
#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "core/counters.hpp"
#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

namespace {

// A receiver that leaves the unpacks of several messages read through CUDA IPC running together
// (MPI_Waitall) sends each release, or marks each lent buffer read, once an event recorded after
// its unpack has passed.
struct HeldRelease {
  gpu::Event unpacked = nullptr;
  gpu::Stream stream = nullptr;  // where `unpacked` was recorded
  MPI_Comm data = MPI_COMM_NULL;
  int sender = 0;
  int transfer = 0;
  lending::Slot* read = nullptr;  // a lent buffer's slot to mark read instead of a release to send
  std::uint32_t generation = 0;
};

struct HeldReleases {
  std::mutex mutex;
  std::atomic<bool> any{false};
  std::vector<HeldRelease> held;
  gpu::EventPool events;
};

HeldReleases& held_releases() {
  static HeldReleases* instance = new HeldReleases;
  return *instance;
}

// Holds `release` until the work now queued on `stream` is done; false where no event could be had
// (the caller then waits and releases it itself).
bool hold(gpu::Stream stream, HeldRelease release) {
  HeldReleases& h = held_releases();
  const gpu::Event event = h.events.take(stream);
  if (event == nullptr) return false;
  if (gpu::event_record(event, stream) != GDDT_OK) {
    h.events.give(stream, event);
    return false;
  }
  release.unpacked = event;
  release.stream = stream;
  std::lock_guard<std::mutex> lock(h.mutex);
  h.held.push_back(release);
  h.any.store(true, std::memory_order_release);
  return true;
}

}  // namespace

void send_held_releases(bool wait) {
  if (wait) launch_gathered_reads();
  HeldReleases& h = held_releases();
  if (!h.any.load(std::memory_order_acquire)) return;
  std::vector<HeldRelease> due, still;
  {
    std::lock_guard<std::mutex> lock(h.mutex);
    // A stream's events pass in the order they were recorded, so once one has not, the ones after
    // it here on its stream are not asked: each query is a call into the driver (a few us on some
    // machines), and a Waitall polls these while up to 64 unpacks run. Two threads may hold theirs
    // out of recording order; an event not asked then is only released at a later poll.
    std::vector<gpu::Stream> behind;
    for (const HeldRelease& release : h.held) {
      bool done = true;
      if (wait) {
        gpu::event_synchronize(release.unpacked);
      } else if (std::find(behind.begin(), behind.end(), release.stream) != behind.end()) {
        done = false;
      } else {
        gpu::event_query(release.unpacked, &done);
        if (!done) behind.push_back(release.stream);
      }
      (done ? due : still).push_back(release);
    }
    h.held.swap(still);
    for (const HeldRelease& release : due) h.events.give(release.stream, release.unpacked);
    h.any.store(!h.held.empty(), std::memory_order_release);
  }
  counters::Stopwatch releasing(counters::Counter::kPeerRecvReleaseNs);
  for (const HeldRelease& release : due) {
    if (release.read != nullptr) {
      lending::finish_reading(*release.read, release.generation);
    } else {
      PMPI_Send(nullptr, 0, MPI_BYTE, release.sender, kReleaseTags + release.transfer, release.data);
    }
  }
}

bool hold_read(gpu::Stream reading, lending::Slot& state, std::uint32_t generation) {
  HeldRelease release;
  release.read = &state;
  release.generation = generation;
  return hold(reading, release);
}

Status release_scratch(gpu::Stream reading, MPI_Comm data, int sender, int transfer, Status* outcome, bool* held) {
  HeldRelease release;
  release.data = data;
  release.sender = sender;
  release.transfer = transfer;
  *held = reading != nullptr && hold(reading, release);
  if (*held) return GDDT_OK;
  if (reading != nullptr) {
    const Status read = gpu::stream_synchronize(reading);
    if (!is_error(*outcome)) *outcome = read;
  }
  counters::Stopwatch releasing(counters::Counter::kPeerRecvReleaseNs);
  return PMPI_Send(nullptr, 0, MPI_BYTE, sender, kReleaseTags + transfer, data) == MPI_SUCCESS ? GDDT_OK
                                                                                               : GDDT_ERR_MPI;
}

void release_unpacked() { send_held_releases(false); }

}  // namespace gddt::protocol::peers
