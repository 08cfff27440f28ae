// The peer protocol's rows of the transport table (transports.def): a send to a peer takes the
// inline, CUDA IPC or staged plane, by GDDT_IPC=auto's model of when CUDA IPC wins and the GPUs
// the node's processes receive on.
#include <algorithm>
#include <atomic>
#include <climits>
#include <vector>

#include "core/config.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/peer/internal.hpp"
#include "type/wire.hpp"

namespace gddt::protocol::peers {

namespace {

// Whether the process at `slot` of the node table sees GPU `uuid`.
bool sees_gpu(int slot, const gpu::DeviceUuid& uuid) { return gpu_index(node().table->entries[slot], uuid) >= 0; }

// The GPU, in this process's numbering, of the latest device receive of the process at `slot`: -1
// before its first, or where this process does not see that GPU.
int receiving_gpu(int slot) {
  const NodeEntry& entry = node().table->entries[slot];
  const int index = receiving_gpu_index(entry);
  return index < 0 ? -1 : gpu::device_of(entry.uuids[index]);
}

// The smallest allocation the direct plane lends: CUDA carves smaller cudaMalloc allocations out
// of shared 2 MiB blocks, whose IPC handles open one mapping, so a receiver can map only one of
// them ("resource already mapped", seen in the point-to-point storm test).
constexpr std::uint64_t kDirectLeastAllocation = std::uint64_t{2} << 20;

// The most pieces of a layout that travels in the header of the direct plane (beyond, the sender
// packs) or in a receiver's request to write (beyond, the receiver reads); a piece is 144 bytes.
constexpr std::size_t kDirectMostPieces = 64;

// The smallest message GDDT_IPC=auto lends to a receiver on the same GPU. One H200 shared by two
// ranks, system Open MPI (run Q, performance.md): the direct plane's windows moved 0.4-0.7x the raw
// format's bandwidth at 16-64 KiB, 1.5-1.9x at 256 KiB, 5-10x at 1 MiB and 13-32x at 4 MiB.
constexpr std::uint64_t kSameGpuDirectLeast = std::uint64_t{256} << 10;

// GDDT_IPC=auto's model, from the measurements in performance.md: CUDA IPC wins where the
// receiver reads across NVLink from another GPU and the library would cross the host twice (two
// H200s, system Open MPI: from 64 KiB on, 7-36x at 1-4 MiB; awaits_ipc rules out CUDA-aware
// libraries, whose copy engines and the raw format's sets of packs won windows, 1 MiB: 146 against
// 53 GB/s). Between ranks sharing one GPU every message's kernels wait for the other process's
// context: a packing sender's windows of 64 KiB to 1 MiB ran 1.7-12x slower than the raw format,
// while the direct plane (no kernel on the sender) ran faster from 256 KiB; so there only sends
// that lend their buffer (`lends`: the call may, and CUDA IPC can export the allocation and carry
// the layout) of at least kSameGpuDirectLeast go through CUDA IPC.
bool ipc_model_wins(const Message& message, int receiver_slot, bool lends) {
  const int receiver_device = receiving_gpu(receiver_slot);
  if (receiver_device < 0) return false;
  if (receiver_device == message.kind.device) {
    // A send the direct plane cannot take would pack on the shared GPU.
    if (!may_lend(message, lends) || static_cast<std::uint64_t>(message.bytes()) < kSameGpuDirectLeast) return false;
    gpu::IpcExport exported;
    std::vector<char> wire;
    return reachable_in_place(message, &exported, &wire);
  }
  return gpu::can_access_peer(receiver_device, message.kind.device);
}

// The largest message GDDT_IPC=auto lends to a receiver on another GPU.
constexpr std::int64_t kDirectAcrossMost = (1 << 20) - 1;

// A device message of GDDT_PEER_IPC_MIN bytes to under 1 MiB through a CUDA-aware library under
// GDDT_IPC=auto: across two H200s the raw format took 1.06-1.16x hand-packed's latency and CUDA IPC
// 0.75-0.81x, but a stream of them through CUDA IPC moved 0.40-0.48x the raw format's bandwidth
// (runs J and N, performance.md). Such a message takes CUDA IPC only while its receiver waits in a
// blocking receive that probes first (probes_for_marker), or while its latest such receive was
// one: one message at a time, whose marker lands in host memory. A stream's receives are
// nonblocking and keep the raw format.
bool probe_sized(const Message& message) {
  return config::ipc() == config::Ipc::kAuto && message.kind.is_device() && library_cuda_aware() &&
         !eager_sized(message.bytes()) && message.bytes() <= kDirectAcrossMost;
}

bool probing_receiver_takes_ipc(const Message& message, int receiver_slot) {
  if (!probe_sized(message)) return false;
  const NodeEntry& receiver = node().table->entries[receiver_slot];
  return receiver.probing_receives.load(std::memory_order_relaxed) > 0 ||
         receiver.latest_receive_probed.load(std::memory_order_relaxed) != 0;
}

void note_latest_receive(bool probed) {
  Node& n = node();
  std::atomic<int>& latest = n.table->entries[n.slot].latest_receive_probed;
  if (latest.load(std::memory_order_relaxed) != static_cast<int>(probed))
    latest.store(static_cast<int>(probed), std::memory_order_relaxed);
}

}  // namespace

bool probes_for_marker(const Operation& operation) {
  if (!operation.channel || !probe_sized(operation.message)) return false;
  return operation.route == Route::kDeviceBytes ||
         (operation.route == Route::kDeviceStaged && operation.staging.kind().type == GDDT_MEMORY_DEVICE);
}

void note_probing_receive(bool begins) {
  Node& n = node();
  if (!n.all_gddt) return;
  n.table->entries[n.slot].probing_receives.fetch_add(begins ? 1 : -1, std::memory_order_relaxed);
  if (begins) note_latest_receive(true);
}

void note_unprobed_receive(const Operation& operation) {
  if (node().all_gddt && probes_for_marker(operation)) note_latest_receive(false);
}

bool awaits_ipc(const Message& message) {
  const config::Ipc mode = config::ipc();
  if (mode == config::Ipc::kOff || !message.kind.is_device()) return false;
  if (!eager_sized(message.bytes())) return mode == config::Ipc::kOn || !library_cuda_aware();
  const pack::Backend& cuda = within(GDDT_MEMORY_DEVICE);
  return config::settings().peer_eager && pack::resident_may_take(message.bytes()) && cuda.post_now != nullptr &&
         cuda.serves_now != nullptr && cuda.serves_now(message.kind.device);
}

bool eager_sized(std::int64_t bytes) { return static_cast<std::uint64_t>(bytes) < config::settings().peer_ipc_min; }

void note_receive(const Message& message) {
  static std::atomic<int> published{0};
  if (!message.kind.is_device() || !node().all_gddt) return;
  const int device_plus_one = message.kind.device + 1;
  if (published.load(std::memory_order_relaxed) == device_plus_one) return;
  published.store(device_plus_one, std::memory_order_relaxed);
  Node& n = node();
  gpu::DeviceUuid uuid;
  if (gpu::device_uuid(message.kind.device, &uuid) != GDDT_OK) return;
  NodeEntry& mine = n.table->entries[n.slot];
  const int index = gpu_index(mine, uuid);
  if (index >= 0) mine.receiving_gpu_plus_one.store(index + 1, std::memory_order_relaxed);
}

bool may_lend(const Message& message, bool lends_buffer) {
  return lends_buffer && config::settings().peer_direct && !eager_sized(message.bytes()) &&
         message.kind.type == GDDT_MEMORY_DEVICE && !library_cuda_aware();
}

bool reachable_in_place(const Message& message, gpu::IpcExport* exported, std::vector<char>* wire) {
  const char* first = static_cast<const char*>(message.buffer) + message.span_lb();
  return export_of(first, exported) == GDDT_OK && exported->size >= kDirectLeastAllocation &&
         type::encode_layout(*message.layout, kDirectMostPieces, wire);
}

bool lends_to(int sender_device, int receiver_slot, std::int64_t bytes) {
  return config::ipc() == config::Ipc::kOn || receiving_gpu(receiver_slot) == sender_device ||
         bytes <= kDirectAcrossMost;
}

namespace {

// The receiver's process in the node table where a send can take the peer protocol (an agreed
// communicator, a receiver of it, a message that could be taken for a marker or is larger), else
// -1; asked once a choice.
int receiver_slot(const Choice& choice) {
  if (choice.receiver_slot) return *choice.receiver_slot;
  int slot = -1;
  const Call& call = choice.call;
  if (active() && choice.send() && !call.partitioned && call.peer >= 0 && choice.message.bytes() >= kMarkerBytes) {
    Channel* channel = channel_of(choice.comm);
    if (channel != nullptr && call.peer < static_cast<int>(channel->slot_of_rank.size()))
      slot = channel->slot_of_rank[static_cast<std::size_t>(call.peer)];
  }
  choice.receiver_slot = slot;
  return slot;
}

// A message of exactly kMarkerBytes would be taken for a marker: it always travels inline.
bool inline_serves(const Choice& choice) {
  if (receiver_slot(choice) < 0) return false;
  const auto bytes = static_cast<std::uint64_t>(choice.message.bytes());
  return bytes == kMarkerBytes || (host_through_gddt() && bytes <= config::settings().peer_inline_max);
}

bool ipc_serves(const Choice& choice) {
  const Message& message = choice.message;
  const int slot = receiver_slot(choice);
  if (slot < 0 || !(awaits_ipc(message) || probing_receiver_takes_ipc(message, slot)) || message.bytes() > INT_MAX ||
      scratch_held_for_ipc.load() + message.bytes() > ipc_scratch_budget() ||
      (eager_sized(message.bytes()) && !eager_clear_to(slot)))
    return false;
  gpu::DeviceUuid uuid;
  return gpu::device_uuid(message.kind.device, &uuid) == GDDT_OK && sees_gpu(slot, uuid) &&
         (config::ipc() == config::Ipc::kOn ||
          ipc_model_wins(message, slot, choice.call.lends_buffer));
}

bool staged_serves(const Choice& choice) {
  return receiver_slot(choice) >= 0 && host_through_gddt() && choice.message.bytes() <= INT_MAX;
}

// The library sends the marker in the user's mode; what it stands for goes with the header.
Status hand_marker(const Message&, const Call&, Operation* operation, Side* side) {
  side->buffer = operation->peer->marker.data();
  side->count = kMarkerBytes;
  side->datatype = MPI_BYTE;
  return GDDT_OK;
}

Status fill_peer(Operation& operation, gpu::Stream*) { return post_header(operation); }

constexpr Transport peer_row(Route route, const char* name, counters::Counter sides, bool (*serves)(const Choice&)) {
  Transport t = transport_row(route, name, sides, serves);
  t.hand = hand_marker;
  t.fill = fill_peer;
  t.marker = true;
  return t;
}

}  // namespace

}  // namespace gddt::protocol::peers

namespace gddt::protocol {

const Transport& peer_inline_transport() {
  static constexpr Transport row =
      peers::peer_row(Route::kPeerInline, "peer-inline", counters::Counter::kPeerInlineSides, peers::inline_serves);
  return row;
}

const Transport& peer_ipc_transport() {
  static constexpr Transport row =
      peers::peer_row(Route::kPeerIpc, "peer-ipc", counters::Counter::kPeerIpcSides, peers::ipc_serves);
  return row;
}

const Transport& peer_staged_transport() {
  static constexpr Transport row =
      peers::peer_row(Route::kPeerStaged, "peer-staged", counters::Counter::kPeerStagedSides, peers::staged_serves);
  return row;
}

}  // namespace gddt::protocol
