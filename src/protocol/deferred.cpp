#include "protocol/deferred.hpp"

#include <deque>
#include <mutex>
#include <vector>

#include "core/config.hpp"
#include "core/event_pool.hpp"
#include "pack/backend.hpp"
#include "protocol/requests.hpp"

namespace gddt::protocol::deferred {

std::atomic<int> detail::queued{0};

namespace {

struct Queued {
  MPI_Request request = MPI_REQUEST_NULL;
  Operation* operation = nullptr;
  // Recorded after the pack; null when the pack was done on return, or when it was part of a set
  // whose first send (earlier in the queue, so started first) holds the set's event.
  gpu::Event packed = nullptr;
  gpu::Stream packed_on = nullptr;      // where `packed` was recorded
  bool packed_seen_done = false;        // a query found `packed` complete: no need to wait for it
  std::uint64_t set = 0;                // the set of packs this send's was queued with (0: none)
  Status outcome = GDDT_OK;             // of a pack waited for when it was queued, or of queuing it
  gpu::Stream pack_waits_on = nullptr;  // set while the pack itself waits to be queued there
};

struct Queue {
  std::mutex mutex;          // guards sends, waiting_packs, run, sets and the sends' fields
  std::deque<Queued> sends;  // pointers to its elements stay valid while q.starting is held
  gpu::EventPool events;
  int waiting_packs = 0;   // sends whose packs are not queued yet
  int run = 0;             // sends queued since a call other than a nonblocking send found sends queued
  std::uint64_t sets = 0;  // sets of packs queued so far
  // Held while sends are started, so that they start in call order even when several threads start
  // them, and so that a thread that sees queued sends waits for them to be posted.
  std::mutex starting;
};

Queue& queue() {
  static auto* instance = new Queue;  // never destroyed: late threads may still post
  return *instance;
}

// The sends after the first of a set have no event of their own: when waiting for the set's event
// fails, so do they.
void fail_set(Queue& q, std::uint64_t set, Status failure) {
  std::lock_guard<std::mutex> lock(q.mutex);
  for (Queued& send : q.sends) {
    if (send.set == set) send.outcome = failure;
  }
}

// Waits for the pack of `send` and starts it (with q.starting held). A failure is kept as the
// operation's result, reported when the user completes the request (the library request, never
// started, completes at once).
void start(Queue& q, Queued& send) {
  Operation& operation = *send.operation;
  Status packed = send.outcome;
  if (send.packed != nullptr) {
    if (!send.packed_seen_done) packed = gpu::event_wait(send.packed, meanwhile_for(operation));
    q.events.give(send.packed_on, send.packed);
    if (is_error(packed) && send.set != 0) fail_set(q, send.set, packed);
  }
  const int rc = is_error(packed) ? MPI_SUCCESS : PMPI_Start(&send.request);
  if (is_error(packed) || rc != MPI_SUCCESS) {
    operation.finished = true;
    operation.early = Outcome{packed, rc};
  }
  detail::queued.fetch_sub(1, std::memory_order_acq_rel);
}

// Queues the packs that wait to share launches, a set per stream (with q.starting held: no send
// starts meanwhile, and the sends stay where they are in the queue). A pack that fails to queue
// fails its send when it starts. One event marks the end of a set's launches, held by its first
// send: sends start in queue order, so the others start after it was found complete (an event per
// send cost each a record and a query, about 1.5 us of the host's time).
void queue_waiting_packs(Queue& q) {
  std::vector<Queued*> waiting;
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    if (q.waiting_packs == 0) return;
    for (Queued& send : q.sends) {
      if (send.pack_waits_on != nullptr) waiting.push_back(&send);
    }
    q.waiting_packs -= static_cast<int>(waiting.size());
  }
  std::vector<bool> taken(waiting.size(), false);
  std::vector<MessageMove> moves;
  std::vector<Queued*> members;
  for (std::size_t first = 0; first < waiting.size(); ++first) {
    if (taken[first]) continue;
    const gpu::Stream stream = waiting[first]->pack_waits_on;
    moves.clear();
    members.clear();
    for (std::size_t i = first; i < waiting.size(); ++i) {
      if (taken[i] || waiting[i]->pack_waits_on != stream) continue;
      taken[i] = true;
      const Operation& operation = *waiting[i]->operation;
      moves.push_back({&operation.message, &operation.staging, operation.message.bytes()});
      members.push_back(waiting[i]);
    }
    const Status queued = queue_packs(moves.data(), static_cast<int>(moves.size()), stream);
    gpu::Event event = is_error(queued) ? nullptr : q.events.take(stream);
    Status outcome = queued;
    if (!is_error(queued) && (event == nullptr || gpu::event_record(event, stream) != GDDT_OK)) {
      q.events.give(stream, event);
      event = nullptr;
      outcome = gpu::stream_wait(stream, meanwhile_for(*members.front()->operation));
    }
    std::lock_guard<std::mutex> lock(q.mutex);
    const std::uint64_t set = ++q.sets;
    for (Queued* send : members) {
      send->set = set;
      send->packed = send == members.front() ? event : nullptr;
      send->packed_on = stream;
      send->outcome = outcome;
      send->pack_waits_on = nullptr;
    }
  }
}

// Takes the oldest queued send if `ready` says it may start.
template <typename Ready>
bool next(Queue& q, Ready&& ready, Queued* send) {
  std::lock_guard<std::mutex> lock(q.mutex);
  if (q.sends.empty() || !ready(q.sends.front())) return false;
  *send = q.sends.front();
  q.sends.pop_front();
  return true;
}

}  // namespace

void enqueue(MPI_Request request, Operation* operation, gpu::Stream stream) {
  Queue& q = queue();
  Queued send{request, operation, nullptr};
  if (stream != nullptr) {
    send.packed_on = stream;
    send.packed = q.events.take(stream);
    // Without an event to wait on, wait for the stream now: the start is then merely later.
    if (send.packed == nullptr || gpu::event_record(send.packed, stream) != GDDT_OK) {
      q.events.give(stream, send.packed);
      send.packed = nullptr;
      send.outcome = gpu::stream_wait(stream, meanwhile_for(*operation));
    }
  }
  std::lock_guard<std::mutex> lock(q.mutex);
  q.sends.push_back(send);
  ++q.run;
  detail::queued.fetch_add(1, std::memory_order_acq_rel);
}

// GDDT_PACK_SETS_ALONE: sends of a run whose packs launch at once, one each; those after them
// wait to share a launch. Its built-in model is two, not more: a window of 64 sends of 1 MiB
// through UCX reached 71-85% of the contiguous bandwidth with two, 67-82% with four and 61-79%
// with eight (one job, two H200s).
std::uint64_t sends_launched_alone() {
  static const std::uint64_t alone = config::settings().pack_sets_alone;
  return alone;
}

bool sets_enabled() {
  static const bool sets = config::settings().pack_sets;
  return sets;
}

bool joins_a_set() {
  if (!sets_enabled()) return false;
  Queue& q = queue();
  std::lock_guard<std::mutex> lock(q.mutex);
  return static_cast<std::uint64_t>(q.run) >= sends_launched_alone();
}

void enqueue_unpacked(MPI_Request request, Operation* operation, gpu::Stream stream) {
  Queue& q = queue();
  bool full = false;
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    Queued send{request, operation};
    send.pack_waits_on = stream;
    q.sends.push_back(send);
    ++q.run;
    full = ++q.waiting_packs >= pack::kSetMost;
    detail::queued.fetch_add(1, std::memory_order_acq_rel);
  }
  if (full) {
    std::lock_guard<std::mutex> starting(q.starting);
    queue_waiting_packs(q);
  }
}

void start_all() {
  Queue& q = queue();
  std::lock_guard<std::mutex> starting(q.starting);
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    q.run = 0;
  }
  // Another thread may queue sends meanwhile, their packs waiting too: queue those and go on.
  for (;;) {
    queue_waiting_packs(q);
    Queued send;
    if (next(
            q, [](const Queued& s) { return s.pack_waits_on == nullptr; }, &send)) {
      start(q, send);
      continue;
    }
    std::lock_guard<std::mutex> lock(q.mutex);
    if (q.sends.empty()) break;
  }
}

void start_ready(bool in_run) {
  Queue& q = queue();
  std::unique_lock<std::mutex> starting(q.starting, std::try_to_lock);
  if (!starting.owns_lock()) return;  // another thread is starting them
  if (!in_run) {
    {
      std::lock_guard<std::mutex> lock(q.mutex);
      q.run = 0;
    }
    queue_waiting_packs(q);
  }
  auto pack_done = [](Queued& send) {
    if (send.pack_waits_on != nullptr) return false;
    if (send.packed == nullptr) return true;
    bool done = true;
    if (gpu::event_query(send.packed, &done) != GDDT_OK) return true;  // start() waits and reports it
    send.packed_seen_done = done;
    return done;
  };
  Queued send;
  while (next(q, pack_done, &send)) start(q, send);
}

void release() {
  queue().events.destroy_idle();
}

}  // namespace gddt::protocol::deferred
