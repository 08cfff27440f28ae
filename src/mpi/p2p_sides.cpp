// The sides of point-to-point calls: each buffer's checks and its hand-over to the transports, the
// posting of prepared sends, and the completion work of one operation.
#include "mpi/p2p_sides.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "mpi/classify.hpp"
#include "mpi/entry_points.hpp"
#include "mpi/errors.hpp"
#include "mpi/interpose.hpp"
#include "mpi/pack_api.hpp"
#include "mpi/passage.hpp"
#include "pack/backend.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/deferred.hpp"
#include "protocol/peer/peers.hpp"
#include "protocol/requests.hpp"
#include "protocol/transport.hpp"
#include "type/contents.hpp"

namespace gddt::mpi::p2p {

namespace {

using protocol::host_through_gddt;
using protocol::library_cuda_aware;

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
  return raise_on_owner(operation.comm, operation.win, operation.file, outcome.status);
}

}  // namespace

// The status of a receive that resolved a marker of the peer protocol counts the bytes it stood for.
int finish_reporting(Operation& operation, int error, MPI_Status& status) {
  const int rc = report(operation, protocol::finish(operation, error, status));
  if (operation.status_bytes >= 0) PMPI_Status_set_elements_x(&status, MPI_BYTE, operation.status_bytes);
  return rc;
}

namespace {

// A side whose datatype declares an OpenCL buffer (gddt_type_opencl): always staged through host
// memory as packed bytes, whatever the library.
int prepare_opencl(const Call& call, const memory::OpenclBuffer& opencl, int count, MPI_Datatype datatype, MPI_Comm comm,
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

}  // namespace

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
  memory::OpenclBuffer opencl;
  if (peer != MPI_PROC_NULL && comm != MPI_COMM_NULL && opencl_memory(datatype, buf, &opencl))
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
                 Side* side, bool lends_buffer) {
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

namespace {

bool defer_sends() {
  static const bool defer = config::settings().defer_sends;
  return defer;
}

}  // namespace

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
  operation.library_persistent = true;
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
// such sends (Open MPI's and MPICH's small ones), so its handle cannot name the operation; not one
// whose library request is a persistent send of gddt's (never shared). Receives
// from a real peer always get a request of their own, and asking about one would run the library's
// progress engine for every receive posted (2.5 us at the median through UCX with 64 device
// transfers in flight, a third of the receiver's time at 1 MiB).
int track(std::unique_ptr<Operation> operation, bool persistent, MPI_Request request) {
  operation->persistent = persistent;
  operation->active = !persistent;
  if (!persistent && operation->kind == Operation::Kind::kSend && !operation->library_persistent) {
    int done = 0;
    MPI_Status status;
    int rc = PMPI_Request_get_status(request, &done, &status);
    if (rc == MPI_SUCCESS && done) return finish_reporting(*operation, rc, status);
  }
  protocol::requests::add(request, std::move(operation));
  return MPI_SUCCESS;
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


}  // namespace gddt::mpi::p2p
