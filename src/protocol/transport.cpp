#include "protocol/transport.hpp"

#include <climits>

#include "core/counters.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/peer/peers.hpp"
#include "protocol/transfer.hpp"

namespace gddt::protocol {

namespace {

const Transport* const* table() {
  static const Transport* const rows[] = {
#define GDDT_TRANSPORT(function) &function(),
#include "protocol/transports.def"
#undef GDDT_TRANSPORT
      nullptr};
  return rows;
}

const Transport& transport_of(Route route) {
  for (const Transport* const* row = table(); *row != nullptr; ++row)
    if ((*row)->route == route) return **row;
  return forward_transport();
}

// The last row serves every side.
const Transport& choose(const Choice& choice) {
  const Transport* const* row = table();
  while (row[1] != nullptr && !(*row)->serves(choice)) ++row;
  return **row;
}

}  // namespace

const char* route_name(Route route) { return transport_of(route).name; }

namespace {
thread_local bool library_host_only = false;
}

LibraryHostOnly::LibraryHostOnly() : was_(library_host_only) { library_host_only = true; }
LibraryHostOnly::~LibraryHostOnly() { library_host_only = was_; }

Status stage(const Message& message, const Call& asked, MPI_Comm comm, Side* side) {
  Call call = asked;
  call.cpu_copied = call.cpu_copied || library_host_only;
  std::shared_ptr<peers::Channel> channel =
      call.kind == Operation::Kind::kReceive && !call.partitioned ? peers::watching(comm, message.bytes()) : nullptr;
  const bool watched = channel != nullptr;
  if (watched) peers::note_receive(message);
  const Choice choice{message,
                      call,
                      comm,
                      library_cuda_aware(),
                      device_route_forced(),
                      watched && (peers::awaits_ipc(message) || host_through_gddt()),
                      {}};
  const Transport& transport = choose(choice);
  if (transport.route != Route::kForward && message.bytes() > INT_MAX) {
    GDDT_LOG(kError, "a message of %lld packed bytes exceeds what one MPI_PACKED message can carry",
             static_cast<long long>(message.bytes()));
    return GDDT_ERR_COUNT;
  }
  if (transport.staging_bytes == nullptr && !transport.marker && !watched) {
    counters::add(transport.sides, 1);
    return transport.hand(message, call, nullptr, side);
  }
  auto operation = std::make_unique<Operation>();
  operation->kind = call.kind;
  operation->route = transport.route;
  operation->message = message;
  operation->comm = comm;
  operation->watches_markers = watched;
  operation->channel = transport.marker ? peers::channel_kept(comm) : std::move(channel);
  if (transport.marker) {
    operation->peer = std::make_unique<PeerSend>();
    operation->peer->dest = call.peer;
    operation->peer->tag = call.tag;
    operation->peer->lends_buffer = call.lends_buffer;
  }
  if (transport.staging_bytes != nullptr)
    GDDT_CHECK(operation->staging.acquire(transport.device_staging ? message.kind.device : -1,
                                          transport.staging_bytes(message, call)));
  // Device scratch the pool could not give now became host staging: counted as what it is.
  const bool on_host_instead =
      transport.device_staging && operation->staging.kind().type != GDDT_MEMORY_DEVICE;
  GDDT_LOG(kDebug, "%s of %lld bytes (%s): %s%s", call.kind == Operation::Kind::kSend ? "send" : "receive",
           static_cast<long long>(message.bytes()), gddt_memory_type_name(message.kind.type), transport.name,
           on_host_instead ? " in host staging" : "");
  GDDT_CHECK(transport.hand(message, call, operation.get(), side));
  if (watched && !call.blocking_receive) peers::note_unprobed_receive(*operation);
  counters::add(on_host_instead ? host_staged_transport().sides : transport.sides, 1);
  counters::add(counters::Counter::kStagedBytes, message.bytes());
  side->operation = std::move(operation);
  return GDDT_OK;
}

Status fill_outgoing(Operation& operation) {
  counters::Stopwatch filling(counters::Counter::kStagedFillNs);
  return transport_of(operation.route).fill(operation, nullptr);
}

Status queue_outgoing(Operation& operation, gpu::Stream* stream) {
  *stream = nullptr;
  return transport_of(operation.route).fill(operation, stream);
}

bool moves_packed_bytes(const Operation& operation) { return transport_of(operation.route).packed; }

bool fills_in_one_launch(const Operation& operation) {
  return moves_packed_bytes(operation) &&
         moves_in_one_launch(operation.message, operation.staging, operation.message.bytes());
}

Status fill_partition(Operation& operation, int partition) {
  const Message& message = operation.message;
  if (operation.route != Route::kHostSpan)
    return pack_message_part(message, operation.staging, partition * operation.partition_bytes,
                             operation.partition_bytes, nullptr, meanwhile_for(operation));
  // The library takes the user's datatype on the host copy: the span of the partition's elements.
  Message elements = message;
  elements.count = message.count / operation.partitions;
  const std::int64_t first = partition * elements.count * message.layout->extent + elements.span_lb();
  return copy_and_wait(static_cast<char*>(operation.staging.data()) + (first - message.span_lb()),
                       static_cast<const char*>(message.buffer) + first,
                       static_cast<std::size_t>(elements.span_bytes()),
                       message.kind.is_device() ? message.kind.device : -1);
}

Status empty_partition(Operation& operation, int partition) {
  if (operation.partition_unpacked[static_cast<std::size_t>(partition)].exchange(true)) return GDDT_OK;
  return unpack_message_part(operation.message, operation.staging, partition * operation.partition_bytes,
                             operation.partition_bytes, nullptr, meanwhile_for(operation), operation.ordering);
}

Status empty_incoming(Operation& operation, std::int64_t received, gpu::Stream* queued_on) {
  if (queued_on != nullptr) *queued_on = nullptr;
  counters::Stopwatch emptying(counters::Counter::kStagedEmptyNs);
  const Status status = transport_of(operation.route).empty(operation, received, queued_on);
  // Only an unpack whose bytes are in place on return is the stage; a queued one is timed nowhere.
  if (queued_on != nullptr && *queued_on != nullptr) emptying.cancel();
  return status;
}

bool empties_in_one_launch(const Operation& operation, std::int64_t received) {
  return moves_packed_bytes(operation) && moves_in_one_launch(operation.message, operation.staging, received);
}

void release_transports() {
  for (const Transport* const* row = table(); *row != nullptr; ++row)
    if ((*row)->release != nullptr) (*row)->release();
}

}  // namespace gddt::protocol
