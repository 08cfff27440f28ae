#include "protocol/requests.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "core/handle_key.hpp"
#include "core/hooks.hpp"
#include "protocol/peer/peers.hpp"
#include "protocol/transport.hpp"

namespace gddt::protocol {
namespace {

struct Table {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, std::vector<std::unique_ptr<Operation>>> live;
  std::vector<std::pair<MPI_Request, std::unique_ptr<Operation>>> detached;
  std::vector<std::unique_ptr<Operation>> abandoned;
  std::atomic<bool> has_detached{false};
};

Table& table() {
  // Never destroyed: requests may still be completed by late threads during exit.
  static auto* instance = new Table;
  return *instance;
}

}  // namespace

namespace requests {

std::atomic<std::size_t> detail::alive{0};

void add(MPI_Request request, std::unique_ptr<Operation> operation) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.live[handle_key(request)].push_back(std::move(operation));
  detail::alive.fetch_add(1);
}

Operation* claim(MPI_Request request) {
  if (!any() || request == MPI_REQUEST_NULL) return nullptr;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.live.find(handle_key(request));
  if (it == t.live.end()) return nullptr;
  for (auto entry = it->second.rbegin(); entry != it->second.rend(); ++entry) {
    if ((*entry)->claimed) continue;
    (*entry)->claimed = true;
    return entry->get();
  }
  return nullptr;
}

Operation* partitioned(MPI_Request request) {
  if (!any() || request == MPI_REQUEST_NULL) return nullptr;
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.live.find(handle_key(request));
  if (it == t.live.end() || it->second.empty() || it->second.back()->partitions == 0) return nullptr;
  return it->second.back().get();
}

void finish_arrived_markers(MPI_Comm comm) {
  if (!any()) return;
  std::vector<std::pair<MPI_Request, Operation*>> watched;
  {
    Table& t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    for (auto& [key, operations] : t.live) {
      Operation* operation = operations.empty() ? nullptr : operations.back().get();
      if (operation == nullptr || !operation->watches_markers || !operation->active || operation->finished ||
          operation->claimed || (comm != MPI_COMM_NULL && operation->comm != comm))
        continue;
      operation->claimed = true;
      MPI_Request request = MPI_REQUEST_NULL;
      std::memcpy(&request, &key, sizeof request);
      watched.emplace_back(request, operation);
    }
  }
  for (auto& [request, operation] : watched) {
    int flag = 0;
    MPI_Status status;
    const int rc = PMPI_Request_get_status(request, &flag, &status);
    if (rc == MPI_SUCCESS && flag) finish(*operation, rc, status);
    release(operation);
  }
}

namespace {
// The peer protocol waits on it where a probe or a lent buffer needs the markers receives took.
[[maybe_unused]] const bool marker_finisher_set = (peers::set_marker_finisher(finish_arrived_markers), true);
}  // namespace

void release(Operation* operation) {
  if (operation == nullptr) return;
  std::lock_guard<std::mutex> lock(table().mutex);
  operation->claimed = false;
}

std::unique_ptr<Operation> take(MPI_Request request, const Operation* operation) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.live.find(handle_key(request));
  if (it == t.live.end()) return nullptr;
  auto& operations = it->second;
  for (auto entry = operations.begin(); entry != operations.end(); ++entry) {
    if (entry->get() != operation) continue;
    auto taken = std::move(*entry);
    operations.erase(entry);
    if (operations.empty()) t.live.erase(it);
    detail::alive.fetch_sub(1);
    return taken;
  }
  return nullptr;
}

void detach(MPI_Request request, std::unique_ptr<Operation> operation) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.detached.emplace_back(request, std::move(operation));
  detail::alive.fetch_add(1);
  t.has_detached.store(true, std::memory_order_release);
}

namespace {

// Completes detached requests: all of them when `wait`, else those already done.
void complete_detached(bool wait) {
  Table& t = table();
  if (!t.has_detached.load(std::memory_order_acquire)) return;
  std::vector<std::pair<MPI_Request, std::unique_ptr<Operation>>> pending;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    pending.swap(t.detached);
    t.has_detached.store(false, std::memory_order_release);
  }
  std::vector<std::pair<MPI_Request, std::unique_ptr<Operation>>> still;
  for (auto& [request, operation] : pending) {
    MPI_Status status;
    int done = 0;
    int rc = wait ? PMPI_Wait(&request, &status) : PMPI_Test(&request, &done, &status);
    if (!wait && rc == MPI_SUCCESS && !done) {
      still.emplace_back(request, std::move(operation));
      continue;
    }
    finish(*operation, rc, status);
    if ((operation->persistent || operation->library_persistent) && request != MPI_REQUEST_NULL)
      PMPI_Request_free(&request);
  }
  std::lock_guard<std::mutex> lock(t.mutex);
  detail::alive.fetch_sub(pending.size() - still.size());
  for (auto& entry : still) t.detached.push_back(std::move(entry));
  if (!t.detached.empty()) t.has_detached.store(true, std::memory_order_release);
}

}  // namespace

void progress_detached() {
  complete_detached(false);
  peers::progress();
  hooks::run(hooks::Event::kProgress);
}

void drain_detached() {
  complete_detached(true);
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.abandoned.clear();
}

void abandon(MPI_Request request, const Operation* operation) {
  std::unique_ptr<Operation> taken = take(request, operation);
  if (!taken) return;
  GDDT_LOG(kWarn, "the MPI library freed a request it reported pending (MPI_ERR_PENDING): its message is lost");
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.abandoned.push_back(std::move(taken));
}

}  // namespace requests

namespace {

// The bookkeeping part of finish(): marks the operation finished and says whether it is a receive
// with bytes to move into the user's buffer (*received of them). A marker it resolves may leave the
// GPU unpacking, where `resolved_on` allows it: *resolved_on is then the stream to synchronize; or,
// with `gathered`, may add its unpack there (peers::queue_gathered launches it).
bool takes_incoming(Operation& operation, int error, const MPI_Status& status, int* received,
                    gpu::Stream* resolved_on, std::vector<peers::GatheredUnpack>* gathered = nullptr) {
  operation.finished = true;
  operation.early = Outcome{};  // a library error at this completion is the caller's to return
  if (operation.kind == Operation::Kind::kSend || error != MPI_SUCCESS) return false;
  // Asked before the cancelled flag: collectives cannot be cancelled, and Open MPI 4.1 leaves that
  // flag of a file request's status unset (whatever the memory held); a file read's stand-in holds
  // the buffer's own bytes wherever the library wrote none, so moving it back is always right.
  if (operation.kind == Operation::Kind::kCollective) {
    operation.early.status = operation.collective->complete();
    return false;
  }
  int cancelled = 0;
  PMPI_Test_cancelled(&status, &cancelled);
  if (cancelled) return false;
  *received = 0;
  if (operation.watches_markers) {
    bool handled = false;
    operation.early.status = peers::resolve(operation, status, &handled, resolved_on, gathered);
    if (handled) return false;
  }
  if (!moves_packed_bytes(operation)) return true;  // the library wrote the typemap itself
  // A partitioned receive arrives whole (the library matches partitioned sizes exactly) and is moved
  // whole, the partitions MPI_Parrived moved included: through Open MPI 5.0.11 a partition it had
  // reported arrived was found stale in the buffer after completion (docs/usage.md).
  if (operation.partitions > 0) {
    *received = operation.message.bytes();
    return *received > 0;
  }
  PMPI_Get_count(&status, MPI_PACKED, received);
  // A longer message than the receive holds was truncated: the library reports MPI_ERR_TRUNCATE
  // through the request (calls like MPI_Request_get_status do not), except for the one byte more
  // that holed staging takes (transport.cpp), which gddt reports. The receive buffer's contents are
  // undefined then, so nothing is unpacked.
  if (*received > operation.message.bytes()) {
    operation.early.status = GDDT_ERR_TRUNCATE;
    return false;
  }
  return *received > 0;
}

// The outcome kept for the user, marked reported once handed out.
Outcome hand_out(Operation& operation) {
  Outcome outcome = operation.early;
  operation.early.reported = true;
  return outcome;
}

}  // namespace

Outcome finish(Operation& operation, int error, const MPI_Status& status, gpu::Stream* queued_on) {
  if (queued_on != nullptr) *queued_on = nullptr;
  if (operation.finished) return hand_out(operation);
  int received = 0;
  if (takes_incoming(operation, error, status, &received, queued_on))
    operation.early.status = empty_incoming(operation, received, queued_on);
  if (operation.peer) {
    const Status packed = peers::finish_send(*operation.peer);
    if (!is_error(operation.early.status)) operation.early.status = packed;
  }
  return hand_out(operation);
}

void finish_receives(Operation* const* operations, const MPI_Status* statuses, int count,
                     std::vector<gpu::Stream>* queued) {
  std::vector<MessageMove> moves;
  std::vector<Operation*> members;
  std::vector<peers::GatheredUnpack> gathered;
  gpu::Stream set_stream = nullptr;
  auto queue_set = [&] {
    if (members.empty()) return;
    const Status status = queue_unpacks(moves.data(), static_cast<int>(moves.size()), set_stream);
    for (Operation* operation : members) operation->early.status = status;
    if (!is_error(status)) note_stream(set_stream, queued);
    moves.clear();
    members.clear();
  };
  for (int i = 0; i < count; ++i) {
    Operation& operation = *operations[i];
    if (operation.finished) continue;
    int received = 0;
    gpu::Stream resolved = nullptr;
    if (!takes_incoming(operation, MPI_SUCCESS, statuses[i], &received, &resolved, &gathered)) {
      note_stream(resolved, queued);
      continue;
    }
    gpu::Stream stream = nullptr;
    if (!empties_in_one_launch(operation, received) ||
        is_error(message_stream(operation.message, operation.staging, &stream))) {
      gpu::Stream alone = nullptr;
      operation.early.status = empty_incoming(operation, received, &alone);
      note_stream(alone, queued);
      continue;
    }
    if (stream != set_stream) {
      queue_set();
      set_stream = stream;
    }
    moves.push_back({&operation.message, &operation.staging, received});
    members.push_back(&operation);
  }
  queue_set();
  peers::queue_gathered(&gathered, queued);
}

}  // namespace gddt::protocol
