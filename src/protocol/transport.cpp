#include "protocol/transport.hpp"

#include <algorithm>
#include <climits>
#include <mutex>
#include <unordered_map>

#include "core/config.hpp"
#include "core/counters.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/peer/peers.hpp"
#include "protocol/transfer.hpp"

namespace gddt::protocol {

// MPICH 4.0 receives a large message into a struct of mixed basic types, a pair type such as
// MPI_SHORT_INT, or some resized types only from a sender whose datatype has the same layout:
// MPI_PACKED data, or data declared as any gap-free type of the same signature, is refused or
// truncated. So under MPICH a staged send hands the library the user's own datatype on a host copy
// of the elements (the host-span transport), and plain MPICH peers always understand it. MPICH
// 4.0's MPI_Isendrecv leaves its status empty (no count, source or tag), so a receive half staged
// as packed bytes could not tell how many arrived: there the library receives the user's own
// datatype on a host copy of the span too.
#if defined(MPICH_VERSION)
constexpr bool kHostSpanForStagedSends = true;
constexpr bool kHostSpanForExchangeReceives = true;
#else
constexpr bool kHostSpanForStagedSends = false;
constexpr bool kHostSpanForExchangeReceives = false;
#endif

// Open MPI 4 (ob1 over shared memory with a single-copy mechanism) copies the whole of a long
// message into a contiguous receive buffer, past its end, when the message is longer than the
// buffer; the library alone does so too, but only for contiguous receives, and a staged receive of
// a derived datatype would be one. So there gddt describes N bytes of receive staging by a datatype
// that leaves a hole after them: N bytes, a hole of one byte, one more byte. The library then
// copies through its datatype engine, which stops at the end of the typemap, and a message of N + 1
// bytes, which the library takes without complaint, is gddt's to report as truncated (finish in
// requests.cpp). Measured on Open MPI 4.1.4 over shared memory (gddt-bench-receive-hole), the holed
// receive takes 0.84-1.51x the time of a contiguous one from 1 KiB to 4 MiB.
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
constexpr bool kHoledReceiveStaging = true;
#else
constexpr bool kHoledReceiveStaging = false;
#endif
constexpr std::int64_t kHoleBytes = 2;  // the hole and the byte after it

namespace {

namespace holed {

std::mutex mutex;
std::unordered_map<int, MPI_Datatype>& types() {
  static auto* map = new std::unordered_map<int, MPI_Datatype>;
  return *map;
}
// Types of so many sizes are kept; beyond that all are freed and made anew (the library keeps a
// type freed while a receive uses it until the receive completes).
constexpr std::size_t kMostKept = 256;

// With the mutex held.
void free_all() {
  for (auto& entry : types()) PMPI_Type_free(&entry.second);
  types().clear();
}

// The datatype of `bytes` bytes of holed receive staging (MPI_DATATYPE_NULL if the library refuses
// to make one).
MPI_Datatype of(int bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  auto found = types().find(bytes);
  if (found != types().end()) return found->second;
  if (types().size() >= kMostKept) free_all();
  const int lengths[] = {bytes, 1};
  const MPI_Aint displacements[] = {0, static_cast<MPI_Aint>(bytes) + 1};
  MPI_Datatype type = MPI_DATATYPE_NULL;
  if (PMPI_Type_create_hindexed(2, lengths, displacements, MPI_BYTE, &type) != MPI_SUCCESS ||
      PMPI_Type_commit(&type) != MPI_SUCCESS)
    return MPI_DATATYPE_NULL;
  types()[bytes] = type;
  return type;
}

}  // namespace holed

// What a row decides on.
struct Pair {
  const Message& message;
  const Call& call;
  bool cuda_aware;  // the library takes device pointers
  Route forced;     // GDDT_PROTOCOL's route for device messages; kForward for "auto"
  bool device() const { return message.kind.is_device(); }
  // An OpenCL buffer: only its packed bytes, in host staging, can reach the library.
  bool opencl() const { return message.kind.type == GDDT_MEMORY_OPENCL; }
  bool send() const { return call.kind == Operation::Kind::kSend; }
  // A CUDA-aware library's device path costs more per message than a host one; small messages save
  // more there than a GPU-to-host copy costs them.
  bool small() const { return message.bytes() < static_cast<std::int64_t>(config::settings().device_staging_min); }
};

// --- the host library's own work ---

bool forward_serves(const Pair& pair) {
  return !pair.device() && !pair.opencl() && (!host_through_gddt() || (kHostSpanForStagedSends && pair.send()));
}

Status hand_unchanged(const Message&, const Call&, Operation*, Side*) { return GDDT_OK; }

// A receive the library writes itself has nothing left to move (a watched one may still resolve a
// marker of the peer protocol first: finish in requests.cpp).
Status empty_nothing(Operation&, std::int64_t, gpu::Stream*) { return GDDT_OK; }

// --- contiguous device bytes ---

// Never the user's datatype: a CUDA-aware library packs derived types with the CPU, even ones gddt
// finds contiguous (Open MPI 5 + UCX crashed on such structs and resized types).
bool device_bytes_serve(const Pair& pair) {
  return pair.device() && pair.forced == Route::kForward && pair.cuda_aware && pair.message.contiguous() &&
         !pair.call.cpu_copied;
}

Status hand_bytes(const Message& message, const Call&, Operation*, Side* side) {
  side->buffer = message.first_byte();
  side->count = static_cast<int>(message.bytes());
  side->datatype = MPI_PACKED;
  return GDDT_OK;
}

// --- packed bytes in staging ---

bool device_staged_serves(const Pair& pair) {
  if (!pair.device() || pair.call.cpu_copied || (kHostSpanForExchangeReceives && pair.call.exchange_receive))
    return false;
  return pair.forced == Route::kDeviceStaged || (pair.forced == Route::kForward && pair.cuda_aware && !pair.small());
}

bool holed_receive(const Message& message, const Call& call) {
  return kHoledReceiveStaging && call.kind == Operation::Kind::kReceive && message.bytes() + kHoleBytes <= INT_MAX;
}

std::int64_t packed_staging_bytes(const Message& message, const Call& call) {
  // An empty receive is described as one of a byte: a block of no bytes would leave a contiguous
  // byte after the hole, which the library copies into as it would into any.
  return holed_receive(message, call) ? std::max<std::int64_t>(message.bytes(), 1) + kHoleBytes : message.bytes();
}

Status hand_packed(const Message& message, const Call& call, Operation* operation, Side* side) {
  side->buffer = operation->staging.data();
  side->count = static_cast<int>(message.bytes());
  side->datatype = MPI_PACKED;
  if (!holed_receive(message, call)) return GDDT_OK;
  const int holed_bytes = static_cast<int>(std::max<std::int64_t>(message.bytes(), 1));
  side->count = 1;
  side->datatype = holed::of(holed_bytes);
  return side->datatype == MPI_DATATYPE_NULL ? GDDT_ERR_MPI : GDDT_OK;
}

Status fill_packed(Operation& operation, gpu::Stream* queued_on) {
  if (queued_on == nullptr) return pack_message(operation.message, operation.staging, meanwhile_for(operation));
  return queue_pack(operation.message, operation.staging, queued_on, meanwhile_for(operation));
}

Status empty_packed(Operation& operation, std::int64_t received, gpu::Stream* queued_on) {
  gpu::Stream stream = nullptr;
  if (queued_on != nullptr) GDDT_CHECK(message_stream(operation.message, operation.staging, &stream));
  GDDT_CHECK(unpack_message(operation.message, operation.staging, received, stream, meanwhile_for(operation),
                            operation.ordering));
  if (queued_on != nullptr) *queued_on = stream;
  return GDDT_OK;
}

// --- the typed span copied to host memory ---

bool host_span_serves(const Pair& pair) {
  if (pair.opencl()) return false;
  return (kHostSpanForStagedSends && pair.send()) || (kHostSpanForExchangeReceives && pair.call.exchange_receive);
}

std::int64_t span_staging_bytes(const Message& message, const Call&) { return message.span_bytes(); }

Status hand_span(const Message& message, const Call& call, Operation* operation, Side* side) {
  side->buffer = static_cast<char*>(operation->staging.data()) - message.span_lb();
  // The library writes the typemap of a receive there; the gaps go back as they were.
  return call.kind == Operation::Kind::kReceive ? copy_span(message, operation->staging) : GDDT_OK;
}

// The copies are done on return: queue_outgoing and empty_incoming leave *queued_on null.
Status fill_span(Operation& operation, gpu::Stream*) { return copy_span(operation.message, operation.staging); }

Status empty_span(Operation& operation, std::int64_t, gpu::Stream*) {
  return copy_span_back(operation.message, operation.staging);
}

// --- the peer protocol (peers.hpp), chosen by peers::route_for_send rather than by a row's test ---

bool never(const Pair&) { return false; }

Status hand_marker(const Message&, const Call&, Operation* operation, Side* side) {
  side->buffer = operation->peer->marker.data();
  side->count = kMarkerBytes;
  side->datatype = MPI_BYTE;
  return GDDT_OK;
}

Status fill_peer(Operation& operation, gpu::Stream*) { return peers::post_header(operation); }

bool always(const Pair&) { return true; }

struct Transport {
  Route route;
  const char* name;
  counters::Counter sides;  // counts the sides it takes
  bool (*serves)(const Pair& pair);
  // How much staging it needs; null for transports that hand the library the user's memory.
  std::int64_t (*staging_bytes)(const Message& message, const Call& call);
  // Fills in what the library is handed (operation: null without staging).
  Status (*hand)(const Message& message, const Call& call, Operation* operation, Side* side);
  // Before the library sends; with `queued_on`, GPU work may be left queued there.
  Status (*fill)(Operation& operation, gpu::Stream* queued_on);
  // After the library received `received` bytes (packed bytes; 0 where the library wrote the user's
  // typemap itself).
  Status (*empty)(Operation& operation, std::int64_t received, gpu::Stream* queued_on);
  // The library moves packed bytes, which gddt packs and unpacks (launches may be shared, starts
  // held until the pack is done); false: the library moves the user's datatype.
  bool packed;
};

// In order of preference: a message takes the first row that serves it.
constexpr Transport kTransports[] = {
    {Route::kForward, "forward", counters::Counter::kForwardSides, forward_serves, nullptr, hand_unchanged, nullptr,
     empty_nothing, false},
    {Route::kDeviceBytes, "device-bytes", counters::Counter::kDeviceBytesSides, device_bytes_serve, nullptr, hand_bytes,
     nullptr, empty_nothing, false},
    {Route::kDeviceStaged, "device-staged", counters::Counter::kDeviceStagedSides, device_staged_serves,
     packed_staging_bytes, hand_packed, fill_packed, empty_packed, true},
    {Route::kHostSpan, "host-span", counters::Counter::kHostSpanSides, host_span_serves, span_staging_bytes, hand_span,
     fill_span, empty_span, false},
    {Route::kHostStaged, "host-staged", counters::Counter::kHostStagedSides, always, packed_staging_bytes, hand_packed,
     fill_packed, empty_packed, true},
    {Route::kPeerInline, "peer-inline", counters::Counter::kPeerInlineSides, never, nullptr, hand_marker, fill_peer,
     nullptr, false},
    {Route::kPeerIpc, "peer-ipc", counters::Counter::kPeerIpcSides, never, nullptr, hand_marker, fill_peer, nullptr,
     false},
    {Route::kPeerStaged, "peer-staged", counters::Counter::kPeerStagedSides, never, nullptr, hand_marker, fill_peer,
     nullptr, false},
};

const Transport& transport_of(Route route) {
  for (const Transport& transport : kTransports)
    if (transport.route == route) return transport;
  return kTransports[0];
}

const Transport& choose(const Pair& pair) {
  for (const Transport& transport : kTransports)
    if (transport.serves(pair)) return transport;
  return transport_of(Route::kHostStaged);
}

}  // namespace

const char* route_name(Route route) { return transport_of(route).name; }

namespace {
thread_local bool library_host_only = false;
}

LibraryHostOnly::LibraryHostOnly() : was_(library_host_only) { library_host_only = true; }
LibraryHostOnly::~LibraryHostOnly() { library_host_only = was_; }

Route device_route_forced() {
  static const Route forced = [] {
    switch (config::protocol()) {
      case config::Protocol::kHost: return Route::kHostStaged;
      case config::Protocol::kDevice: return Route::kDeviceStaged;
      case config::Protocol::kAuto: break;
    }
    return Route::kForward;
  }();
  return forced;
}

bool host_through_gddt() {
  static const bool through = config::p2p_host() == config::P2pHost::kGddt;
  return through;
}

bool stages_empty_receives() { return kHoledReceiveStaging; }

bool exchange_statuses_complete() { return !kHostSpanForExchangeReceives; }

Status stage(const Message& message, const Call& asked, MPI_Comm comm, Side* side) {
  Call call = asked;
  call.cpu_copied = call.cpu_copied || library_host_only;
  const Pair pair{message, call, library_cuda_aware(), device_route_forced()};
  const Transport* transport = &choose(pair);
  if (call.kind == Operation::Kind::kSend && !call.partitioned) {
    const Route peer_route = peers::route_for_send(message, call, comm);
    if (peer_route != Route::kForward) transport = &transport_of(peer_route);
  }
  const bool peer_send = transport->route == Route::kPeerInline || transport->route == Route::kPeerIpc ||
                         transport->route == Route::kPeerStaged;
  std::shared_ptr<peers::Channel> channel =
      call.kind == Operation::Kind::kReceive && !call.partitioned ? peers::watching(comm, message.bytes()) : nullptr;
  const bool watched = channel != nullptr;
  if (watched) peers::note_receive(message);
  // Reading a marker out of device memory is a copy and a wait for the GPU (10 us on an H200), and a
  // message read through CUDA IPC, or sent in the staged plane's parts, does not cross the receive's
  // staging anyway.
  if (watched && (peers::awaits_ipc(message) || host_through_gddt()) &&
      (transport->route == Route::kDeviceBytes || transport->route == Route::kDeviceStaged))
    transport = &transport_of(Route::kHostStaged);
  if (transport->route != Route::kForward && message.bytes() > INT_MAX) {
    GDDT_LOG(kError, "a message of %lld packed bytes exceeds what one MPI_PACKED message can carry",
             static_cast<long long>(message.bytes()));
    return GDDT_ERR_COUNT;
  }
  if (transport->staging_bytes == nullptr && !peer_send && !watched) {
    counters::add(transport->sides, 1);
    return transport->hand(message, call, nullptr, side);
  }
  auto operation = std::make_unique<Operation>();
  operation->kind = call.kind;
  operation->route = transport->route;
  operation->message = message;
  operation->comm = comm;
  operation->watches_markers = watched;
  operation->channel = peer_send ? peers::channel_kept(comm) : std::move(channel);
  if (peer_send) {
    operation->peer = std::make_unique<PeerSend>();
    operation->peer->dest = call.peer;
    operation->peer->tag = call.tag;
    operation->peer->lends_buffer = call.lends_buffer;
  }
  // Device staging that cannot be had falls back to host staging (the route changes).
  if (transport->staging_bytes != nullptr)
    GDDT_CHECK(
        operation->staging.acquire(&operation->route, message.kind.device, transport->staging_bytes(message, call)));
  transport = &transport_of(operation->route);
  GDDT_LOG(kDebug, "%s of %lld bytes (%s): %s", call.kind == Operation::Kind::kSend ? "send" : "receive",
           static_cast<long long>(message.bytes()), gddt_memory_type_name(message.kind.type), transport->name);
  GDDT_CHECK(transport->hand(message, call, operation.get(), side));
  counters::add(transport->sides, 1);
  counters::add(counters::Counter::kStagedBytes, message.bytes());
  side->operation = std::move(operation);
  return GDDT_OK;
}

Status fill_outgoing(Operation& operation) { return transport_of(operation.route).fill(operation, nullptr); }

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
  return transport_of(operation.route).empty(operation, received, queued_on);
}

bool empties_in_one_launch(const Operation& operation, std::int64_t received) {
  return moves_packed_bytes(operation) && moves_in_one_launch(operation.message, operation.staging, received);
}

void release_transports() {
  std::lock_guard<std::mutex> lock(holed::mutex);
  holed::free_all();
}

}  // namespace gddt::protocol
