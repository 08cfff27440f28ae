#include "mpi/deferred.hpp"

#include <deque>
#include <mutex>
#include <vector>

#include "mpi/errors.hpp"
#include "mpi/requests.hpp"

namespace gddt::mpi::deferred {

std::atomic<int> detail::queued{0};

namespace {

struct Queued {
  MPI_Request request = MPI_REQUEST_NULL;
  Operation* operation = nullptr;
  gpu::Event packed = nullptr;  // recorded after the pack; null when the pack was done on return
  Status outcome = GDDT_OK;     // of a pack waited for when it was queued
};

struct Queue {
  std::mutex mutex;  // guards sends, spare_events
  std::deque<Queued> sends;
  std::vector<gpu::Event> spare_events;
  // Held while sends are started, so that they start in call order even when several threads
  // start them, and so that a thread that sees queued sends waits for them to be posted.
  std::mutex starting;
};

Queue& queue() {
  static auto* instance = new Queue;  // never destroyed: late threads may still post
  return *instance;
}

gpu::Event take_event(Queue& q) {
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    if (!q.spare_events.empty()) {
      gpu::Event event = q.spare_events.back();
      q.spare_events.pop_back();
      return event;
    }
  }
  gpu::Event event = nullptr;
  return gpu::event_create(&event) == GDDT_OK ? event : nullptr;
}

void give_event(Queue& q, gpu::Event event) {
  if (event == nullptr) return;
  std::lock_guard<std::mutex> lock(q.mutex);
  q.spare_events.push_back(event);
}

// Waits for the pack of `send` and starts it (with q.starting held). A failure is kept as the
// operation's result, reported when the user completes the request (the library request,
// never started, completes at once).
void start(Queue& q, Queued& send) {
  Operation& operation = *send.operation;
  Status packed = send.outcome;
  if (send.packed != nullptr) {
    packed = gpu::event_wait(send.packed, meanwhile_for(operation));
    give_event(q, send.packed);
  }
  int rc = raise(operation.comm, packed);
  if (rc == MPI_SUCCESS) rc = PMPI_Start(&send.request);
  if (rc != MPI_SUCCESS) {
    operation.finished = true;
    operation.early_result = rc;
  }
  detail::queued.fetch_sub(1, std::memory_order_acq_rel);
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
    send.packed = take_event(q);
    // Without an event to wait on, wait for the stream now: the start is then merely later.
    if (send.packed == nullptr || gpu::event_record(send.packed, stream) != GDDT_OK) {
      give_event(q, send.packed);
      send.packed = nullptr;
      send.outcome = gpu::stream_wait(stream, meanwhile_for(*operation));
    }
  }
  std::lock_guard<std::mutex> lock(q.mutex);
  q.sends.push_back(send);
  detail::queued.fetch_add(1, std::memory_order_acq_rel);
}

void start_all() {
  Queue& q = queue();
  std::lock_guard<std::mutex> starting(q.starting);
  Queued send;
  while (next(q, [](const Queued&) { return true; }, &send)) start(q, send);
}

void start_ready() {
  Queue& q = queue();
  std::unique_lock<std::mutex> starting(q.starting, std::try_to_lock);
  if (!starting.owns_lock()) return;  // another thread is starting them
  auto pack_done = [](const Queued& send) {
    bool done = true;
    return send.packed == nullptr || gpu::event_query(send.packed, &done) != GDDT_OK || done;
  };
  Queued send;
  while (next(q, pack_done, &send)) start(q, send);
}

void release() {
  Queue& q = queue();
  std::lock_guard<std::mutex> lock(q.mutex);
  for (gpu::Event event : q.spare_events) gpu::event_destroy(event);
  q.spare_events.clear();
}

}  // namespace gddt::mpi::deferred
