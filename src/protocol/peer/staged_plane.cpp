// The staged plane (internal.hpp): a message's packed bytes in parts on the data twin, each part
// packed while the ones before cross and unpacked while the ones after arrive.
#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "core/counters.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

namespace {

// Receives of a staged message's parts posted ahead of the one being unpacked.
constexpr std::int64_t kStagedPartsAhead = 4;

// How long a staged send waits for the parts of earlier ones to be received, when none was, before
// it takes ordinary host memory instead of pinned staging.
constexpr double kStagingPatienceSeconds = 0.01;
// The retired count at which such a wait last ran out: until more parts were received, later sends
// do not wait again (their receiver may be busy elsewhere for long).
std::atomic<std::uint64_t> futile_at{~std::uint64_t{0}};

}  // namespace

std::int64_t agreed_staged_part(const Channel& channel, int peer) {
  std::int64_t part = own_staged_part();
  if (peer >= 0 && peer < static_cast<int>(channel.slot_of_rank.size()))
    part = std::max(part, node().table->entries[channel.slot_of_rank[static_cast<std::size_t>(peer)]].staged_part);
  return part;
}

Status take_staged_send_staging(Staging& staging, bool on_device, int device, std::int64_t bytes) {
  auto take = [&] { return on_device ? staging.acquire_device(device, bytes) : staging.acquire_pinned(bytes); };
  if (gpu::available() && take() == GDDT_OK) return GDDT_OK;
  std::uint64_t retired = lingering_retired();
  if (gpu::available() && lingering().any.load(std::memory_order_acquire) &&
      futile_at.load(std::memory_order_relaxed) != retired) {
    double since = PMPI_Wtime();
    while (lingering().any.load(std::memory_order_acquire)) {
      progress();
      if (take() == GDDT_OK) return GDDT_OK;
      const std::uint64_t now = lingering_retired();
      if (now != retired) {
        retired = now;
        since = PMPI_Wtime();
      } else if (PMPI_Wtime() - since > kStagingPatienceSeconds) {
        futile_at.store(retired, std::memory_order_relaxed);
        break;
      }
    }
  }
  return staging.acquire(-1, bytes);
}

Status send_staged(Operation& operation, Channel& channel, int dest, const Header& header,
                   const std::shared_ptr<Staging>& staging) {
  const Message& message = operation.message;
  const gpu::WhileWaiting meanwhile = meanwhile_for(operation);
  const std::int64_t parts = (header.bytes + header.part - 1) / header.part;
  gpu::Stream stream = nullptr;
  if (moves_in_one_launch(message, *staging, header.part)) GDDT_CHECK(message_stream(message, *staging, &stream));
  const std::int64_t ahead = stream != nullptr ? kStagedPartsAhead : 1;
  std::vector<gpu::Event> packed(static_cast<std::size_t>(parts), nullptr);
  auto length_of = [&](std::int64_t k) { return std::min(header.part, header.bytes - k * header.part); };
  Status outcome = GDDT_OK;
  for (std::int64_t k = 0, queued = 0; k < parts && !is_error(outcome); ++k) {
    for (; queued < std::min(parts, k + ahead) && !is_error(outcome); ++queued) {
      counters::Stopwatch packing(counters::Counter::kPeerSendPackNs);
      outcome = pack_message_part(message, *staging, queued * header.part, length_of(queued), stream, meanwhile);
      if (is_error(outcome) || stream == nullptr) continue;
      gpu::Event& event = packed[static_cast<std::size_t>(queued)];
      event = part_events().take(stream);
      if (event != nullptr && gpu::event_record(event, stream) != GDDT_OK) {
        part_events().give(stream, event);
        event = nullptr;
      }
    }
    if (is_error(outcome)) break;
    if (stream != nullptr) {
      const gpu::Event event = packed[static_cast<std::size_t>(k)];
      outcome = event != nullptr ? gpu::event_wait(event, meanwhile) : gpu::stream_wait(stream, meanwhile);
      if (is_error(outcome)) break;
    }
    Pending pending;
    if (PMPI_Isend(static_cast<char*>(staging->data()) + k * header.part, static_cast<int>(length_of(k)), MPI_BYTE,
                   dest, header.transfer, channel.data, &pending.request) != MPI_SUCCESS) {
      outcome = GDDT_ERR_MPI;
      break;
    }
    counters::add(counters::Counter::kPeerStagedParts, 1);
    pending.staging = staging;
    linger(std::move(pending));
  }
  // Packs queued past a failure still write into the staging: let them finish before it goes.
  if (stream != nullptr && is_error(outcome)) gpu::stream_synchronize(stream);
  for (gpu::Event event : packed) part_events().give(stream, event);
  return outcome;
}

Status receive_staged(Operation& operation, const Header& header, int source, Channel& channel, std::int64_t bytes) {
  send_held_releases(true);
  counters::Stopwatch moving(counters::Counter::kPeerRecvMoveNs);
  // The parts land in the staging the marker was received into where it holds them all (its marker
  // is read by now), else in staging of their own: on the receive's GPU where the library takes
  // device memory, in host memory otherwise.
  const Message& message = operation.message;
  const bool on_device = message.kind.is_device() && library_cuda_aware();
  Staging own_landing;
  const Staging& posted_into = operation.staging;
  const bool reuse = posted_into.data() != nullptr && posted_into.size() >= header.bytes &&
                     (on_device ? posted_into.kind().is_device() : posted_into.kind().host_accessible());
  if (!reuse) {
    GDDT_CHECK(own_landing.acquire(on_device ? message.kind.device : -1, header.bytes));
  }
  const Staging& landing = reuse ? posted_into : own_landing;
  const std::int64_t part = header.part;
  if (part <= 0) return GDDT_ERR_INTERNAL;
  const std::int64_t parts = (header.bytes + part - 1) / part;
  std::vector<MPI_Request> requests(static_cast<std::size_t>(parts), MPI_REQUEST_NULL);
  auto post = [&](std::int64_t k) {
    const std::int64_t offset = k * part;
    const int length = static_cast<int>(std::min(part, header.bytes - offset));
    return PMPI_Irecv(static_cast<char*>(landing.data()) + offset, length, MPI_BYTE, source, header.transfer,
                      channel.data, &requests[static_cast<std::size_t>(k)]);
  };
  gpu::Stream stream = nullptr;
  Status outcome = bytes > 0 ? message_stream(operation.message, landing, &stream) : GDDT_OK;
  const gpu::WhileWaiting meanwhile = meanwhile_for(operation);
  for (std::int64_t k = 0, posted = 0; k < parts; ++k) {
    for (; posted < std::min(parts, k + kStagedPartsAhead); ++posted)
      if (post(posted) != MPI_SUCCESS) return GDDT_ERR_MPI;
    if (PMPI_Wait(&requests[static_cast<std::size_t>(k)], MPI_STATUS_IGNORE) != MPI_SUCCESS) return GDDT_ERR_MPI;
    const std::int64_t offset = k * part, wanted = std::min(part, bytes - offset);
    if (!is_error(outcome) && wanted > 0)
      outcome = unpack_message_part(operation.message, landing, offset, wanted, stream, meanwhile, operation.ordering);
  }
  if (stream != nullptr) {
    const Status drained = gpu::stream_wait(stream, meanwhile);
    if (!is_error(outcome)) outcome = drained;
  }
  return outcome;
}

}  // namespace gddt::protocol::peers
