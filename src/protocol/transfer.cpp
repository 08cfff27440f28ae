#include "protocol/transfer.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/config.hpp"
#include "core/counters.hpp"
#include "core/log.hpp"
#include "pack/engine.hpp"
#include "protocol/lanes.hpp"

namespace gddt::protocol {
namespace {

// GDDT_RESIDENT_ZEROCOPY_MAX, the largest zero-copy window (one buffer in host memory, which the
// GPU reads or writes over the bus) offered to the resident kernel: its built-in model is 16 KiB
// because at 64 KiB the cluster of blocks made staged messages slower than a launched grid did
// (an x face of a 3-D grid 44.6-46.0 us one way against 37.7, a vector of 4 B blocks 42.5-43.6
// against 38.0, between two H200s; performance.md), while up to 16 KiB it was quicker.
bool resident_may_take_zero_copy(std::int64_t length) {
  return static_cast<std::uint64_t>(length) <= config::settings().resident_zerocopy_max;
}

// Two chunk slots of scratch. Taken from the pools; a GPU whose scratch pool is spent packs into
// pinned slots instead, and where neither pool can give even the minimum, the slots are memory of
// their own (device memory for a GPU's packs, heap memory otherwise): slower, but failing only
// where memory has run out.
class Slots {
 public:
  Slots() = default;
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;
  ~Slots() {
    if (own_device_ != nullptr) gpu::device_free(device_, own_device_);
  }

  Status acquire(const Lanes& lanes, std::int64_t length) {
    const std::size_t least_chunk = config::settings().staging_chunk_min;
    const std::size_t chunk = config::staging_chunk();
    const std::size_t want = 2 * std::min(chunk, static_cast<std::size_t>(length));
    const std::size_t least = 2 * std::min(least_chunk, static_cast<std::size_t>(length));
    const pool::Where where = lanes.scratch_where();
    Status status = GDDT_ERR_NO_MEMORY;
    if (lanes.on_gpu()) status = pool::acquire(where, lanes.device(), want, least, &lease_);
    if (status != GDDT_OK && where == pool::Where::kDevice)
      status = pool::acquire(pool::Where::kPinned, -1, want, least, &lease_);
    if (status == GDDT_OK) return use(lease_.data(), lease_.size());
    GDDT_LOG(kInfo, "no pooled scratch for %zu bytes of pipeline slots: allocating them", least);
    if (where == pool::Where::kDevice) {
      GDDT_CHECK(gpu::device_alloc(lanes.device(), least, &own_device_));
      device_ = lanes.device();
      return use(own_device_, least);
    }
    if (lanes.on_gpu()) counters::add(counters::Counter::kPinnedPoolMisses, 1);
    heap_.reset(new (std::nothrow) char[want]);
    if (!heap_) return GDDT_ERR_NO_MEMORY;
    return use(heap_.get(), want);
  }
  std::int64_t chunk() const { return chunk_; }
  char* slot(std::int64_t index) const { return base_ + (index & 1) * chunk_; }

 private:
  Status use(void* base, std::size_t bytes) {
    base_ = static_cast<char*>(base);
    chunk_ = static_cast<std::int64_t>(bytes / 2);
    return GDDT_OK;
  }

  pool::Lease lease_;
  std::unique_ptr<char[]> heap_;
  void* own_device_ = nullptr;
  int device_ = -1;
  char* base_ = nullptr;
  std::int64_t chunk_ = 0;
};

pack::Window sub_window(const pack::Window& w, std::int64_t done, std::int64_t bytes) {
  pack::Window sub = w;
  sub.offset = w.offset + done;
  sub.length = bytes;
  return sub;
}

Status open_lanes(memory::Kind typed, memory::Kind packed, gpu::Stream stream, Lanes* lanes) {
  const bool gpu_involved = typed.is_device() || packed.is_device();
  return Lanes::open(typed.is_device(), gpu_involved, device_of(typed, packed), stream, lanes);
}

// Markers of the two slots: [0, 1] "slot filled by the first stage", [2, 3] "slot drained by
// the second stage" (a slot is refilled only after its previous chunk was drained).
constexpr int kFilled = 0, kDrained = 2;

Status pipelined_pack(const pack::Window& w, const void* typed, char* packed, Lanes& lanes, const Slots& slots,
                      const gpu::WhileWaiting& meanwhile) {
  for (std::int64_t i = 0, done = 0; done < w.length; ++i, done += slots.chunk()) {
    const std::int64_t bytes = std::min(slots.chunk(), w.length - done);
    const int slot = static_cast<int>(i & 1);
    if (i >= 2) GDDT_CHECK(lanes.wait(Lanes::kPackLane, kDrained + slot));
    GDDT_CHECK(lanes.pack(sub_window(w, done, bytes), typed, slots.slot(i)));
    GDDT_CHECK(lanes.mark(kFilled + slot, Lanes::kPackLane));
    GDDT_CHECK(lanes.wait(Lanes::kCopyLane, kFilled + slot));
    GDDT_CHECK(lanes.copy(packed + done, slots.slot(i), static_cast<std::size_t>(bytes)));
    GDDT_CHECK(lanes.mark(kDrained + slot, Lanes::kCopyLane));
  }
  return lanes.drain(meanwhile);
}

Status pipelined_unpack(const pack::Window& w, void* typed, const char* packed, Lanes& lanes, const Slots& slots,
                        const gpu::WhileWaiting& meanwhile) {
  for (std::int64_t i = 0, done = 0; done < w.length; ++i, done += slots.chunk()) {
    const std::int64_t bytes = std::min(slots.chunk(), w.length - done);
    const int slot = static_cast<int>(i & 1);
    if (i >= 2) GDDT_CHECK(lanes.wait(Lanes::kCopyLane, kDrained + slot));
    GDDT_CHECK(lanes.copy(slots.slot(i), packed + done, static_cast<std::size_t>(bytes)));
    GDDT_CHECK(lanes.mark(kFilled + slot, Lanes::kCopyLane));
    GDDT_CHECK(lanes.wait(Lanes::kPackLane, kFilled + slot));
    GDDT_CHECK(lanes.unpack(sub_window(w, done, bytes), typed, slots.slot(i)));
    GDDT_CHECK(lanes.mark(kDrained + slot, Lanes::kPackLane));
  }
  return lanes.drain(meanwhile);
}

// The in-place ways: one backend call on the caller's stream, or on the library stream of
// the device followed by a wait.
template <typename Call>
Status in_place(int device, gpu::Stream user_stream, const gpu::WhileWaiting& meanwhile, Call&& call) {
  gpu::Stream stream = user_stream;
  if (stream == nullptr) GDDT_CHECK(gpu::library_stream(device, &stream));
  GDDT_CHECK(call(stream));
  return user_stream == nullptr ? gpu::stream_wait(stream, meanwhile) : GDDT_OK;
}

void log_choice(const char* what, const pack::Window& w, memory::Kind typed, memory::Kind packed, Way way) {
  GDDT_LOG(kDebug, "%s %lld bytes at %lld, typed %s, packed %s, %s layout: %s", what,
           static_cast<long long>(w.length), static_cast<long long>(w.offset), gddt_memory_type_name(typed.type),
           gddt_memory_type_name(packed.type), type::shape_name(w.layout->shape), way_name(way));
}

}  // namespace

int device_of(memory::Kind typed, memory::Kind packed) {
  if (typed.is_device()) return typed.device;
  if (packed.is_device()) return packed.device;
  return -1;
}

const char* way_name(Way way) {
  switch (way) {
    case Way::kHost: return "host";
    case Way::kDevice: return "device";
    case Way::kZeroCopy: return "zero-copy";
    case Way::kPipelined: return "pipelined";
  }
  return "?";
}

Way choose(memory::Kind typed, memory::Kind packed, std::int64_t bytes) {
  if (!typed.is_device() && !packed.is_device()) return Way::kHost;
  if (typed.device_accessible() && packed.device_accessible()) {
    const bool both_on_device = typed.is_device() && packed.is_device();
    if (both_on_device || static_cast<std::uint64_t>(bytes) <= config::settings().zerocopy_max) {
      return both_on_device ? Way::kDevice : Way::kZeroCopy;
    }
  }
  return Way::kPipelined;
}

namespace {

// Both directions share everything but the backend call and the pipeline's stage order.
template <bool kPacking>
Status transfer(const pack::Window& w, char* typed, memory::Kind typed_kind, char* packed, memory::Kind packed_kind,
                gpu::Stream stream, Way way, const gpu::WhileWaiting& meanwhile, pack::Ordering ordering) {
  if (w.length == 0) return GDDT_OK;
  log_choice(kPacking ? "pack" : "unpack", w, typed_kind, packed_kind, way);
  auto backend_call = [&](const pack::Backend& backend, gpu::Stream s) {
    return kPacking ? backend.pack(w, typed, packed, s) : backend.unpack(w, typed, packed, s);
  };
  const pack::Backend* backend = pack::backend_for(typed_kind.type, packed_kind.type);
  if (way == Way::kHost) return backend != nullptr ? backend_call(*backend, nullptr) : GDDT_ERR_INTERNAL;
  const bool gpu_involved = typed_kind.is_device() || packed_kind.is_device();
  if (gpu_involved && !gpu::available()) return GDDT_ERR_NO_DEVICE;
  const int device = gpu_involved ? device_of(typed_kind, packed_kind) : -1;
  gpu::DeviceGuard guard(device);
  if (way != Way::kPipelined) {
    if (backend == nullptr) return GDDT_ERR_INTERNAL;
    if (stream == nullptr && backend->pack_now != nullptr &&
        (way == Way::kDevice || resident_may_take_zero_copy(w.length))) {
      bool served = false;
      const Status status = kPacking ? backend->pack_now(w, typed, packed, ordering, meanwhile, &served)
                                     : backend->unpack_now(w, typed, packed, ordering, meanwhile, &served);
      if (served || is_error(status)) return status;
    }
    return in_place(device, stream, meanwhile, [&](gpu::Stream s) { return backend_call(*backend, s); });
  }
  Lanes lanes;
  GDDT_CHECK(open_lanes(typed_kind, packed_kind, stream, &lanes));
  Slots slots;
  GDDT_CHECK(slots.acquire(lanes, w.length));
  return kPacking ? pipelined_pack(w, typed, packed, lanes, slots, meanwhile)
                  : pipelined_unpack(w, typed, packed, lanes, slots, meanwhile);
}

}  // namespace

Status pack(const pack::Window& w, const void* typed, memory::Kind typed_kind, void* packed,
            memory::Kind packed_kind, gpu::Stream stream, Way way, const gpu::WhileWaiting& meanwhile,
            pack::Ordering ordering) {
  return transfer<true>(w, const_cast<char*>(static_cast<const char*>(typed)), typed_kind, static_cast<char*>(packed),
                        packed_kind, stream, way, meanwhile, ordering);
}

Status unpack(const pack::Window& w, void* typed, memory::Kind typed_kind, const void* packed,
              memory::Kind packed_kind, gpu::Stream stream, Way way, const gpu::WhileWaiting& meanwhile,
              pack::Ordering ordering) {
  return transfer<false>(w, static_cast<char*>(typed), typed_kind, const_cast<char*>(static_cast<const char*>(packed)),
                         packed_kind, stream, way, meanwhile, ordering);
}

Status copy_and_wait(void* dst, const void* src, std::size_t bytes, int device) {
  if (device < 0) {
    std::memcpy(dst, src, bytes);
    return GDDT_OK;
  }
  gpu::DeviceGuard guard(device);
  gpu::Stream stream = nullptr;
  GDDT_CHECK(gpu::library_stream(device, &stream));
  GDDT_CHECK(gpu::memcpy_async(dst, src, bytes, stream));
  return gpu::stream_synchronize(stream);
}

}  // namespace gddt::protocol
