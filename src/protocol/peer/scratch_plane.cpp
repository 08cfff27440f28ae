// The CUDA IPC plane (internal.hpp): the sender packs into device scratch of its own, which the
// receiver maps and unpacks out of, alone or in a launch shared with others, then releases (a
// small message may instead be in the receiver's own landing, landing.cpp).
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/counters.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

namespace {

// The GPU that reads a message's packed bytes on `source` (the sender's GPU) through CUDA IPC: the
// receive buffer's own where it reaches `source` (the same GPU, or peer access across NVLink or
// PCIe), so that one kernel moves each byte once; else `source`. A copy between two GPUs in a
// context without peer access between them would go through host memory.
int reading_gpu(const Message& message, const Header& header, int source) {
  const int own = message.kind.device;
  const bool other_process = header.pid != static_cast<std::int32_t>(getpid());
  if (other_process && message.kind.type == GDDT_MEMORY_DEVICE && own >= 0 && own != source &&
      gpu::can_access_peer(own, source))
    return own;
  return source;
}

// gddt's stream of GPU `device` (the current one), made to wait for the sender's pack of `header`:
// for its flag (`flag`, the eager path), else its event.
Status stream_after_pack(const Header& header, pack::DeviceFlag flag, int device, gpu::Stream* stream) {
  GDDT_CHECK(gpu::library_stream(device, stream));
  if (flag.at != nullptr) {
    const pack::Backend& cuda = within(GDDT_MEMORY_DEVICE);
    return cuda.queue_flag_wait != nullptr ? cuda.queue_flag_wait(flag, *stream) : GDDT_ERR_INTERNAL;
  }
  if (header.event_id == 0) return GDDT_OK;
  gpu::Event packed_event = nullptr;
  GDDT_CHECK(pack_event_of(header, device, &packed_event));
  return gpu::stream_wait_event(*stream, packed_event);
}

}  // namespace

Status queue_ipc_pack(Operation& operation, const Staging& staging, int device, Header* header, PackEvent* event) {
  gpu::Stream stream = nullptr;
  const gpu::WhileWaiting meanwhile = meanwhile_for(operation);
  GDDT_CHECK(queue_pack(operation.message, staging, &stream, meanwhile));
  if (stream == nullptr) return GDDT_OK;
  if (take_pack_event(device, event)) {
    if (gpu::event_record(event->event, stream) == GDDT_OK) {
      header->event_id = event->id;
      header->event_local = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(event->event));
      std::memcpy(header->event_handle, event->handle, sizeof header->event_handle);
      operation.peer->packing = stream;
      return GDDT_OK;
    }
    give_back(*event);
    *event = PackEvent{};
  }
  return gpu::stream_wait(stream, meanwhile);
}

bool expose_scratch(const Staging& staging, Header* header) {
  gpu::IpcExport exported;
  if (staging.kind().type != GDDT_MEMORY_DEVICE || export_of(staging.data(), &exported) != GDDT_OK ||
      name_in_export(exported, staging.data(), header) != GDDT_OK)
    return false;
  header->plane = Plane::kIpc;
  return true;
}

Status take_exposed_scratch(std::shared_ptr<Staging>* staging, int device, std::int64_t bytes, Header* header,
                            bool* exposed) {
  *exposed = false;
  GDDT_CHECK((*staging)->acquire(device, bytes, true));
  *exposed = expose_scratch(**staging, header);
  if (*exposed || !(*staging)->kind().is_device()) return GDDT_OK;
  *staging = std::make_shared<Staging>();
  return take_staged_send_staging(**staging, library_cuda_aware(), device, bytes);
}

Status hold_until_release(Channel& channel, int dest, const Header& header, std::shared_ptr<Staging> staging,
                          PackEvent pack_event, EagerHold eager) {
  Pending pending;
  if (PMPI_Irecv(nullptr, 0, MPI_BYTE, dest, kReleaseTags + header.transfer, channel.data, &pending.request) !=
      MPI_SUCCESS)
    return GDDT_ERR_MPI;
  pending.scratch_held = staging ? header.bytes : 0;  // a landed message holds the receiver's memory
  scratch_held_for_ipc.fetch_add(pending.scratch_held);
  pending.pack_event = pack_event;
  pending.eager = eager;
  pending.staging = std::move(staging);
  linger(std::move(pending));
  return GDDT_OK;
}

Status reach_sender(const Message& message, const Header& header, int* device, char** at) {
  const int source = gpu::device_of(header.uuid);
  if (source < 0) return GDDT_ERR_NO_DEVICE;
  *device = reading_gpu(message, header, source);
  counters::Stopwatch mapping(counters::Counter::kPeerRecvMapNs);
  return map_named(header, *device, at);
}

bool writes_directly(const Message& message, int device) {
  return message.kind.type == GDDT_MEMORY_PINNED || (message.kind.is_device() && message.kind.device == device);
}

Status land_and_unpack(Operation& operation, const void* packed, std::int64_t bytes, gpu::Stream stream) {
  const Message& message = operation.message;
  Staging staging;
  GDDT_CHECK(staging.acquire(message.kind.is_device() ? message.kind.device : -1, bytes));
  GDDT_CHECK(gpu::memcpy_async(staging.data(), packed, static_cast<std::size_t>(bytes), stream));
  GDDT_CHECK(gpu::stream_synchronize(stream));
  return unpack_message(message, staging, bytes, nullptr, meanwhile_for(operation), operation.ordering);
}

Status unpack_remote(Operation& operation, const Header& header, std::int64_t bytes, gpu::Stream* queued_on,
                     GatheredUnpack* gather) {
  const Message& message = operation.message;
  int device = -1;
  char* packed = nullptr;
  pack::DeviceFlag flag;  // the eager path's
  if (header.landing_gpu >= 0) {
    GDDT_CHECK(reach_landing(header, bytes, &device, &packed, &flag));
  } else {
    if (gather != nullptr) keep_mappings_for_gathering();
    GDDT_CHECK(reach_sender(message, header, &device, &packed));
    if (header.flag_value != 0) {
      GDDT_CHECK(flag_of(header, device, &flag));
      // The next eager messages to this process land in its own memory.
      if (message.kind.is_device()) prepare_landing(message.kind.device);
    }
  }
  counters::Stopwatch moving(counters::Counter::kPeerRecvMoveNs);
  gpu::DeviceGuard guard(device);
  if (flag.at != nullptr && writes_directly(message, device)) {
    bool moved = false;
    GDDT_CHECK(unpack_after_flag(operation, flag, bytes, packed, &moved));
    if (moved) {
      counters::add(counters::Counter::kPeerIpcBytes, bytes);
      return GDDT_OK;
    }
  }
  gpu::Stream stream = nullptr;
  GDDT_CHECK(stream_after_pack(header, flag, device, &stream));
  if (writes_directly(message, device)) {
    const pack::Window window{message.layout.get(), message.count, 0, bytes};
    if (gather != nullptr) {
      gather->operation = &operation;
      gather->move = {window, message.buffer, packed};
      gather->device = device;
      gather->stream = stream;
      return GDDT_OK;
    }
    GDDT_CHECK(within(GDDT_MEMORY_DEVICE).unpack(window, message.buffer, packed, stream));
    if (queued_on != nullptr) {
      *queued_on = stream;
    } else {
      GDDT_CHECK(gpu::stream_synchronize(stream));
    }
  } else {
    GDDT_CHECK(land_and_unpack(operation, packed, bytes, stream));
  }
  counters::add(counters::Counter::kPeerIpcBytes, bytes);
  return GDDT_OK;
}

void queue_gathered(std::vector<GatheredUnpack>* gathered, std::vector<gpu::Stream>* queued) {
  launch_gathered_reads();
  std::vector<GatheredUnpack>& all = *gathered;
  // Those of one stream launch together, in the order they were resolved.
  std::stable_sort(all.begin(), all.end(),
                   [](const GatheredUnpack& a, const GatheredUnpack& b) { return a.stream < b.stream; });
  std::vector<pack::WindowMove> moves;
  for (std::size_t first = 0; first < all.size();) {
    std::size_t end = first;
    moves.clear();
    for (; end < all.size() && all[end].stream == all[first].stream; ++end) moves.push_back(all[end].move);
    const gpu::Stream stream = all[first].stream;
    Status launched;
    {
      counters::Stopwatch moving(counters::Counter::kPeerRecvMoveNs);
      launched = queue_windows(false, moves.data(), static_cast<int>(moves.size()), all[first].device, stream);
    }
    if (!is_error(launched) && moves.size() > 1)
      counters::add(counters::Counter::kPeerIpcSharedUnpacks, static_cast<std::int64_t>(moves.size()));
    bool left_running = false;
    for (std::size_t i = first; i < end; ++i) {
      const GatheredUnpack& unpack = all[i];
      Status& outcome = unpack.operation->early.status;
      if (is_error(launched)) {
        outcome = launched;
      } else {
        counters::add(counters::Counter::kPeerIpcBytes, unpack.move.window.length);
      }
      // The sender's scratch is free again whatever became of the data: after what the stream
      // queued, the failed launch's earlier sets included.
      bool held = false;
      release_scratch(stream, unpack.data, unpack.sender, unpack.transfer, &outcome, &held);
      left_running = left_running || held;
    }
    if (left_running) note_stream(stream, queued);
    first = end;
  }
  all.clear();
  end_keeping_mappings();
}

}  // namespace gddt::protocol::peers
