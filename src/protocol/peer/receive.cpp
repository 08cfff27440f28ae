// Receiving (peers.hpp): a marker's sequence number and the header it names, resolving it into
// its plane's move, and probes that found one.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/counters.hpp"
#include "core/log.hpp"
#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

namespace {

// Receives the next header from (source, tag) off the header twin (sent before its marker, so it
// is there or on its way).
Status receive_header(Channel& channel, int source, int tag, std::vector<char>* header) {
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status;
  if (PMPI_Mprobe(source, tag, channel.headers, &message, &status) != MPI_SUCCESS) return GDDT_ERR_MPI;
  int bytes = 0;
  PMPI_Get_count(&status, MPI_BYTE, &bytes);
  header->resize(static_cast<std::size_t>(std::max(bytes, 1)));
  if (PMPI_Mrecv(header->data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE) != MPI_SUCCESS) return GDDT_ERR_MPI;
  header->resize(static_cast<std::size_t>(bytes));
  return header->size() < sizeof(Header) ? GDDT_ERR_INTERNAL : GDDT_OK;
}

std::uint64_t sequence_of(const std::vector<char>& header) {
  Header fields;
  std::memcpy(&fields, header.data(), sizeof fields);
  return fields.sequence;
}

// The header of the marker `sequence` from (source, tag): from the stash, else off the header twin,
// stashing the headers of other markers met on the way.
Status take_header(Channel& channel, int source, int tag, std::uint64_t sequence, std::vector<char>* header) {
  std::lock_guard<std::mutex> lock(channel.stash_mutex);
  auto found = channel.stash.find({source, tag, sequence});
  if (found != channel.stash.end()) {
    *header = std::move(found->second);
    channel.stash.erase(found);
    return GDDT_OK;
  }
  for (;;) {
    GDDT_CHECK(receive_header(channel, source, tag, header));
    const std::uint64_t met = sequence_of(*header);
    if (met == sequence) return GDDT_OK;
    channel.stash[{source, tag, met}] = std::move(*header);
  }
}

// The sequence number a marker carries; the marker's bytes are where the library put them.
Status read_marker(const Operation& operation, std::uint64_t* sequence) {
  char marker[kMarkerBytes];
  const Message& message = operation.message;
  if (operation.marker_on_host) {
    std::memcpy(sequence, operation.early_marker, sizeof *sequence);
    return GDDT_OK;
  }
  switch (operation.route) {
    case Route::kHostStaged:
    case Route::kDeviceStaged:
      if (operation.staging.kind().type == GDDT_MEMORY_DEVICE) {
        gpu::DeviceGuard guard(operation.staging.kind().device);
        gpu::Stream stream = nullptr;
        GDDT_CHECK(gpu::library_stream(operation.staging.kind().device, &stream));
        GDDT_CHECK(gpu::memcpy_async(marker, operation.staging.data(), kMarkerBytes, stream));
        GDDT_CHECK(gpu::stream_synchronize(stream));
      } else {
        std::memcpy(marker, operation.staging.data(), kMarkerBytes);
      }
      break;
    case Route::kDeviceBytes: {
      gpu::DeviceGuard guard(message.kind.device);
      gpu::Stream stream = nullptr;
      GDDT_CHECK(gpu::library_stream(message.kind.device, &stream));
      GDDT_CHECK(gpu::memcpy_async(marker, message.first_byte(), kMarkerBytes, stream));
      GDDT_CHECK(gpu::stream_synchronize(stream));
      break;
    }
    case Route::kHostSpan:
    case Route::kForward: {
      // The library laid the marker out by the receive's typemap, in host memory.
      const char* typed = operation.route == Route::kForward
                              ? static_cast<const char*>(message.buffer)
                              : static_cast<const char*>(operation.staging.data()) - message.span_lb();
      GDDT_CHECK(within(GDDT_MEMORY_HOST).pack(pack::Window{message.layout.get(), message.count, 0, kMarkerBytes}, typed,
                                           marker, nullptr));
      break;
    }
    default:
      return GDDT_ERR_INTERNAL;
  }
  std::memcpy(sequence, marker, sizeof *sequence);
  return GDDT_OK;
}

// Unpacks `bytes` packed bytes at `packed` (host memory) into the receive's buffer.
Status unpack_host_bytes(Operation& operation, const char* packed, std::int64_t bytes) {
  Staging staging;
  GDDT_CHECK(staging.acquire(-1, bytes));
  std::memcpy(staging.data(), packed, static_cast<std::size_t>(bytes));
  return unpack_message(operation.message, staging, bytes, nullptr, meanwhile_for(operation), operation.ordering);
}

// The largest message whose unpack out of a sender's scratch waits to share a launch. Across two
// H200s (performance.md) shared launches moved windows of 64-256 KiB 1.04-1.23x as fast and the
// halo exchange's persistent sends in 0.74-0.77x the time; from 1 MiB windows ran 0.88-0.95x as
// fast at 4 MiB and 0.95-1.04x at 1 MiB, since a shared launch starts once its last member's pack
// is done where alone each starts as soon as its own is.
constexpr std::int64_t kGatheredMost = (1 << 20) - 1;

}  // namespace

Status resolve(Operation& operation, const MPI_Status& status, bool* handled, gpu::Stream* queued_on,
               std::vector<GatheredUnpack>* gathered) {
  *handled = false;
  if (queued_on != nullptr) *queued_on = nullptr;
  int count = 0;
  if (PMPI_Get_count(&status, MPI_BYTE, &count) != MPI_SUCCESS || count != kMarkerBytes || status.MPI_SOURCE < 0)
    return GDDT_OK;
  Channel* channel = operation.channel.get();
  if (channel == nullptr) return GDDT_OK;
  *handled = true;
  counters::add(counters::Counter::kPeerMarkers, 1);
  std::uint64_t sequence = 0;
  {
    counters::Stopwatch reading(counters::Counter::kPeerRecvMarkerNs);
    GDDT_CHECK(read_marker(operation, &sequence));
  }
  std::vector<char> bytes;
  {
    counters::Stopwatch taking(counters::Counter::kPeerRecvHeaderNs);
    GDDT_CHECK(take_header(*channel, status.MPI_SOURCE, status.MPI_TAG, sequence, &bytes));
  }
  Header header;
  std::memcpy(&header, bytes.data(), sizeof header);
  if (header.magic != kMagic) return GDDT_ERR_INTERNAL;
  const std::int64_t capacity = operation.message.bytes();
  const std::int64_t moved = std::min(header.bytes, capacity);
  const bool truncated = header.bytes > capacity;
  GDDT_LOG(kDebug, "marker from %d tag %d: %lld bytes by %s into %lld", status.MPI_SOURCE, status.MPI_TAG,
           static_cast<long long>(header.bytes), header.plane == Plane::kInline ? "header" : header.plane == Plane::kIpc ? "CUDA IPC" : "data message",
           static_cast<long long>(capacity));
  operation.status_bytes = moved;
  Status outcome = GDDT_OK;
  switch (header.plane) {
    case Plane::kInline:
      if (bytes.size() < sizeof header + static_cast<std::size_t>(header.bytes)) return GDDT_ERR_INTERNAL;
      if (!truncated && moved > 0) outcome = unpack_host_bytes(operation, bytes.data() + sizeof header, moved);
      break;
    case Plane::kIpc: {
      gpu::Stream reading = nullptr;
      GatheredUnpack gather;
      const bool may_gather = gathered != nullptr && queued_on != nullptr && moved <= kGatheredMost;
      if (!truncated && moved > 0)
        outcome =
            unpack_remote(operation, header, moved, queued_on ? &reading : nullptr, may_gather ? &gather : nullptr);
      if (gather.operation != nullptr) {  // queue_gathered unpacks it, then releases the scratch
        gather.data = channel->data;
        gather.sender = status.MPI_SOURCE;
        gather.transfer = header.transfer;
        gathered->push_back(gather);
        break;
      }
      // The sender's scratch is free again whatever became of the data.
      bool held = false;
      GDDT_CHECK(release_scratch(reading, channel->data, status.MPI_SOURCE, header.transfer, &outcome, &held));
      if (held) *queued_on = reading;
      break;
    }
    case Plane::kStaged:
      outcome = receive_staged(operation, header, status.MPI_SOURCE, *channel, truncated ? 0 : moved);
      break;
    case Plane::kDirect:
      outcome = resolve_lent(operation, header, bytes, status.MPI_SOURCE, *channel, truncated ? 0 : moved, queued_on);
      break;
    default:
      return GDDT_ERR_INTERNAL;
  }
  if (is_error(outcome)) return outcome;
  return truncated ? GDDT_ERR_TRUNCATE : GDDT_OK;
}

namespace {
std::atomic<MarkerFinisher> marker_finisher{nullptr};
}  // namespace

void set_marker_finisher(MarkerFinisher finisher) { marker_finisher.store(finisher, std::memory_order_release); }

void finish_arrived_markers(MPI_Comm comm) {
  if (MarkerFinisher finish = marker_finisher.load(std::memory_order_acquire)) finish(comm);
}

void correct_probe(MPI_Comm comm, MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE || !active()) return;
  int count = 0;
  if (PMPI_Get_count(status, MPI_BYTE, &count) != MPI_SUCCESS || count != kMarkerBytes || status->MPI_SOURCE < 0)
    return;
  Channel* channel = channel_of(comm);
  if (channel == nullptr) return;
  // Under MPI_THREAD_MULTIPLE another thread may be completing those receives itself.
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  if (level != MPI_THREAD_MULTIPLE) finish_arrived_markers(comm);
  const int source = status->MPI_SOURCE, tag = status->MPI_TAG;
  std::lock_guard<std::mutex> lock(channel->stash_mutex);
  auto oldest = channel->stash.lower_bound({source, tag, 0});
  if (oldest == channel->stash.end() || std::get<0>(oldest->first) != source || std::get<1>(oldest->first) != tag) {
    std::vector<char> header;
    if (receive_header(*channel, source, tag, &header) != GDDT_OK) return;
    oldest = channel->stash.emplace(std::make_tuple(source, tag, sequence_of(header)), std::move(header)).first;
  }
  Header header;
  std::memcpy(&header, oldest->second.data(), sizeof header);
  PMPI_Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(header.bytes));
}

}  // namespace gddt::protocol::peers
