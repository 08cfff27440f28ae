#include "mpi/p2p.hpp"

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
#include "mpi/p2p_sides.hpp"
#include "mpi/pack_api.hpp"
#include "pack/backend.hpp"
#include "pack/engine.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/deferred.hpp"
#include "protocol/peer/peers.hpp"
#include "protocol/requests.hpp"
#include "protocol/transport.hpp"
#include "type/contents.hpp"

namespace gddt::mpi::p2p {

namespace {

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
  // A send that lent its buffer through CUDA IPC is done once its receiver has read it. Its marker
  // is small, and the library's request for it may be one shared by all such sends (track), which
  // would complete the send here, waiting for the read inside MPI_Isend: a window of sends would move
  // one message at a time (a 4 MiB vector on one H200: 25 us a message, most of it that wait). The
  // marker goes as a persistent send of gddt's instead, started now and freed at completion.
  const RequestSend own = persistent ? nullptr : persistent_twin(call);
  if (own != nullptr && side.operation && side.operation->peer && side.operation->peer->lent) {
    rc = own(side.buffer, side.count, side.datatype, dest, tag, comm, request);
    if (rc == MPI_SUCCESS && (rc = PMPI_Start(request)) != MPI_SUCCESS) PMPI_Request_free(request);
    if (rc != MPI_SUCCESS) return rc;
    side.operation->library_persistent = true;
    return track(std::move(side.operation), false, *request);
  }
  rc = call(side.buffer, side.count, side.datatype, dest, tag, comm, request);
  if (rc == MPI_SUCCESS && side.operation) return track(std::move(side.operation), persistent, *request);
  return rc;
}

// A blocking receive of a message small enough for the resident kernel asks whether the legacy
// default stream is idle before it waits for the message: the unpack then need not ask after the
// message arrives. Work queued later may not touch the receive buffer until the call returns.
// Not where the kernel is not wanted (a GPU shared with other processes, say): the query costs
// 1.7 us.
void check_order_before_waiting(Operation& operation) {
  const protocol::Message& message = operation.message;
  if (!message.kind.is_device() || !pack::resident_may_take(message.bytes())) return;
  const pack::Backend& cuda = pack::backend_at(pack::kCudaSlot);
  if (cuda.serves_now != nullptr && !cuda.serves_now(message.kind.device)) return;
  gpu::DeviceGuard guard(message.kind.device);
  bool idle = false;
  if (gpu::legacy_stream_idle(&idle) == GDDT_OK && idle) operation.ordering = pack::Ordering::kLegacyStreamIdle;
}

// A blocking receive that probes first (peers::probes_for_marker): a marker is received into host
// memory, packed bytes into the staging, and while it probes the node's senders may send it a
// message through CUDA IPC. MPI_Mprobe and MPI_Mrecv match exactly the message MPI_Recv would.
int receive_probing(const Side& side, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Operation& operation = *side.operation;
  MPI_Message message = MPI_MESSAGE_NULL;
  protocol::peers::note_probing_receive(true);
  int rc = PMPI_Mprobe(source, tag, comm, &message, status);
  protocol::peers::note_probing_receive(false);
  if (rc != MPI_SUCCESS) return rc;
  int count = 0;
  if (PMPI_Get_count(status, MPI_BYTE, &count) == MPI_SUCCESS && count == protocol::kMarkerBytes) {
    operation.marker_on_host = true;
    return PMPI_Mrecv(operation.early_marker, count, MPI_BYTE, &message, status);
  }
  return PMPI_Mrecv(side.buffer, side.count, side.datatype, &message, status);
}

int recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const BlockingCall blocking;
  Side side;
  Call call{Operation::Kind::kReceive};
  call.blocking_receive = true;
  int rc = prepare(call, buf, count, datatype, source, comm, &side);
  if (rc != MPI_SUCCESS) return rc;
  if (!side.operation) return PMPI_Recv(side.buffer, side.count, side.datatype, source, tag, comm, status);
  check_order_before_waiting(*side.operation);
  MPI_Status local;
  MPI_Status* st = status_or_local(status, &local);
  rc = protocol::peers::probes_for_marker(*side.operation)
           ? receive_probing(side, source, tag, comm, st)
           : PMPI_Recv(side.buffer, side.count, side.datatype, source, tag, comm, st);
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
  // Refused with MPICH's classes: Open MPI 5.0's partitioned component takes them and fails later,
  // inside the library (tests/p2p, partitioned_errors).
  if (comm == MPI_COMM_NULL) return init(const_cast<void*>(buf), count, datatype);  // the library's MPI_ERR_COMM
  if (partitions <= 0) return raise(comm, GDDT_ERR_INVALID_ARG);
  if (count < 0) return raise(comm, GDDT_ERR_COUNT);
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

void finalize() {
  protocol::deferred::start_all();
  protocol::requests::drain_detached();
  protocol::peers::finalize();
  protocol::deferred::release();
  protocol::release_transports();
}

}  // namespace gddt::mpi::p2p
