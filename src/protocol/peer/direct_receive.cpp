// The direct plane on the receiver's side (internal.hpp): reading the sender's lent buffer through
// CUDA IPC, asking the sender to write it instead, or taking the copy the sender sent.
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/counters.hpp"
#include "protocol/peer/internal.hpp"
#include "type/wire.hpp"

namespace gddt::protocol::peers {

RemoteLayouts& remote_layouts() {
  static auto* instance = new RemoteLayouts;
  return *instance;
}

Status remote_layout(const char* wire, std::size_t size, std::shared_ptr<const type::Layout>* layout) {
  std::string key(wire, size);
  RemoteLayouts& cache = remote_layouts();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto found = cache.by_bytes.find(key);
  if (found != cache.by_bytes.end()) {
    *layout = found->second;
    return GDDT_OK;
  }
  auto decoded = std::make_shared<type::Layout>();
  GDDT_CHECK(type::decode_layout(wire, size, decoded.get()));
  if (cache.by_bytes.size() >= kMostRemoteLayouts) cache.by_bytes.clear();
  cache.by_bytes.emplace(std::move(key), decoded);
  *layout = std::move(decoded);
  return GDDT_OK;
}

Status move_in_one_kernel(const Message& from, const Message& to, std::int64_t bytes, gpu::Stream stream,
                          bool* served) {
  const pack::Backend& backend = within(GDDT_MEMORY_DEVICE);
  const pack::Window read{from.layout.get(), from.count, 0, bytes};
  const pack::Window written{to.layout.get(), to.count, 0, bytes};
  *served = true;
  if (to.contiguous()) return backend.pack(read, from.buffer, to.first_byte(), stream);
  if (from.contiguous()) return backend.unpack(written, to.buffer, from.first_byte(), stream);
  *served = false;
  if (backend.transcribe == nullptr) return GDDT_OK;
  return backend.transcribe(read, from.buffer, written, to.buffer, stream, served);
}

namespace {

// The first `bytes` packed bytes of lent buffer `theirs` (mapped for GPU `device`) packed into
// device scratch here and unpacked from it into the receive buffer, where no one kernel moves them
// (transcribe declines): on `stream` where that GPU writes the receive buffer (`reachable`), else
// through host staging. Returns once they are in place.
Status read_through_scratch(Operation& operation, const Message& theirs, std::int64_t bytes, int device,
                            gpu::Stream stream, bool reachable) {
  const pack::Backend& backend = within(GDDT_MEMORY_DEVICE);
  const Message& message = operation.message;
  Staging scratch;
  const void* packed = theirs.contiguous() ? theirs.first_byte() : nullptr;
  if (packed == nullptr) {
    GDDT_CHECK(scratch.acquire(device, bytes));
    if (!scratch.kind().device_accessible()) return GDDT_ERR_NO_MEMORY;
    GDDT_CHECK(backend.pack(pack::Window{theirs.layout.get(), theirs.count, 0, bytes}, theirs.buffer, scratch.data(),
                            stream));
    packed = scratch.data();
  }
  if (!reachable) return land_and_unpack(operation, packed, bytes, stream);
  const pack::Window to{message.layout.get(), message.count, 0, bytes};
  GDDT_CHECK(backend.unpack(to, message.buffer, packed, stream));
  return gpu::stream_synchronize(stream);
}

// Moves the first `bytes` packed bytes of the sender's own buffer (the direct plane; `theirs`: its
// layout and count), mapped here through CUDA IPC, into the receive buffer on the GPU that reads
// (reading_gpu), and returns once they are in place: one kernel (move_in_one_kernel), else a pack
// into device scratch here and an unpack out of it (where transcribe declines); through host
// staging where the receive buffer is out of that GPU's reach. With `left_on`, one kernel is left
// running (*left_on: its stream; null where the bytes are in place).
Status read_lent(Operation& operation, const Header& header, Message theirs, std::int64_t bytes,
                 gpu::Stream* left_on) {
  if (theirs.bytes() < bytes) return GDDT_ERR_INTERNAL;
  const Message& message = operation.message;
  int device = -1;
  char* typed = nullptr;
  GDDT_CHECK(reach_sender(message, header, &device, &typed));
  counters::Stopwatch moving(counters::Counter::kPeerRecvMoveNs);
  theirs.buffer = typed;
  gpu::DeviceGuard guard(device);
  gpu::Stream stream = nullptr;
  GDDT_CHECK(gpu::library_stream(device, &stream));
  const bool reachable = writes_directly(message, device);
  bool served = false;
  if (reachable) GDDT_CHECK(move_in_one_kernel(theirs, message, bytes, stream, &served));
  if (served && left_on != nullptr) {
    *left_on = stream;
  } else if (served) {
    GDDT_CHECK(gpu::stream_synchronize(stream));
  } else {
    GDDT_CHECK(read_through_scratch(operation, theirs, bytes, device, stream, reachable));
  }
  counters::add(counters::Counter::kPeerIpcBytes, bytes);
  return GDDT_OK;
}

// A lent buffer's read between two typed layouts that a batch of arrived receives (MPI_Waitall)
// left to launch with the others of its GPU's stream (launch_gathered_reads), its slot taken to read.
struct GatheredRead {
  Operation* operation = nullptr;
  Message theirs;  // the sender's buffer as mapped here
  std::int64_t bytes = 0;
  int device = -1;
  gpu::Stream stream = nullptr;
  lending::Slot* state = nullptr;
  std::uint32_t generation = 0;
};

// This thread's gathered reads: a thread launches its own before it blocks or its batch ends.
thread_local std::vector<GatheredRead> gathered_reads;

// Leaves the read of `bytes` of lent buffer `theirs` (its slot `state` taken to read) to launch with
// the others of the batch, *queued_on its stream; false where it goes now instead: a contiguous side
// is one pack or unpack, a receive buffer the reading GPU cannot write is staged.
bool gather_read(Operation& operation, const Header& header, Message& theirs, std::int64_t bytes,
                 lending::Slot& state, gpu::Stream* queued_on) {
  const Message& message = operation.message;
  if (within(GDDT_MEMORY_DEVICE).transcribe_set == nullptr || theirs.bytes() < bytes || theirs.contiguous() ||
      message.contiguous())
    return false;
  keep_mappings_for_gathering();
  int device = -1;
  char* typed = nullptr;
  gpu::Stream stream = nullptr;
  if (reach_sender(message, header, &device, &typed) != GDDT_OK || !writes_directly(message, device)) return false;
  {
    gpu::DeviceGuard guard(device);
    if (gpu::library_stream(device, &stream) != GDDT_OK) return false;
  }
  theirs.buffer = typed;
  gathered_reads.push_back(GatheredRead{&operation, std::move(theirs), bytes, device, stream, &state,
                                        header.lent_generation});
  *queued_on = stream;
  return true;
}

// After its launch (`launched`; `served` where it was queued): the read's buffer marked read once
// the kernel is done (hold_read), or now, after a declined read went through scratch.
void finish_gathered(GatheredRead& read, bool served, Status launched) {
  Status outcome = launched;
  if (served) {
    counters::add(counters::Counter::kPeerIpcBytes, read.bytes);
    if (hold_read(read.stream, *read.state, read.generation)) return;
    outcome = gpu::stream_synchronize(read.stream);
  } else if (!is_error(launched)) {
    gpu::DeviceGuard guard(read.device);
    outcome = read_through_scratch(*read.operation, read.theirs, read.bytes, read.device, read.stream, true);
    if (!is_error(outcome)) counters::add(counters::Counter::kPeerIpcBytes, read.bytes);
  }
  if (is_error(outcome)) read.operation->early.status = outcome;
  lending::finish_reading(*read.state, read.generation);
}

// Takes the copy a sender of the direct plane sent instead of lending its buffer (send_copy): its
// header on the data twin, then the bytes as the CUDA IPC plane or the staged plane has them, of
// which the first `moved` go into the receive buffer.
Status receive_copy(Operation& operation, int source, Channel& channel, int transfer, std::int64_t moved) {
  send_held_releases(true);
  Header copy;
  if (PMPI_Recv(&copy, static_cast<int>(sizeof copy), MPI_BYTE, source, transfer, channel.data, MPI_STATUS_IGNORE) !=
      MPI_SUCCESS)
    return GDDT_ERR_MPI;
  if (copy.magic != kMagic) return GDDT_ERR_INTERNAL;
  if (copy.bytes == kNoCopy) {
    const auto reason = static_cast<Status>(copy.part);
    return is_error(reason) ? reason : GDDT_ERR_INTERNAL;
  }
  if (copy.plane == Plane::kStaged) return receive_staged(operation, copy, source, channel, moved);
  const Status outcome = moved > 0 ? unpack_remote(operation, copy, moved, nullptr) : GDDT_OK;
  if (PMPI_Send(nullptr, 0, MPI_BYTE, source, kReleaseTags + transfer, channel.data) != MPI_SUCCESS)
    return GDDT_ERR_MPI;
  return outcome;
}

// The mean length of the contiguous runs of `message`'s typemap (the whole message where it is
// contiguous).
double mean_run(const Message& message) {
  if (message.contiguous()) return static_cast<double>(message.bytes());
  const type::Layout& layout = *message.layout;
  std::int64_t blocks = 0;
  for (const type::StridedBlock& piece : layout.pieces) blocks += piece.blocks();
  for (int r = 0; r < layout.nrepeat; ++r) blocks *= layout.repeat[static_cast<std::size_t>(r)].count;
  return blocks > 0 ? static_cast<double>(layout.size) / static_cast<double>(blocks) : 0.0;
}

// GDDT_PEER_DIRECTION=auto's model, from two H200s joined by NVLink (performance.md): the sender
// writes where its runs are shorter than kWriteRunsBelow bytes and the receive's at least
// kWriteRunsApart times as long, so that the side whose accesses cross the link is much the
// denser: 4-byte vectors and a 3-D face received as MPI_PACKED moved 1.2x and 2.8-4.3x as fast
// written at 2-4 MiB, where 64-byte vectors so received (0.95x) and every type received as itself
// (0.79-0.94x) moved faster read. On one GPU no access crosses a link: the receiver reads, which
// needs no answer from the sender.
constexpr double kWriteRunsBelow = 64;
constexpr double kWriteRunsApart = 4;

// Whether the receive of `message` asks the sender of a lent buffer (`theirs`, on GPU `source` of
// this process) to write into it rather than reading it (GDDT_PEER_DIRECTION).
bool asks_to_write(const Message& message, const Message& theirs, int source) {
  switch (config::peer_direction()) {
    case config::PeerDirection::kRead:
      return false;
    case config::PeerDirection::kWrite:
      return true;
    case config::PeerDirection::kAuto:
      break;
  }
  const double sent_runs = mean_run(theirs);
  return source >= 0 && message.kind.device != source && sent_runs < kWriteRunsBelow &&
         mean_run(message) >= kWriteRunsApart * sent_runs;
}

// Asks the sender of a lent buffer, while it waits in an MPI call for this receive, to write the
// first `moved` packed bytes into the receive buffer (a device allocation that CUDA IPC exports
// whole), and waits for the outcome (*outcome), serving meanwhile what this process's own waiting
// sends are asked (two processes asking each other would otherwise wait out the patience). False
// where no request was made: the sender is not waiting, the receive buffer cannot be named, or no
// cell is free.
bool ask_writer(const Operation& operation, const Header& header, std::int64_t moved, lending::Outcome* outcome) {
  const Message& message = operation.message;
  lending::Slot& state = lent_state(header.lent_owner, header.lent_slot);
  const std::uint32_t generation = header.lent_generation;
  if (message.kind.type != GDDT_MEMORY_DEVICE || !lending::waiting(state, generation)) return false;
  Header request;
  std::vector<char> wire;
  gpu::IpcExport exported;
  if (!reachable_in_place(message, &exported, &wire) || sizeof request + wire.size() > kWriteCellBytes ||
      name_in_export(exported, message.buffer, &request) != GDDT_OK || user_work_done(message.kind.device) != GDDT_OK)
    return false;
  Node& n = node();
  NodeEntry& mine = n.table->entries[n.slot];
  int index = 0;
  for (int idle = 0; index < kWriteCells; ++index, idle = 0)
    if (mine.write_cells[index].taken.compare_exchange_strong(idle, 1, std::memory_order_acq_rel)) break;
  if (index == kWriteCells) return false;
  WriteCell& cell = mine.write_cells[index];
  request.plane = Plane::kDirect;
  request.bytes = moved;
  request.count = message.count;
  request.layout_bytes = wire.size();
  std::memcpy(cell.request, &request, sizeof request);
  std::memcpy(cell.request + sizeof request, wire.data(), wire.size());
  cell.bytes = static_cast<std::uint32_t>(sizeof request + wire.size());
  n.table->entries[header.lent_owner].asked_by[header.lent_slot].store(n.slot * kWriteCells + index,
                                                                       std::memory_order_release);
  send_held_releases(true);
  const bool asked = lending::ask(state, generation, cell.answer);
  if (asked) {
    const std::int64_t deadline =
        steady_ns() + static_cast<std::int64_t>(config::settings().peer_direct_patience) * 1000;
    for (;;) {
      *outcome = lending::look(state, generation, cell.answer, steady_ns() >= deadline);
      if (*outcome != lending::Outcome::kPending) break;
      serve_asked_writes();
      sched_yield();
    }
  }
  cell.taken.store(0, std::memory_order_release);
  return asked;
}

}  // namespace

Status resolve_lent(Operation& operation, const Header& header, const std::vector<char>& bytes, int source,
                    Channel& channel, std::int64_t moved, gpu::Stream* queued_on) {
  if (bytes.size() != sizeof header + header.layout_bytes || header.lent_owner < 0 ||
      header.lent_owner >= kMostLocal || header.lent_slot < 0 || header.lent_slot >= kLentSlots)
    return GDDT_ERR_INTERNAL;
  Node& n = node();
  n.table->entries[n.slot].resolved_direct_ns.store(steady_ns(), std::memory_order_relaxed);
  lending::Slot& state = lent_state(header.lent_owner, header.lent_slot);
  Message theirs;
  GDDT_CHECK(remote_layout(bytes.data() + sizeof header, static_cast<std::size_t>(header.layout_bytes),
                           &theirs.layout));
  theirs.count = header.count;
  lending::Outcome outcome = lending::Outcome::kPending;
  const bool asked = moved > 0 && asks_to_write(operation.message, theirs, gpu::device_of(header.uuid)) &&
                     ask_writer(operation, header, moved, &outcome);
  if (asked && outcome == lending::Outcome::kWritten) {
    counters::add(counters::Counter::kPeerIpcBytes, moved);
    return GDDT_OK;
  }
  // Asked, the outcome is kRead (the slot taken to read) or kCopied.
  if (asked ? outcome == lending::Outcome::kCopied : !lending::take_to_read(state, header.lent_generation))
    return receive_copy(operation, source, channel, header.transfer, moved);
  if (queued_on != nullptr && moved > 0 && gather_read(operation, header, theirs, moved, state, queued_on))
    return GDDT_OK;
  gpu::Stream reading = nullptr;
  Status read = moved > 0 ? read_lent(operation, header, std::move(theirs), moved, queued_on ? &reading : nullptr)
                          : GDDT_OK;
  if (reading != nullptr && !is_error(read) && hold_read(reading, state, header.lent_generation)) {
    *queued_on = reading;
    return GDDT_OK;
  }
  if (reading != nullptr) {
    const Status synced = gpu::stream_synchronize(reading);
    if (!is_error(read)) read = synced;
  }
  lending::finish_reading(state, header.lent_generation);
  return read;
}

void launch_gathered_reads() {
  if (gathered_reads.empty()) return;
  std::vector<GatheredRead> reads;
  reads.swap(gathered_reads);
  // Those of one stream launch together, in the order they were resolved.
  std::stable_sort(reads.begin(), reads.end(),
                   [](const GatheredRead& a, const GatheredRead& b) { return a.stream < b.stream; });
  const pack::Backend& backend = within(GDDT_MEMORY_DEVICE);
  std::vector<pack::TranscribeMove> moves;
  for (std::size_t first = 0; first < reads.size();) {
    std::size_t end = first;
    moves.clear();
    for (; end < reads.size() && reads[end].stream == reads[first].stream; ++end) {
      const GatheredRead& read = reads[end];
      const Message& message = read.operation->message;
      pack::TranscribeMove move;
      move.from = pack::Window{read.theirs.layout.get(), read.theirs.count, 0, read.bytes};
      move.from_typed = read.theirs.buffer;
      move.to = pack::Window{message.layout.get(), message.count, 0, read.bytes};
      move.to_typed = message.buffer;
      moves.push_back(move);
    }
    Status launched;
    {
      counters::Stopwatch moving(counters::Counter::kPeerRecvMoveNs);
      gpu::DeviceGuard guard(reads[first].device);
      launched = backend.transcribe_set(moves.data(), static_cast<int>(moves.size()), reads[first].stream);
    }
    for (std::size_t i = first; i < end; ++i) finish_gathered(reads[i], moves[i - first].served, launched);
    first = end;
  }
}

}  // namespace gddt::protocol::peers
