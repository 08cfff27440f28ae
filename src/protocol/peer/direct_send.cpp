// The direct plane on the sender's side (internal.hpp): lending the user's buffer, writing it into
// a receive buffer where the receiver asks, and settling the lending (or sending a copy) before
// the send completes.
#include <sched.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "core/config.hpp"
#include "core/counters.hpp"
#include "core/log.hpp"
#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

namespace {

// This process's sends waiting for their receivers (settle_lent), by lent slot: a receiver's request
// to write is served by whichever of this process's waits polls first (serve_asked_writes).
struct Writers {
  std::atomic<int> waiting{0};
  std::atomic<const PeerSend*> by_slot[kLentSlots] = {};
};

Writers& writers() {
  static auto* instance = new Writers();
  return *instance;
}

// Writes the first request.bytes packed bytes of lent send `send` into the receive buffer that the
// request (a Header and the receive's layout) names, mapped here through CUDA IPC: one kernel on the
// send's GPU (move_in_one_kernel); returns once the bytes are in place. GDDT_ERR_UNSUPPORTED where
// the send's GPU does not reach the receive buffer's, or no one kernel moves the bytes (the
// receiver then reads).
Status write_lent(const PeerSend& send, const char* request_bytes, std::size_t size) {
  Header request;
  if (size < sizeof request) return GDDT_ERR_INTERNAL;
  std::memcpy(&request, request_bytes, sizeof request);
  if (request.magic != kMagic || sizeof request + request.layout_bytes != size) return GDDT_ERR_INTERNAL;
  Message theirs;
  GDDT_CHECK(remote_layout(request_bytes + sizeof request, static_cast<std::size_t>(request.layout_bytes),
                           &theirs.layout));
  theirs.count = request.count;
  const Message& mine = send.lent_message;
  const std::int64_t bytes = request.bytes;
  if (bytes <= 0 || bytes > mine.bytes() || bytes > theirs.bytes()) return GDDT_ERR_INTERNAL;
  const int device = mine.kind.device;
  const int target = gpu::device_of(request.uuid);
  if (target < 0 || (target != device && !gpu::can_access_peer(device, target))) return GDDT_ERR_UNSUPPORTED;
  char* at = nullptr;
  GDDT_CHECK(map_named(request, device, &at));
  theirs.buffer = at;
  gpu::DeviceGuard guard(device);
  gpu::Stream stream = nullptr;
  GDDT_CHECK(gpu::library_stream(device, &stream));
  bool served = false;
  GDDT_CHECK(move_in_one_kernel(mine, theirs, bytes, stream, &served));
  if (!served) return GDDT_ERR_UNSUPPORTED;
  GDDT_CHECK(gpu::stream_synchronize(stream));
  counters::add(counters::Counter::kPeerDirectWrites, 1);
  return GDDT_OK;
}

// The direct plane's way back where the send completes before its receiver began to read: the
// message packed now into device scratch of the transfer's own, exposed as the CUDA IPC plane does
// (until the receiver's release), or, where no exportable scratch can be had, sent as one data
// message from staging the library may be handed (take_exposed_scratch); the copy's header goes
// first, on the data twin with the transfer's tag. The receiver waits for that header, so it goes
// whatever happens: without bytes (kNoCopy, with the reason) where the copy could not be made.
Status send_copy(PeerSend& send) {
  Channel* channel = send.lent_channel.get();
  if (channel == nullptr) return GDDT_ERR_INTERNAL;
  const Message& message = send.lent_message;
  Header header;
  header.bytes = message.bytes();
  header.transfer = send.transfer;
  auto staging = std::make_shared<Staging>();
  bool exposed = false;
  Status made = take_exposed_scratch(&staging, message.kind.device, header.bytes, &header, &exposed);
  if (!is_error(made)) {
    counters::Stopwatch packing(counters::Counter::kPeerSendPackNs);
    made = pack_message(message, *staging, {});
  }
  if (is_error(made)) {
    header.plane = Plane::kStaged;
    header.bytes = kNoCopy;
    header.part = made;  // the receiver fails with the sender's reason
  } else if (!exposed) {
    header.plane = Plane::kStaged;
    header.part = header.bytes;
  }
  Pending copy_header;
  copy_header.bytes.resize(sizeof header);
  std::memcpy(copy_header.bytes.data(), &header, sizeof header);
  if (PMPI_Isend(copy_header.bytes.data(), static_cast<int>(sizeof header), MPI_BYTE, send.dest, header.transfer,
                 channel->data, &copy_header.request) != MPI_SUCCESS)
    return GDDT_ERR_MPI;
  linger(std::move(copy_header));
  if (is_error(made)) return made;
  if (exposed) {
    GDDT_CHECK(hold_until_release(*channel, send.dest, header, std::move(staging), PackEvent{}));
  } else {
    Pending pending;
    if (PMPI_Isend(staging->data(), static_cast<int>(header.bytes), MPI_BYTE, send.dest, header.transfer,
                   channel->data, &pending.request) != MPI_SUCCESS)
      return GDDT_ERR_MPI;
    pending.staging = std::move(staging);
    linger(std::move(pending));
  }
  counters::add(counters::Counter::kPeerDirectCopies, 1);
  return GDDT_OK;
}

}  // namespace

bool lends_user_buffer(const Operation& operation, gpu::IpcExport* lent, std::vector<char>* wire) {
  const Message& message = operation.message;
  if (operation.route != Route::kPeerIpc || !may_lend(message, operation.peer->lends_buffer) ||
      operation.channel == nullptr ||
      !lends_to(message.kind.device,
                operation.channel->slot_of_rank[static_cast<std::size_t>(operation.peer->dest)], message.bytes()))
    return false;
  return reachable_in_place(message, lent, wire);
}

Status post_lent(Operation& operation, Channel& channel, Header& header, const gpu::IpcExport& lent,
                 const std::vector<char>& wire, int slot, std::uint32_t generation) {
  PeerSend& send = *operation.peer;
  const Message& message = operation.message;
  Status ready = name_in_export(lent, message.buffer, &header);
  if (!is_error(ready)) ready = user_work_done(message.kind.device);
  if (is_error(ready)) {
    give_lent_slot(slot);
    return ready;
  }
  header.plane = Plane::kDirect;
  header.count = message.count;
  header.layout_bytes = wire.size();
  header.lent_owner = node().slot;
  header.lent_slot = slot;
  header.lent_generation = generation;
  header.transfer = send.transfer = new_transfer();
  send.header.resize(sizeof header + wire.size());
  std::memcpy(send.header.data(), &header, sizeof header);
  std::memcpy(send.header.data() + sizeof header, wire.data(), wire.size());
  if (PMPI_Isend(send.header.data(), static_cast<int>(send.header.size()), MPI_BYTE, send.dest, send.tag,
                 channel.headers, &send.header_request) != MPI_SUCCESS) {
    give_lent_slot(slot);
    return GDDT_ERR_MPI;
  }
  send.lent_slot = slot;
  send.lent_generation = generation;
  send.receiver_slot = channel.slot_of_rank[static_cast<std::size_t>(send.dest)];
  send.lent_message = message;
  send.lent_channel = operation.channel;
  send.lent = true;
  counters::add(counters::Counter::kPeerDirectSends, 1);
  return GDDT_OK;
}

void serve_asked_writes() {
  Writers& w = writers();
  if (w.waiting.load(std::memory_order_acquire) == 0) return;
  Node& n = node();
  for (int slot = 0; slot < kLentSlots; ++slot) {
    lending::Slot& state = lent_state(n.slot, slot);
    std::uint32_t generation = 0;
    if (!lending::claim(state, &generation)) continue;
    // Claimed: the send waits in settle_lent until its slot is done, so it lives on meanwhile.
    const PeerSend* send = w.by_slot[slot].load(std::memory_order_acquire);
    const std::int32_t asker = n.table->entries[n.slot].asked_by[slot].load(std::memory_order_acquire);
    if (asker < 0 || asker >= kMostLocal * kWriteCells) {
      lending::unclaim(state, generation);
      continue;
    }
    WriteCell& cell = n.table->entries[asker / kWriteCells].write_cells[asker % kWriteCells];
    const bool readable = send != nullptr && cell.bytes <= kWriteCellBytes;
    const Status written = readable ? write_lent(*send, cell.request, cell.bytes) : GDDT_ERR_INTERNAL;
    if (is_error(written)) GDDT_LOG(kDebug, "declined to write a lent buffer: %s", status_name(written));
    lending::answer(state, generation, cell.answer, !is_error(written));
  }
}

Status settle_lent(PeerSend& send) {
  send.lent = false;
  lending::Slot& state = lent_state(node().slot, send.lent_slot);
  const auto patience = static_cast<std::int64_t>(config::settings().peer_direct_patience) * 1000;
  const std::int64_t start = steady_ns();
  const NodeEntry& receiver = node().table->entries[send.receiver_slot];
  const bool receiver_active = start - receiver.resolved_direct_ns.load(std::memory_order_relaxed) <= patience;
  const std::int64_t deadline = receiver_active ? start + patience : start;
  const std::uint32_t generation = send.lent_generation;
  const MPI_Comm headers = send.lent_channel ? send.lent_channel->headers : MPI_COMM_NULL;
  Writers& w = writers();
  w.by_slot[send.lent_slot].store(&send, std::memory_order_release);
  w.waiting.fetch_add(1, std::memory_order_acq_rel);
  if (receiver_active) lending::begin_waiting(state, generation);
  // Meanwhile this process reads what was lent to its own receives that have arrived: two
  // processes that each wait for the other's read (a halo exchange completing its sends first)
  // then go on at once instead of after the patience. Not under MPI_THREAD_MULTIPLE, where
  // another thread may be completing those receives.
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  bool copy = false;
  {
    counters::Stopwatch settling(counters::Counter::kPeerSendSettleNs);
    for (;;) {
      if (lending::done(state, generation)) break;
      const std::int64_t now_ns = steady_ns();
      if (now_ns >= deadline && lending::take_back(state, generation)) {
        GDDT_LOG(kDebug, "lent send copied after %lld us: the receiver last resolved a lent message %lld us ago",
                 static_cast<long long>((now_ns - start) / 1000),
                 static_cast<long long>((now_ns - receiver.resolved_direct_ns.load(std::memory_order_relaxed)) / 1000));
        copy = true;
        break;
      }
      serve_asked_writes();
      if (level != MPI_THREAD_MULTIPLE) finish_arrived_markers(MPI_COMM_NULL);
      // The library's progress for this process's other sends: a receiver holding this read's mark
      // may be receiving one of their headers, which goes in rendezvous when its layout is long.
      int arrived = 0;
      if (headers != MPI_COMM_NULL) PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, headers, &arrived, MPI_STATUS_IGNORE);
      sched_yield();
    }
  }
  w.waiting.fetch_sub(1, std::memory_order_acq_rel);
  w.by_slot[send.lent_slot].store(nullptr, std::memory_order_release);
  give_lent_slot(send.lent_slot);
  return copy ? send_copy(send) : GDDT_OK;
}

}  // namespace gddt::protocol::peers
