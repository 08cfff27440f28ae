// The eager path (internal.hpp): a small device message packed by the sender's running resident
// kernel into the receiver's landing (landing.cpp), or, where it has none, into scratch the
// receiver maps through CUDA IPC, and unpacked by the receiver's resident kernel once the flag the
// pack sets (in the landing, else flags.cpp) says the bytes are there. Neither GPU launches a
// kernel or records an event, and no host waits between the two GPUs.
#include <atomic>
#include <memory>

#include "core/counters.hpp"
#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

namespace {

// Transfers of the eager path awaiting their release, by the receiver's node slot.
std::atomic<int> in_flight[kMostLocal];

}  // namespace

bool eager_clear_to(int receiver) {
  if (receiver < 0 || receiver >= kMostLocal) return false;
  if (in_flight[receiver].load(std::memory_order_relaxed) == 0) return true;
  complete_lingering();  // a release that came since the last MPI call
  return in_flight[receiver].load(std::memory_order_relaxed) == 0;
}

void release_eager(const EagerHold& eager) {
  if (eager.pack.ticket != 0) {
    bool moved = false;  // a pack waits for no flag: it always moves
    within(GDDT_MEMORY_DEVICE).wait_posted(eager.pack, {}, &moved);
  }
  give_back(eager.flag);
  if (eager.receiver >= 0) in_flight[eager.receiver].fetch_sub(1, std::memory_order_relaxed);
}

namespace {

// The receiver's landing for this send, where it is the only transfer of the eager path to that
// receiver in flight (another thread's may have taken the way since eager_clear_to): its slot in
// the landing is then free. The claim is counted in in_flight like any transfer's.
bool claim_landing(int receiver, int device, std::int64_t bytes, Landing* landing) {
  int none = 0;
  if (!in_flight[receiver].compare_exchange_strong(none, 1, std::memory_order_acq_rel)) return false;
  if (landing_of(receiver, device, bytes, landing)) return true;
  in_flight[receiver].fetch_sub(1, std::memory_order_relaxed);
  return false;
}

}  // namespace

Status send_eager(Operation& operation, Channel& channel, Header& header, bool* sent) {
  *sent = false;
  const Message& message = operation.message;
  const pack::Backend& cuda = within(GDDT_MEMORY_DEVICE);
  const int device = message.kind.device;
  if (cuda.post_now == nullptr) return GDDT_OK;  // the route asked the rest (awaits_ipc)
  PeerSend& send = *operation.peer;
  const int receiver = channel.slot_of_rank[static_cast<std::size_t>(send.dest)];
  Landing landing;
  const bool lands = claim_landing(receiver, device, header.bytes, &landing);
  std::shared_ptr<Staging> staging;
  FlagLease flag;
  void* packed = landing.packed;
  pack::DeviceFlag signal = landing.flag;
  if (!lands) {
    staging = std::make_shared<Staging>();
    counters::Stopwatch staging_time(counters::Counter::kPeerSendStagingNs);
    // Scratch that is not device memory CUDA IPC exports (the pool is spent): inline instead.
    if (is_error(staging->acquire(device, header.bytes, true)) || !staging->kind().is_device() ||
        !expose_scratch(*staging, &header) || !take_flag(device, &flag))
      return GDDT_OK;
    packed = staging->data();
    signal = flag.flag;
  }
  {
    counters::Stopwatch packing(counters::Counter::kPeerSendPackNs);
    gpu::DeviceGuard guard(device);
    const pack::Window window{message.layout.get(), message.count, 0, message.bytes()};
    bool posted = false;
    const Status status = cuda.post_now(false, window, message.typed(), packed, {}, signal, operation.ordering,
                                        &send.pack_posted, &posted);
    if (is_error(status) || !posted) {
      give_back(flag);
      if (lands) in_flight[receiver].fetch_sub(1, std::memory_order_relaxed);
      return status;
    }
  }
  counters::add(lands ? counters::Counter::kPeerEagerLanded : counters::Counter::kPeerEagerPacks, 1);
  EagerHold hold{flag, send.pack_posted, receiver};
  if (lands) {
    header.plane = Plane::kIpc;
    header.landing_gpu = landing.gpu_index;
    header.offset = landing.offset;
    header.flag_offset = landing.flag_offset;
    header.flag_value = landing.flag.value;
  } else {
    in_flight[receiver].fetch_add(1, std::memory_order_relaxed);
    name_flag(flag, &header);
  }
  header.transfer = new_transfer();
  *sent = true;
  const Status header_sent = send_header(channel, header, nullptr, send);
  Status status = header_sent;
  // A copy keeps the scratch where holding fails: the pack may still write it.
  if (!is_error(status)) status = hold_until_release(channel, send.dest, header, staging, PackEvent{}, hold);
  if (is_error(status)) {
    // Once a landed message's header is out its receiver may still read the slot: the claim stays,
    // and nothing lands there again.
    if (lands && !is_error(header_sent)) hold.receiver = -1;
    release_eager(hold);  // waits for the pack; the flag (and the count) go back
  }
  return status;
}

Status unpack_after_flag(Operation& operation, pack::DeviceFlag after, std::int64_t bytes, const char* packed,
                         bool* moved) {
  *moved = false;
  const Message& message = operation.message;
  const pack::Backend& cuda = within(GDDT_MEMORY_DEVICE);
  if (cuda.post_now == nullptr) return GDDT_OK;
  const pack::Window window{message.layout.get(), message.count, 0, bytes};
  pack::Posted posted;
  bool served = false;
  GDDT_CHECK(cuda.post_now(true, window, message.buffer, packed, after, {}, operation.ordering, &posted, &served));
  if (!served) return GDDT_OK;
  GDDT_CHECK(cuda.wait_posted(posted, meanwhile_for(operation), moved));
  counters::add(*moved ? counters::Counter::kPeerEagerUnpacks : counters::Counter::kPeerEagerGaveUp, 1);
  return GDDT_OK;
}

}  // namespace gddt::protocol::peers
