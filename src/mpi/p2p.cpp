#include "mpi/p2p.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "mpi/entry_points.hpp"
#include "mpi/errors.hpp"
#include "mpi/interpose.hpp"
#include "mpi/opencl_types.hpp"
#include "mpi/pack_api.hpp"
#include "pack/backend.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/deferred.hpp"
#include "protocol/peer/peers.hpp"
#include "protocol/requests.hpp"
#include "protocol/transport.hpp"
#include "type/contents.hpp"

namespace gddt::mpi::p2p {

std::atomic<Passage> passage{Passage::kUndecided};

namespace {

using protocol::Call;
using protocol::host_through_gddt;
using protocol::library_cuda_aware;
using protocol::Operation;
using protocol::Side;

// Decided once, at the first call that reaches prepare() (after MPI_Init, so the library can be
// asked whether it is CUDA-aware).
void settle_passage() {
  if (passage.load(std::memory_order_relaxed) != Passage::kUndecided) return;
  Passage decided = Passage::kPlainHostTypes;
  if (disabled() || !(gpu::available() || host_through_gddt() || opencl_types_made())) {
    decided = Passage::kAll;
  } else if (host_through_gddt()) {
    decided = Passage::kNone;
  } else if (library_cuda_aware() && protocol::device_route_forced() == protocol::Route::kForward) {
    decided = Passage::kPlainTypes;
  }
  passage.store(decided, std::memory_order_relaxed);
}

// A NULL buffer is MPI_BOTTOM: legal only for datatypes of absolute addresses.
constexpr std::uintptr_t kLowestValidAddress = 64 * 1024;

// A datatype gddt cannot express (more pieces than it tables) goes to the library as it is on host
// memory; on device memory the library would pack it with the CPU, so it is refused.
int inexpressible(const void* buf, MPI_Datatype datatype, MPI_Comm comm) {
  MPI_Aint true_lb = 0, true_extent = 0;
  memory::Kind kind;
  if (PMPI_Type_get_true_extent(datatype, &true_lb, &true_extent) != MPI_SUCCESS || true_extent <= 0 ||
      classify_typed(datatype, reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(buf) + true_lb), &kind) !=
          GDDT_OK ||
      !kind.is_device())
    return MPI_SUCCESS;
  GDDT_LOG(kError, "a datatype too large for gddt's tables on device memory: point-to-point refuses it "
                   "(MPI_Pack on device memory still packs it, through a host copy)");
  return raise(comm, GDDT_ERR_UNSUPPORTED);
}

// The tag and destination of a send gddt carries: the library's own checks would come after the
// peer protocol has used them (its header goes out with other arguments of gddt's), so a bad one
// is the library's error class here, before any path is chosen. MPI_PROC_NULL never gets here.
Status check_envelope(const Call& call, MPI_Comm comm) {
  if (call.kind != Operation::Kind::kSend) return GDDT_OK;
  static const int tag_ub = [] {
    int* value = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found);
    return found && value != nullptr ? *value : 32767;
  }();
  if (call.tag < 0 || call.tag > tag_ub) return GDDT_ERR_TAG;
  int inter = 0, size = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return GDDT_OK;  // the library's call reports it
  (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(comm, &size);
  return call.peer < 0 || call.peer >= size ? GDDT_ERR_RANK : GDDT_OK;
}

// The MPI error class of an operation's outcome, raised on its communicator (its window's or its
// file's, for a one-sided or file call's) unless it was before.
int report(const Operation& operation, const protocol::Outcome& outcome) {
  if (outcome.library_error != MPI_SUCCESS) return outcome.library_error;
  if (outcome.reported) return error_class(outcome.status);
  if (operation.win != MPI_WIN_NULL) return raise_on_window(operation.win, outcome.status);
  return operation.file != MPI_FILE_NULL ? raise_on_file(operation.file, outcome.status)
                                         : raise(operation.comm, outcome.status);
}

// The status of a receive that resolved a marker of the peer protocol counts the bytes it stood for.
int finish_reporting(Operation& operation, int error, MPI_Status& status) {
  const int rc = report(operation, protocol::finish(operation, error, status));
  if (operation.status_bytes >= 0) PMPI_Status_set_elements_x(&status, MPI_BYTE, operation.status_bytes);
  return rc;
}

// A side whose datatype declares an OpenCL buffer (gddt_type_opencl): always staged through host
// memory as packed bytes, whatever the library.
int prepare_opencl(const Call& call, const pack::OpenclBuffer& opencl, int count, MPI_Datatype datatype, MPI_Comm comm,
                   Side* side) {
  if (count < 0) return raise(comm, GDDT_ERR_COUNT);
  if (count == 0 && !(protocol::stages_empty_receives() && call.kind == Operation::Kind::kReceive)) return MPI_SUCCESS;
  type::LayoutPtr layout;
  const Status status = resolve_datatype(datatype, &layout);
  if (is_error(status)) return raise(comm, status);
  protocol::Message message;
  message.layout = layout;
  message.count = count;
  message.buffer = side->buffer;
  message.kind = memory::Kind{GDDT_MEMORY_OPENCL, -1};
  message.opencl = opencl;
  return raise(comm, protocol::stage(message, call, comm, side));
}

// Checks the arguments of one side and hands it to the transports (protocol::stage). Returns
// MPI_SUCCESS or the error class raised on `comm`.
int prepare(const Call& asked, const void* buf, int count, MPI_Datatype datatype, int peer, MPI_Comm comm,
            Side* side) {
  Call call = asked;
  call.peer = peer;
  side->buffer = const_cast<void*>(buf);
  side->count = count;
  side->datatype = datatype;
  settle_passage();
  pack::OpenclBuffer opencl;
  if (peer != MPI_PROC_NULL && comm != MPI_COMM_NULL && opencl_buffer_of(datatype, buf, &opencl))
    return prepare_opencl(call, opencl, count, datatype, comm, side);
  // A receive of no bytes is staged too where contiguous receives overrun: a longer message must
  // not be written past its buffer either.
  const bool empty_receive_staged = protocol::stages_empty_receives() && call.kind == Operation::Kind::kReceive;
  if (!(gpu::available() || host_through_gddt()) || peer == MPI_PROC_NULL || comm == MPI_COMM_NULL ||
      (count == 0 && !empty_receive_staged))
    return MPI_SUCCESS;
  if (count < 0) return raise(comm, GDDT_ERR_COUNT);
  if (const Status envelope = check_envelope(call, comm); is_error(envelope)) return raise(comm, envelope);
  // Between gddt peers any message may take the peer protocol: the transports decide.
  const bool agreed = protocol::peers::agreed(comm);
  if (type::is_plain_named(datatype) && !host_through_gddt() && !call.cpu_copied && buf != nullptr && !agreed) {
    // The hot path of ordinary traffic: contiguous data the library can take as it is, from host
    // memory always, from device memory when it is CUDA-aware.
    if (library_cuda_aware() && protocol::device_route_forced() == protocol::Route::kForward) return MPI_SUCCESS;
    memory::Kind kind;
    if (classify_typed(datatype, buf, &kind) == GDDT_OK && !kind.is_device()) return MPI_SUCCESS;
  }
  if (!host_through_gddt() && !agreed && on_library_memory(buf, datatype)) return MPI_SUCCESS;
  type::LayoutPtr layout;
  Status status = resolve_datatype(datatype, &layout);
  if (status == GDDT_ERR_UNSUPPORTED) return inexpressible(buf, datatype, comm);
  if (is_error(status)) return raise(comm, status);

  protocol::Message message;
  message.layout = layout;
  message.count = count;
  message.buffer = side->buffer;
  if (message.bytes() == 0) {
    if (!empty_receive_staged || buf == nullptr) return MPI_SUCCESS;
    status = classify_typed(datatype, buf, &message.kind);
  } else {
    const char* first = static_cast<const char*>(buf) + layout->span_lb(count);
    if (reinterpret_cast<std::uintptr_t>(first) < kLowestValidAddress) return raise(comm, GDDT_ERR_BUFFER);
    status = classify_typed(datatype, first, &message.kind);
  }
  if (is_error(status)) return raise(comm, status);
  return raise(comm, protocol::stage(message, call, comm, side));
}

int pack_outgoing(Operation& operation) { return raise(operation.comm, protocol::fill_outgoing(operation)); }

// Readies a prepared send (`prepared`: what prepare() returned) that is posted as soon as this
// returns: every held send starts before it, and its message is packed.
int ready_to_post(int prepared, Side* side) {
  protocol::deferred::before_blocking();
  if (prepared != MPI_SUCCESS || !side->operation) return prepared;
  return pack_outgoing(*side->operation);
}

int prepare_send(bool cpu_copied, const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                 Side* side, bool lends_buffer = false) {
  Call call{Operation::Kind::kSend, cpu_copied, false, dest, tag};
  call.lends_buffer = lends_buffer;
  return ready_to_post(prepare(call, buf, count, datatype, dest, comm, side), side);
}

// Queues the pack of a send where the GPU can be left running it (*stream is then the stream to
// wait for); packs done otherwise are complete on return.
int queue_outgoing_reporting(Operation& operation, gpu::Stream* stream) {
  return raise(operation.comm, protocol::queue_outgoing(operation, stream));
}

// The persistent twin of a nonblocking send mode, which deferred starts create; null for the modes
// that are not deferred.
RequestSend persistent_twin(RequestSend call) {
  if (call == PMPI_Isend) return PMPI_Send_init;
  if (call == PMPI_Issend) return PMPI_Ssend_init;
  if (call == PMPI_Irsend) return PMPI_Rsend_init;
  return nullptr;
}

bool defer_sends() {
  static const bool defer = config::settings().defer_sends;
  return defer;
}

// Whether the library's start of a persistent operation waits until its pack is done, as for
// MPI_Isend (deferred.hpp).
bool start_held(const Operation& operation) {
  return operation.kind == Operation::Kind::kSend && operation.partitions == 0 && defer_sends() &&
         protocol::moves_packed_bytes(operation);
}

// Queues the pack of a prepared nonblocking send and hands the user a persistent library request of
// the staging, started once the pack is done (deferred.hpp). A send deep in a run of them leaves
// its pack to share a launch with the next ones (protocol::deferred::joins_a_set).
int post_deferred(RequestSend init, Side& side, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  Operation& operation = *side.operation;
  const bool in_set = protocol::deferred::joins_a_set() && protocol::fills_in_one_launch(operation);
  gpu::Stream stream = nullptr;
  int rc = in_set ? raise(operation.comm, protocol::message_stream(operation.message, operation.staging, &stream))
                  : queue_outgoing_reporting(operation, &stream);
  if (rc == MPI_SUCCESS) rc = init(side.buffer, side.count, side.datatype, dest, tag, comm, request);
  if (rc != MPI_SUCCESS) {
    if (stream != nullptr && !in_set) gpu::stream_synchronize(stream);  // the staging goes back to its pool
    return rc;
  }
  operation.deferred_start = true;
  GDDT_LOG(kDebug, "send of %lld bytes starts once packed%s", static_cast<long long>(operation.message.bytes()),
           in_set ? " (with the next sends)" : "");
  Operation* queued = side.operation.get();
  protocol::requests::add(*request, std::move(side.operation));
  if (in_set) {
    protocol::deferred::enqueue_unpacked(*request, queued, stream);
  } else {
    protocol::deferred::enqueue(*request, queued, stream);
  }
  return MPI_SUCCESS;
}

// The completion work of a request of gddt's that the library reported complete with `error`;
// `handle` is the request as it was before the library call freed it.
int complete(MPI_Request handle, Operation* operation, int error, MPI_Status& status) {
  int rc = finish_reporting(*operation, error, status);
  if (operation->persistent) {
    operation->active = false;
    operation->finished = false;
    protocol::requests::release(operation);
  } else {
    protocol::requests::take(handle, operation);
  }
  return rc;
}

// Puts a freshly posted operation behind its request. A send the library completed while posting it
// is finished at once instead: libraries hand out one shared, already completed request object for
// such sends (Open MPI's and MPICH's small ones), so its handle cannot name the operation. Receives
// from a real peer always get a request of their own, and asking about one would run the library's
// progress engine for every receive posted (2.5 us at the median through UCX with 64 device
// transfers in flight, a third of the receiver's time at 1 MiB).
int track(std::unique_ptr<Operation> operation, bool persistent, MPI_Request request) {
  operation->persistent = persistent;
  operation->active = !persistent;
  if (!persistent && operation->kind == Operation::Kind::kSend) {
    int done = 0;
    MPI_Status status;
    int rc = PMPI_Request_get_status(request, &done, &status);
    if (rc == MPI_SUCCESS && done) return finish_reporting(*operation, rc, status);
  }
  protocol::requests::add(request, std::move(operation));
  return MPI_SUCCESS;
}

// The operations behind an array of requests, looked up before the library call.
struct Snapshot {
  MPI_Request* user = nullptr;  // the user's array
  std::vector<MPI_Request> handles;
  std::vector<Operation*> operations;  // claimed; null once completed
  bool any = false;
  // No array (an erroneous call) gives an empty snapshot: the library reports it.
  Snapshot(int count, MPI_Request requests[]) : user(requests) {
    if (!protocol::requests::any() || count <= 0 || requests == nullptr) return;
    handles.assign(requests, requests + count);
    operations.resize(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      operations[i] = protocol::requests::claim(handles[i]);
      any = any || (operations[i] != nullptr && operations[i]->active);
    }
  }
  ~Snapshot() {
    for (Operation* operation : operations) protocol::requests::release(operation);
  }
  Operation* at(int i) const { return operations.empty() ? nullptr : operations[static_cast<std::size_t>(i)]; }
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;
  // Takes entry i's operation out of the snapshot (null when it has none or is not active).
  Operation* remove_at(int i) {
    Operation* operation = operations[static_cast<std::size_t>(i)];
    if (operation == nullptr || !operation->active) return nullptr;
    for (auto& other : operations)
      if (other == operation) other = nullptr;
    return operation;
  }
  // Completes entry i; a failure is recorded in `status` and returned.
  int complete_at(int i, int error, MPI_Status* status) {
    Operation* operation = remove_at(i);
    if (operation == nullptr) return MPI_SUCCESS;
    const bool library_persistent = operation->deferred_start;
    int rc = complete(handles[static_cast<std::size_t>(i)], operation, error, *status);
    if (library_persistent) PMPI_Request_free(&user[i]);  // the library left it allocated
    if (rc != MPI_SUCCESS) status->MPI_ERROR = rc;
    return rc;
  }
  // Entry i's request, freed by the library without completing it (protocol::requests::abandon).
  void abandon_at(int i) {
    Operation* operation = remove_at(i);
    if (operation != nullptr) protocol::requests::abandon(handles[static_cast<std::size_t>(i)], operation);
  }
};

// A status to hand the library when the user ignores it: gddt needs the received count.
struct StatusArray {
  std::vector<MPI_Status> local;
  MPI_Status* data;
  StatusArray(int count, MPI_Status* user) : data(user) {
    if (user == MPI_STATUSES_IGNORE) {
      local.resize(static_cast<std::size_t>(count > 0 ? count : 1));
      data = local.data();
    }
  }
};

// Completes the entries of a whole-array call (Waitall, Testall) that the library finished.
int complete_all(Snapshot& snap, int count, int rc, MPI_Status* statuses) {
  int result = rc;
  for (int i = 0; i < count; ++i) {
    int error = rc == MPI_ERR_IN_STATUS ? statuses[i].MPI_ERROR : rc;
    if (error == MPI_ERR_PENDING) {
      // Left active for a later call, unless the library freed it anyway (Open MPI 5 + UCX after a
      // truncation in the same call): then its operation must go too.
      if (snap.user[i] == MPI_REQUEST_NULL) snap.abandon_at(i);
      continue;
    }
    if (snap.complete_at(i, error, &statuses[i]) != MPI_SUCCESS) result = MPI_ERR_IN_STATUS;
  }
  return result;
}

// Completes the entries a Waitsome/Testsome reported.
int complete_some(Snapshot& snap, int rc, int outcount, const int indices[], MPI_Status* statuses) {
  if (outcount == MPI_UNDEFINED) return rc;
  int result = rc;
  for (int k = 0; k < outcount; ++k) {
    int error = rc == MPI_ERR_IN_STATUS ? statuses[k].MPI_ERROR : rc;
    if (snap.complete_at(indices[k], error, &statuses[k]) != MPI_SUCCESS) result = MPI_ERR_IN_STATUS;
  }
  return result;
}

// Unpacks the device receives of a Waitall as they arrive, so that the GPU unpacks earlier messages
// while the library still moves later ones; the library's Waitall then only collects them.
// MPI_Request_get_status drives progress without freeing the requests, so errors and statuses still
// come from that Waitall. Receives complete mostly in the order they were posted, so it waits for
// the oldest one not yet unpacked, then asks once about each following one, and unpacks those that
// have arrived too together (up to pack::kSetMost a launch, with GDDT_PACK_SETS): asking about
// every one each pass costs the square of their number in library calls, each of which runs the
// progress engine (several microseconds each with many device transfers in flight), and a launch
// per message costs the host as much again.
void unpack_as_they_arrive(Snapshot& snap, int count) {
  std::vector<int> waiting;
  for (int i = 0; i < count; ++i) {
    const Operation* operation = snap.at(i);
    if (operation != nullptr && operation->active && !operation->finished &&
        operation->kind == Operation::Kind::kReceive && operation->message.kind.is_device()) {
      waiting.push_back(i);
    }
  }
  if (waiting.size() < 2) return;
  const std::size_t most = protocol::deferred::sets_enabled() ? pack::kSetMost : 1;
  std::vector<gpu::Stream> queued;
  std::vector<Operation*> arrived;
  std::vector<MPI_Status> statuses;
  for (std::size_t oldest = 0; oldest < waiting.size(); oldest += arrived.size()) {
    arrived.clear();
    statuses.clear();
    for (std::size_t k = oldest; k < waiting.size() && arrived.size() < most; ++k) {
      const auto i = static_cast<std::size_t>(waiting[k]);
      int flag = 0;
      MPI_Status status;
      int rc = MPI_SUCCESS;
      do {
        rc = PMPI_Request_get_status(snap.handles[i], &flag, &status);
      } while (rc == MPI_SUCCESS && !flag && k == oldest);
      if (rc != MPI_SUCCESS || !flag) break;
      arrived.push_back(snap.operations[i]);
      statuses.push_back(status);
    }
    if (arrived.empty()) break;  // the library's Waitall reports it
    finish_receives(arrived.data(), statuses.data(), static_cast<int>(arrived.size()), &queued);
  }
  for (gpu::Stream stream : queued) gpu::stream_synchronize(stream);
  protocol::peers::release_unpacked();
}

MPI_Status* status_or_local(MPI_Status* status, MPI_Status* local) {
  return status == MPI_STATUS_IGNORE ? local : status;
}

// The Sendrecv of two prepared sides, then the receive's completion work.
int exchange(Side& out, Side& in, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  MPI_Status local;
  MPI_Status* st = in.operation ? status_or_local(status, &local) : status;
  int rc = PMPI_Sendrecv(out.buffer, out.count, out.datatype, dest, sendtag, in.buffer, in.count, in.datatype, source,
                         recvtag, comm, st);
  if (!in.operation) return rc;
  int done = finish_reporting(*in.operation, rc, *st);
  return rc != MPI_SUCCESS ? rc : done;
}

// Matched probes hand out message handles that carry no communicator, but an error in the MPI_Mrecv
// of one is raised on the communicator it was probed on.
namespace messages {

std::mutex mutex;
std::unordered_map<std::uint64_t, MPI_Comm>& comms() {
  static auto* map = new std::unordered_map<std::uint64_t, MPI_Comm>;
  return *map;
}
std::uint64_t key_of(MPI_Message message) {
  std::uint64_t key = 0;
  std::memcpy(&key, &message, sizeof message);
  return key;
}
void remember(MPI_Message message, MPI_Comm comm) {
  if (message == MPI_MESSAGE_NO_PROC || message == MPI_MESSAGE_NULL) return;
  std::lock_guard<std::mutex> lock(mutex);
  comms()[key_of(message)] = comm;
}
MPI_Comm comm_of(MPI_Message message) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = comms().find(key_of(message));
  return it == comms().end() ? MPI_COMM_WORLD : it->second;
}
void forget(MPI_Message message) {
  std::lock_guard<std::mutex> lock(mutex);
  comms().erase(key_of(message));
}

}  // namespace messages

// The receive side of a matched message (MPI_Mrecv, MPI_Imrecv).
int prepare_matched(void* buf, int count, MPI_Datatype datatype, const MPI_Message* message, Side* side) {
  if (message == nullptr || *message == MPI_MESSAGE_NO_PROC) {
    side->buffer = buf;
    side->count = count;
    side->datatype = datatype;
    return MPI_SUCCESS;
  }
  int rc = prepare(Call{Operation::Kind::kReceive}, buf, count, datatype, 0, messages::comm_of(*message), side);
  if (rc == MPI_SUCCESS) messages::forget(*message);
  return rc;
}

}  // namespace

int send(BlockingSend call, bool buffered, const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
         MPI_Comm comm) {
  const BlockingCall blocking;
  Side side;
  int rc = prepare_send(buffered, buf, count, datatype, dest, tag, comm, &side, !buffered);
  if (rc != MPI_SUCCESS) return rc;
  rc = call(side.buffer, side.count, side.datatype, dest, tag, comm);
  if (rc != MPI_SUCCESS || !side.operation || !side.operation->peer) return rc;
  // A send of the peer protocol is complete once what it left running on the user's buffer is done.
  return raise(comm, protocol::peers::finish_send(*side.operation->peer));
}

int isend(RequestSend call, bool buffered, bool persistent, const void* buf, int count, MPI_Datatype datatype, int dest,
          int tag, MPI_Comm comm, MPI_Request* request) {
  protocol::deferred::advance_in_run();
  Side side;
  Call asked{Operation::Kind::kSend, buffered, false, dest, tag};
  asked.lends_buffer = !buffered && !persistent;
  int rc = prepare(asked, buf, count, datatype, dest, comm, &side);
  if (!persistent) {
    // Persistent sends are only created here; MPI_Start posts them.
    RequestSend init = persistent_twin(call);
    if (rc == MPI_SUCCESS && side.operation && init != nullptr && start_held(*side.operation))
      return post_deferred(init, side, dest, tag, comm, request);
    rc = ready_to_post(rc, &side);
  }
  if (rc != MPI_SUCCESS) return rc;

  rc = call(side.buffer, side.count, side.datatype, dest, tag, comm, request);
  if (rc == MPI_SUCCESS && side.operation) return track(std::move(side.operation), persistent, *request);
  return rc;
}

// A blocking receive of a message small enough for the resident kernel asks whether the legacy
// default stream is idle before it waits for the message: the unpack then need not ask after the
// message arrives. Work queued later may not touch the receive buffer until the call returns.
void check_order_before_waiting(Operation& operation) {
  const protocol::Message& message = operation.message;
  if (!message.kind.is_device() || !pack::resident_may_take(message.bytes())) return;
  gpu::DeviceGuard guard(message.kind.device);
  bool idle = false;
  if (gpu::legacy_stream_idle(&idle) == GDDT_OK && idle) operation.ordering = pack::Ordering::kLegacyStreamIdle;
}

int recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const BlockingCall blocking;
  Side side;
  int rc = prepare(Call{Operation::Kind::kReceive}, buf, count, datatype, source, comm, &side);
  if (rc != MPI_SUCCESS) return rc;
  if (!side.operation) return PMPI_Recv(side.buffer, side.count, side.datatype, source, tag, comm, status);
  check_order_before_waiting(*side.operation);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  rc = PMPI_Recv(side.buffer, side.count, side.datatype, source, tag, comm, st);
  int done = finish_reporting(*side.operation, rc, *st);
  return rc != MPI_SUCCESS ? rc : done;
}

int irecv(bool persistent, void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
          MPI_Request* request) {
  protocol::deferred::advance();
  Side side;
  int rc = prepare(Call{Operation::Kind::kReceive}, buf, count, datatype, source, comm, &side);
  if (rc != MPI_SUCCESS) return rc;
  auto post = persistent ? PMPI_Recv_init : PMPI_Irecv;
  rc = post(side.buffer, side.count, side.datatype, source, tag, comm, request);
  if (rc == MPI_SUCCESS && side.operation) return track(std::move(side.operation), persistent, *request);
  return rc;
}

#if GDDT_HAVE_MPI_Psend_init
namespace {

// The library gets partitions of the staging: `partitions` of count / partitions of what the
// transport hands it (packed bytes, or the user's elements on a host copy of their span).
int partitioned_init(Operation::Kind kind, const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                     int peer, int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  const auto init = [&](void* buffer, MPI_Count per_partition, MPI_Datatype type) {
    return kind == Operation::Kind::kSend
               ? PMPI_Psend_init(buffer, partitions, per_partition, type, peer, tag, comm, info, request)
               : PMPI_Precv_init(buffer, partitions, per_partition, type, peer, tag, comm, info, request);
  };
  // What the library would refuse, it refuses.
  if (partitions <= 0 || count < 0) return init(const_cast<void*>(buf), count, datatype);
  if (count > INT_MAX / partitions) {  // beyond gddt's int counts: host data only goes to the library
    memory::Kind where;
    if (gpu::available() && classify_typed(datatype, buf, &where) == GDDT_OK && where.is_device())
      return raise(comm, GDDT_ERR_COUNT);
    return init(const_cast<void*>(buf), count, datatype);
  }
  Call call{kind};
  call.partitioned = true;
  call.tag = tag;
  Side side;
  int rc = prepare(call, buf, static_cast<int>(count * partitions), datatype, peer, comm, &side);
  if (rc != MPI_SUCCESS) return rc;
  rc = init(side.buffer, side.count / partitions, side.datatype);
  if (rc != MPI_SUCCESS || !side.operation) return rc;
  Operation& operation = *side.operation;
  operation.partitions = partitions;
  operation.partition_bytes = operation.message.bytes() / partitions;
  operation.partition_unpacked = std::vector<std::atomic<bool>>(static_cast<std::size_t>(partitions));
  return track(std::move(side.operation), true, *request);
}

}  // namespace

int psend_init(const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return partitioned_init(Operation::Kind::kSend, buf, partitions, count, datatype, dest, tag, comm, info, request);
}

int precv_init(void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Info info, MPI_Request* request) {
  return partitioned_init(Operation::Kind::kReceive, buf, partitions, count, datatype, source, tag, comm, info,
                          request);
}

namespace {

// Fills partitions [low, high] of a partitioned send before the library hears they are ready.
int fill_partitions(Operation* operation, int low, int high) {
  if (operation == nullptr || operation->kind != Operation::Kind::kSend) return MPI_SUCCESS;
  if (low < 0 || high >= operation->partitions) return MPI_SUCCESS;  // the library reports it
  for (int partition = low; partition <= high; ++partition) {
    const int rc = raise(operation->comm, protocol::fill_partition(*operation, partition));
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace

int pready(int partition, MPI_Request request) {
  const int rc = fill_partitions(protocol::requests::partitioned(request), partition, partition);
  return rc != MPI_SUCCESS ? rc : PMPI_Pready(partition, request);
}

int pready_range(int partition_low, int partition_high, MPI_Request request) {
  const int rc = fill_partitions(protocol::requests::partitioned(request), partition_low, partition_high);
  return rc != MPI_SUCCESS ? rc : PMPI_Pready_range(partition_low, partition_high, request);
}

int pready_list(int length, int array_of_partitions[], MPI_Request request) {
  Operation* operation = protocol::requests::partitioned(request);
  for (int i = 0; i < length && array_of_partitions != nullptr; ++i) {
    const int rc = fill_partitions(operation, array_of_partitions[i], array_of_partitions[i]);
    if (rc != MPI_SUCCESS) return rc;
  }
  return PMPI_Pready_list(length, array_of_partitions, request);
}

int parrived(MPI_Request request, int partition, int* flag) {
  const int rc = PMPI_Parrived(request, partition, flag);
  Operation* operation = protocol::requests::partitioned(request);
  if (rc != MPI_SUCCESS || flag == nullptr || !*flag || operation == nullptr ||
      operation->kind != Operation::Kind::kReceive || partition < 0 || partition >= operation->partitions)
    return rc;
  return raise(operation->comm, protocol::empty_partition(*operation, partition));
}

#endif  // GDDT_HAVE_MPI_Psend_init

int sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  const BlockingCall blocking;
  Side out, in;
  int rc = prepare_send(false, sendbuf, sendcount, sendtype, dest, sendtag, comm, &out);
  if (rc == MPI_SUCCESS) rc = prepare(Call{Operation::Kind::kReceive}, recvbuf, recvcount, recvtype, source, comm, &in);
  if (rc != MPI_SUCCESS) return rc;
  return exchange(out, in, dest, sendtag, source, recvtag, comm, status);
}

namespace {

// Whether `count` elements of `datatype` at `buf` lie in device memory, which the library's
// MPI_(I)sendrecv_replace must never get: it copies the send data aside with the CPU (Open MPI, a
// CUDA-aware one too, even for MPI_INT).
bool replaced_on_device(const void* buf, int count, MPI_Datatype datatype) {
  if (count <= 0 || !gpu::available() || datatype == MPI_DATATYPE_NULL || type::is_freed(datatype)) return false;
  MPI_Aint true_lb = 0, true_extent = 0;
  memory::Kind kind;
  return PMPI_Type_get_true_extent(datatype, &true_lb, &true_extent) == MPI_SUCCESS &&
         classify_typed(datatype, static_cast<const char*>(buf) + true_lb, &kind) == GDDT_OK &&
         kind.type == GDDT_MEMORY_DEVICE;
}

}  // namespace

// Device data is sent from a host copy (the send side as the library's own MPI_Sendrecv_replace
// would copy it aside, `cpu_copied`), so that the call becomes an MPI_Sendrecv into the user's
// buffer, received by gddt's machinery like any receive; a side with no peer leaves the other alone
// in the buffer. Host data with nothing staged is the library's own call.
int sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                     MPI_Comm comm, MPI_Status* status) {
  const BlockingCall blocking;
  Side out, in;
  int rc = prepare_send(true, buf, count, datatype, dest, sendtag, comm, &out);
  if (rc == MPI_SUCCESS) rc = prepare(Call{Operation::Kind::kReceive}, buf, count, datatype, source, comm, &in);
  if (rc != MPI_SUCCESS) return rc;
  if (!out.operation && !in.operation && !replaced_on_device(buf, count, datatype))
    return PMPI_Sendrecv_replace(out.buffer, out.count, out.datatype, dest, sendtag, source, recvtag, comm, status);
  // The two buffers the library sees differ, or one of them moves nothing; the unpack into `buf`
  // comes after the send has read it.
  return exchange(out, in, dest, sendtag, source, recvtag, comm, status);
}

#if GDDT_HAVE_MPI_Isendrecv

namespace {

// The library's one request of both halves of an MPI_Isendrecv: the receive's operation, if it has
// one, carries the send's along.
int track_exchange(Side& out, Side& in, MPI_Request request) {
  if (in.operation) {
    in.operation->outgoing = std::move(out.operation);
    return track(std::move(in.operation), false, request);
  }
  if (out.operation) return track(std::move(out.operation), false, request);
  return MPI_SUCCESS;
}

}  // namespace

int isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  Side out, in;
  int rc = prepare_send(false, sendbuf, sendcount, sendtype, dest, sendtag, comm, &out);
  if (rc == MPI_SUCCESS)
    rc = prepare(Call{Operation::Kind::kReceive, false, true}, recvbuf, recvcount, recvtype, source, comm, &in);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Isendrecv(out.buffer, out.count, out.datatype, dest, sendtag, in.buffer, in.count, in.datatype, source,
                      recvtag, comm, request);
  if (rc != MPI_SUCCESS) return rc;
  return track_exchange(out, in, *request);
}

int isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                      MPI_Comm comm, MPI_Request* request) {
  Side out, in;
  int rc = prepare_send(true, buf, count, datatype, dest, sendtag, comm, &out);
  if (rc == MPI_SUCCESS)
    rc = prepare(Call{Operation::Kind::kReceive, false, true}, buf, count, datatype, source, comm, &in);
  if (rc != MPI_SUCCESS) return rc;
  if (!out.operation && !in.operation && !replaced_on_device(buf, count, datatype))
    return PMPI_Isendrecv_replace(out.buffer, out.count, out.datatype, dest, sendtag, source, recvtag, comm, request);
  // As in sendrecv_replace: the unpack into `buf` comes once the request has completed.
  rc = PMPI_Isendrecv(out.buffer, out.count, out.datatype, dest, sendtag, in.buffer, in.count, in.datatype, source,
                      recvtag, comm, request);
  if (rc != MPI_SUCCESS) return rc;
  return track_exchange(out, in, *request);
}

#endif  // GDDT_HAVE_MPI_Isendrecv

int mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  const BlockingCall blocking;
  Side side;
  int rc = prepare_matched(buf, count, datatype, message, &side);
  if (rc != MPI_SUCCESS) return rc;
  if (!side.operation) return PMPI_Mrecv(side.buffer, side.count, side.datatype, message, status);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  rc = PMPI_Mrecv(side.buffer, side.count, side.datatype, message, st);
  int done = finish_reporting(*side.operation, rc, *st);
  return rc != MPI_SUCCESS ? rc : done;
}

int imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  protocol::deferred::advance();
  Side side;
  int rc = prepare_matched(buf, count, datatype, message, &side);
  if (rc != MPI_SUCCESS) return rc;
  if (!side.operation) return PMPI_Imrecv(side.buffer, side.count, side.datatype, message, request);
  rc = PMPI_Imrecv(side.buffer, side.count, side.datatype, message, request);
  if (rc == MPI_SUCCESS) return track(std::move(side.operation), false, *request);
  return rc;
}

int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  const BlockingCall blocking;
  int rc = PMPI_Mprobe(source, tag, comm, message, status);
  if (rc == MPI_SUCCESS) {
    messages::remember(*message, comm);
    protocol::peers::correct_probe(comm, status);
  }
  return rc;
}

int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  protocol::deferred::advance();
  int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
  if (rc == MPI_SUCCESS && *flag) {
    messages::remember(*message, comm);
    protocol::peers::correct_probe(comm, status);
  }
  return rc;
}

// Starts a persistent request. A send of gddt's is packed first (the user may have changed the
// buffer since the last start); where the pack can be left running on the GPU, the library's start
// is held until it is done, as for MPI_Isend (deferred.hpp).
int start_one(MPI_Request* request, Operation* operation) {
  if (operation == nullptr) return PMPI_Start(request);
  if (operation->partitions > 0) {  // a send's partitions are filled as they are readied
    for (auto& unpacked : operation->partition_unpacked) unpacked.store(false);
    operation->active = true;
    operation->finished = false;
    return PMPI_Start(request);
  }
  const bool held = start_held(*operation);
  gpu::Stream stream = nullptr;
  if (operation->kind == Operation::Kind::kSend) {
    int rc = held ? queue_outgoing_reporting(*operation, &stream) : pack_outgoing(*operation);
    if (rc != MPI_SUCCESS) return rc;
  } else if (operation->kind == Operation::Kind::kCollective) {
    int rc = raise(operation->comm, operation->collective->start());
    if (rc != MPI_SUCCESS) return rc;
  }
  operation->active = true;
  operation->finished = false;
  if (!held) return PMPI_Start(request);
  protocol::deferred::enqueue(*request, operation, stream);
  return MPI_SUCCESS;
}

int start(MPI_Request* request) {
  protocol::deferred::before_blocking();  // sends start in call order
  Snapshot snap(1, request);
  return start_one(request, snap.at(0));
}

namespace {

// A persistent send of MPI_Startall whose pack is one launch leaves it to share a launch with the
// others' (protocol::deferred::enqueue_unpacked), as a run of MPI_Isend does: a halo exchange of
// six faces packs in one launch instead of six.
int start_in_set(MPI_Request* request, Operation* operation) {
  gpu::Stream stream = nullptr;
  int rc = raise(operation->comm, protocol::message_stream(operation->message, operation->staging, &stream));
  if (rc != MPI_SUCCESS) return rc;
  operation->active = true;
  operation->finished = false;
  protocol::deferred::enqueue_unpacked(*request, operation, stream);
  return MPI_SUCCESS;
}

bool joins_startall_set(const Operation* operation) {
  return protocol::deferred::sets_enabled() && operation != nullptr && start_held(*operation) &&
         protocol::fills_in_one_launch(*operation);
}

}  // namespace

// MPI_Startall starts its requests in no particular order: in array order serves.
int startall(int count, MPI_Request requests[]) {
  protocol::deferred::before_blocking();
  Snapshot snap(count, requests);
  const bool none_of_ours =
      std::all_of(snap.operations.begin(), snap.operations.end(), [](Operation* op) { return op == nullptr; });
  if (none_of_ours) return PMPI_Startall(count, requests);  // also for invalid arguments
  int rc = MPI_SUCCESS;
  bool in_sets = false;
  for (int i = 0; i < count && rc == MPI_SUCCESS; ++i) {
    Operation* operation = snap.at(i);
    const bool in_set = joins_startall_set(operation);
    rc = in_set ? start_in_set(&requests[i], operation) : start_one(&requests[i], operation);
    in_sets = in_sets || in_set;
  }
  if (in_sets) protocol::deferred::advance();  // queues the packs still waiting for their set to fill
  return rc;
}

namespace {

// Every completion call starts the queued sends first: one of them may be among its requests, and
// the library would take a persistent request that is not started for a completed one. Requests the
// user freed are finished before and after it (BlockingCall).
class Completing : public BlockingCall {
 public:
  Completing() { protocol::requests::progress_detached(); }
};

}  // namespace

int wait(MPI_Request* request, MPI_Status* status) {
  const Completing completing;
  Snapshot snap(1, request);
  if (!snap.any) return PMPI_Wait(request, status);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  int rc = PMPI_Wait(request, st);
  int done = snap.complete_at(0, rc, st);
  return rc != MPI_SUCCESS ? rc : done;
}

int test(MPI_Request* request, int* flag, MPI_Status* status) {
  const Completing completing;
  Snapshot snap(1, request);
  if (!snap.any) return PMPI_Test(request, flag, status);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  int rc = PMPI_Test(request, flag, st);
  if (flag == nullptr || !*flag) return rc;  // a missing flag is the library's to report
  int done = snap.complete_at(0, rc, st);
  return rc != MPI_SUCCESS ? rc : done;
}

int waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  const Completing completing;
  Snapshot snap(count, requests);
  if (!snap.any) return PMPI_Waitany(count, requests, index, status);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  int rc = PMPI_Waitany(count, requests, index, st);
  if (index == nullptr || *index == MPI_UNDEFINED) return rc;
  int done = snap.complete_at(*index, rc, st);
  return rc != MPI_SUCCESS ? rc : done;
}

int testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  const Completing completing;
  Snapshot snap(count, requests);
  if (!snap.any) return PMPI_Testany(count, requests, index, flag, status);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  int rc = PMPI_Testany(count, requests, index, flag, st);
  if (flag == nullptr || index == nullptr || !*flag || *index == MPI_UNDEFINED) return rc;
  int done = snap.complete_at(*index, rc, st);
  return rc != MPI_SUCCESS ? rc : done;
}

int waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  const Completing completing;
  Snapshot snap(count, requests);
  if (!snap.any) return PMPI_Waitall(count, requests, statuses);
  unpack_as_they_arrive(snap, count);
  StatusArray st(count, statuses);
  int rc = PMPI_Waitall(count, requests, st.data);
  return complete_all(snap, count, rc, st.data);
}

int testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  const Completing completing;
  Snapshot snap(count, requests);
  if (!snap.any) return PMPI_Testall(count, requests, flag, statuses);
  StatusArray st(count, statuses);
  int rc = PMPI_Testall(count, requests, flag, st.data);
  if (flag == nullptr || (!*flag && rc == MPI_SUCCESS)) return rc;
  return complete_all(snap, count, rc, st.data);
}

namespace {

// Waitsome and Testsome differ only in the library call.
using SomeCall = int (*)(int, MPI_Request[], int*, int[], MPI_Status[]);

int complete_some_of(SomeCall call, int incount, MPI_Request requests[], int* outcount, int indices[],
                     MPI_Status statuses[]) {
  const Completing completing;
  Snapshot snap(incount, requests);
  if (!snap.any) return call(incount, requests, outcount, indices, statuses);
  StatusArray st(incount, statuses);
  int rc = call(incount, requests, outcount, indices, st.data);
  if (outcount == nullptr || indices == nullptr) return rc;
  return complete_some(snap, rc, *outcount, indices, st.data);
}

}  // namespace

int waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return complete_some_of(PMPI_Waitsome, incount, requests, outcount, indices, statuses);
}

int testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return complete_some_of(PMPI_Testsome, incount, requests, outcount, indices, statuses);
}

int request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  protocol::deferred::before_blocking();
  Snapshot snap(1, &request);
  if (!snap.any) return PMPI_Request_get_status(request, flag, status);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  int rc = PMPI_Request_get_status(request, flag, st);
  if (flag == nullptr || !*flag) return rc;
  // The request stays allocated: unpack now (the user may read the buffer) and only once.
  int done = finish_reporting(*snap.at(0), rc, *st);
  return rc != MPI_SUCCESS ? rc : done;
}

int request_free(MPI_Request* request) {
  protocol::deferred::before_blocking();
  Operation* operation = request != nullptr ? protocol::requests::claim(*request) : nullptr;
  if (operation == nullptr) return PMPI_Request_free(request);
  const MPI_Request handle = *request;
  auto owned = protocol::requests::take(handle, operation);
  if (owned->persistent && !owned->active) return PMPI_Request_free(request);
  owned->claimed = false;
  protocol::requests::detach(handle, std::move(owned));
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

int probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const BlockingCall blocking;
  const int rc = PMPI_Probe(source, tag, comm, status);
  if (rc == MPI_SUCCESS) protocol::peers::correct_probe(comm, status);
  return rc;
}

int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  protocol::deferred::advance();
  const int rc = PMPI_Iprobe(source, tag, comm, flag, status);
  if (rc == MPI_SUCCESS && flag != nullptr && *flag) protocol::peers::correct_probe(comm, status);
  return rc;
}

// A send of the peer protocol is not cancelled (MPI allows a cancel to fail): its marker and header
// could not be withdrawn together, and a header left behind would pair with a later marker.
int cancel(MPI_Request* request) {
  protocol::deferred::before_blocking();  // the library cancels only requests it has started
  Operation* operation = request != nullptr && protocol::requests::any() ? protocol::requests::claim(*request) : nullptr;
  const bool peer_send = operation != nullptr && operation->peer != nullptr;
  protocol::requests::release(operation);
  return peer_send ? MPI_SUCCESS : PMPI_Cancel(request);
}

void finalize() {
  protocol::deferred::start_all();
  protocol::requests::drain_detached();
  protocol::peers::finalize();
  protocol::deferred::release();
  protocol::release_transports();
}

}  // namespace gddt::mpi::p2p
