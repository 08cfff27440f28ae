// Requests that outlive their sends (internal.hpp): what gddt's own requests keep alive until the
// library completes them, and what MPI_Finalize leaves to the library.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "core/config.hpp"
#include "core/log.hpp"
#include "core/pool.hpp"
#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

namespace {

// What a transfer held goes back once its request completed.
void retire(const Pending& entry) {
  // A receiver that unpacked nothing (a truncated message) released the scratch without waiting
  // for the pack, which must be done before the scratch (and the eager path's flag) goes back.
  release_eager(entry.eager);
  if (entry.pack_event.id != 0) {
    gpu::event_synchronize(entry.pack_event.event);
    give_back(entry.pack_event);
  }
  scratch_held_for_ipc.fetch_sub(entry.scratch_held);
}

// A receiver reads a sender's scratch through CUDA IPC until it sends the release, which needs the
// sender alive: MPI_Finalize waits for releases up to this long (a receive never posted, which MPI
// calls erroneous, must not hold the process for ever).
constexpr double kReleaseWaitSeconds = 10.0;

// Only transfers through CUDA IPC hold scratch for the receiver, or a landing's slot in it.
bool awaits_release(const Pending& entry) { return entry.scratch_held > 0 || entry.eager.receiver >= 0; }

}  // namespace

std::atomic<std::int64_t> scratch_held_for_ipc{0};

std::int64_t ipc_scratch_budget() { return static_cast<std::int64_t>(pool::shared_most()); }

Lingering& lingering() {
  static Lingering* instance = new Lingering;
  return *instance;
}

void linger(Pending entry) {
  if (entry.request == MPI_REQUEST_NULL) return;
  int done = 0;
  if (PMPI_Test(&entry.request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) {
    retire(entry);
    return;
  }
  Lingering& l = lingering();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.pending.push_back(std::move(entry));
  l.any.store(true, std::memory_order_release);
}

void linger(MPI_Request* request, std::vector<char>* bytes) {
  Pending entry;
  entry.request = *request;
  entry.bytes = std::move(*bytes);
  linger(std::move(entry));
  *request = MPI_REQUEST_NULL;
}

void complete_lingering() {
  Lingering& l = lingering();
  if (!l.any.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(l.mutex);
  auto& pending = l.pending;
  const std::size_t before = pending.size();
  pending.erase(std::remove_if(pending.begin(), pending.end(),
                               [](Pending& entry) {
                                 int done = 0;
                                 const bool over =
                                     PMPI_Test(&entry.request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done;
                                 if (over) retire(entry);
                                 return over;
                               }),
                pending.end());
  l.retired += before - pending.size();
  l.any.store(!pending.empty(), std::memory_order_release);
}

std::uint64_t lingering_retired() {
  Lingering& l = lingering();
  std::lock_guard<std::mutex> lock(l.mutex);
  return l.retired;
}

void abandon_lingering() {
  const double start = PMPI_Wtime();
  Lingering& l = lingering();
  for (;;) {
    complete_lingering();
    std::lock_guard<std::mutex> lock(l.mutex);
    const bool due = std::any_of(l.pending.begin(), l.pending.end(), awaits_release);
    if (!due || PMPI_Wtime() - start > kReleaseWaitSeconds) break;
  }
  std::lock_guard<std::mutex> lock(l.mutex);
  if (!l.pending.empty())
    GDDT_LOG(kInfo, "MPI_Finalize: %zu requests of the peer protocol left to the library", l.pending.size());
  for (Pending& entry : l.pending) {
    if (awaits_release(entry)) {
      GDDT_LOG(kWarn, "MPI_Finalize: a message of the peer protocol was never received (a receive never posted?)");
      PMPI_Cancel(&entry.request);
    }
    // No pack may still write another process's landing once MPI_Finalize closes the mappings.
    release_eager(entry.eager);
    entry.eager = EagerHold{};
    if (entry.request != MPI_REQUEST_NULL) PMPI_Request_free(&entry.request);
  }
  // Kept to the end of the process, reachable (a leak checker sees no leak): the library may
  // still read these bytes until it finalizes. Nothing is allocated where nothing lingers.
  if (!l.pending.empty()) {
    static std::vector<Pending>* abandoned = new std::vector<Pending>;
    abandoned->insert(abandoned->end(), std::make_move_iterator(l.pending.begin()),
                      std::make_move_iterator(l.pending.end()));
    l.pending.clear();
  }
  l.any.store(false, std::memory_order_release);
}

}  // namespace gddt::protocol::peers
