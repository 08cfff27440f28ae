// Sending (peers.hpp): the transfer's number, the marker's sequence number, the header posted
// before the marker, and what completes a send.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "core/counters.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/peer/internal.hpp"

namespace gddt::protocol {

namespace peers {

namespace {

std::atomic<std::uint32_t> next_transfer{0};

// Gives the send's marker the next sequence number of the communicator.
std::uint64_t stamp_marker(Channel& channel, PeerSend* send) {
  const std::uint64_t sequence = channel.next_sequence.fetch_add(1, std::memory_order_relaxed);
  std::memcpy(send->marker.data(), &sequence, sizeof sequence);
  send->marker[sizeof sequence] = 'g';
  return sequence;
}

}  // namespace

Status send_header(Channel& channel, const Header& header, const void* carried, PeerSend& send) {
  const std::size_t bytes = carried != nullptr ? static_cast<std::size_t>(header.bytes) : 0;
  send.header.resize(sizeof header + bytes);
  std::memcpy(send.header.data(), &header, sizeof header);
  if (bytes > 0) std::memcpy(send.header.data() + sizeof header, carried, bytes);
  return PMPI_Isend(send.header.data(), static_cast<int>(send.header.size()), MPI_BYTE, send.dest, send.tag,
                    channel.headers, &send.header_request) == MPI_SUCCESS
             ? GDDT_OK
             : GDDT_ERR_MPI;
}

int new_transfer() {
  return static_cast<int>(next_transfer.fetch_add(1, std::memory_order_relaxed) % (kReleaseTags - 1)) + 1;
}

Status finish_send(PeerSend& send) {
  const Status lent = send.lent ? settle_lent(send) : GDDT_OK;
  if (send.pack_posted.ticket != 0) {
    counters::Stopwatch packing(counters::Counter::kPeerSendPackNs);
    bool moved = false;  // a pack waits for no flag: it always moves
    const Status done = within(GDDT_MEMORY_DEVICE).wait_posted(send.pack_posted, {}, &moved);
    send.pack_posted = pack::Posted{};
    return is_error(lent) ? lent : done;
  }
  if (send.packing == nullptr) return lent;
  counters::Stopwatch packing(counters::Counter::kPeerSendPackNs);
  const Status done = gpu::stream_synchronize(send.packing);
  send.packing = nullptr;
  return done;
}

// Fills a send of the peer protocol: packs the message where its plane keeps it, then posts the
// header (and the data message, or the receive of the release) before the library posts the marker.
Status post_header(Operation& operation) {
  PeerSend& send = *operation.peer;
  Channel* channel = operation.channel.get();
  if (channel == nullptr) return GDDT_ERR_INTERNAL;
  const Message& message = operation.message;
  GDDT_CHECK(finish_send(send));  // a persistent send's previous start
  linger(&send.header_request, &send.header);
  Header header;
  header.bytes = message.bytes();
  header.sequence = stamp_marker(*channel, &send);
  {
    counters::Stopwatch lending_time(counters::Counter::kPeerSendLendNs);
    gpu::IpcExport lent;
    std::vector<char> wire;
    int slot = -1;
    std::uint32_t generation = 0;
    if (lends_user_buffer(operation, &lent, &wire) && take_lent_slot(&slot, &generation)) {
      const Status posted = post_lent(operation, *channel, header, lent, wire, slot, generation);
      if (is_error(posted)) lending_time.cancel();
      return posted;
    }
    lending_time.cancel();
  }
  // A small message takes the eager path where the resident kernel runs, else it rides inline.
  const bool eager = operation.route == Route::kPeerIpc && eager_sized(header.bytes);
  if (eager) {
    bool sent = false;
    GDDT_CHECK(send_eager(operation, *channel, header, &sent));
    if (sent) return GDDT_OK;
  }
  auto staging = std::make_shared<Staging>();
  // A library that takes device memory moves a device message's staged parts GPU to GPU.
  const bool staged_on_device =
      operation.route == Route::kPeerStaged && message.kind.is_device() && library_cuda_aware();
  const bool scratch = operation.route == Route::kPeerIpc && !eager;
  bool exposed = false;
  {
    counters::Stopwatch staging_time(counters::Counter::kPeerSendStagingNs);
    if (operation.route == Route::kPeerStaged) {
      GDDT_CHECK(take_staged_send_staging(*staging, staged_on_device, message.kind.device, header.bytes));
    } else if (scratch) {  // what CUDA IPC cannot export goes out on the staged plane
      GDDT_CHECK(take_exposed_scratch(&staging, message.kind.device, header.bytes, &header, &exposed));
    } else {
      GDDT_CHECK(staging->acquire(-1, header.bytes));
    }
  }
  if (!exposed && (operation.route == Route::kPeerInline || eager)) {
    header.plane = Plane::kInline;
  } else if (!exposed) {  // kPeerStaged, or no exportable device scratch could be had
    header.plane = Plane::kStaged;
    header.part = std::min(agreed_staged_part(*channel, send.dest), header.bytes);
  }
  // The staged plane packs part by part after the header, each part sent as soon as it is packed;
  // the others carry or expose the whole message, packed before the header leaves.
  PackEvent pack_event;
  if (header.plane == Plane::kIpc) {
    counters::Stopwatch packing(counters::Counter::kPeerSendPackNs);
    GDDT_CHECK(queue_ipc_pack(operation, *staging, staging->kind().device, &header, &pack_event));
  } else if (header.plane != Plane::kStaged) {
    counters::Stopwatch packing(counters::Counter::kPeerSendPackNs);
    GDDT_CHECK(pack_message(message, *staging, meanwhile_for(operation)));
  }
  const bool carried = header.plane == Plane::kInline;
  if (header.plane != Plane::kInline) header.transfer = new_transfer();
  GDDT_CHECK(send_header(*channel, header, carried ? staging->data() : nullptr, send));
  if (header.plane == Plane::kIpc) {
    GDDT_CHECK(hold_until_release(*channel, send.dest, header, std::move(staging), pack_event));
  } else if (header.plane == Plane::kStaged) {
    return send_staged(operation, *channel, send.dest, header, staging);
  }
  return GDDT_OK;
}

}  // namespace peers

// A send's header and marker may still be in flight when its operation is done (the receiver took
// the message; the library completes them at a later call).
PeerSend::~PeerSend() {
  peers::finish_send(*this);
  peers::linger(&header_request, &header);
}

}  // namespace gddt::protocol
