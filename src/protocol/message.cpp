#include "protocol/message.hpp"

#include <algorithm>
#include <vector>

#include "core/counters.hpp"
#include "pack/engine.hpp"
#include "protocol/transfer.hpp"

namespace gddt::protocol {
namespace {

// Host messages routed through gddt use the same chunk pipeline as device ones, run on the
// CPU, so that machines without a GPU exercise it.
Way way_for(memory::Kind typed, memory::Kind staged, std::int64_t bytes) {
  Way way = choose(typed, staged, bytes);
  // The OpenCL backend moves a whole window itself: the chunk lanes know host and CUDA memory.
  return way == Way::kHost && typed.type != GDDT_MEMORY_OPENCL ? Way::kPipelined : way;
}

pack::Window whole(const Message& message, std::int64_t bytes) {
  return pack::Window{message.layout.get(), message.count, 0, bytes};
}

}  // namespace

// One block starting at the lower bound, with no room around it, so `count` elements are
// one run of bytes.
bool Message::contiguous() const {
  return layout->shape == type::Shape::kContiguous && layout->extent == layout->size &&
         layout->pieces[0].offset == layout->lb;
}

Status Staging::acquire(int device, std::int64_t bytes, bool shared) {
  const auto size = static_cast<std::size_t>(bytes);
  if (device >= 0) {
    if (acquire_device(device, bytes, shared) == GDDT_OK) return GDDT_OK;
    GDDT_LOG(kInfo, "no device scratch for %lld bytes: staging through host memory", static_cast<long long>(bytes));
  }
  if (!gpu::available() || acquire_pinned(bytes) != GDDT_OK) {
    if (gpu::available()) {
      GDDT_LOG(kInfo, "no pinned staging for %lld bytes within GDDT_POOL_PINNED_MAX: staging in ordinary host memory",
               static_cast<long long>(bytes));
      counters::add(counters::Counter::kPinnedPoolMisses, 1);
    }
    heap_.reset(new (std::nothrow) char[size > 0 ? size : 1]);
    if (!heap_) return GDDT_ERR_NO_MEMORY;
    data_ = heap_.get();
    kind_ = memory::Kind{GDDT_MEMORY_HOST, -1};
  }
  size_ = bytes;
  return GDDT_OK;
}

Status Staging::acquire_pinned(std::int64_t bytes) {
  const auto size = static_cast<std::size_t>(bytes);
  GDDT_CHECK(pool::acquire(pool::Where::kPinned, -1, size, size, &lease_));
  data_ = lease_.data();
  size_ = bytes;
  kind_ = memory::Kind{GDDT_MEMORY_PINNED, -1};
  return GDDT_OK;
}

Status Staging::acquire_device(int device, std::int64_t bytes, bool shared) {
  const auto size = static_cast<std::size_t>(bytes);
  GDDT_CHECK(pool::acquire(shared ? pool::Where::kShared : pool::Where::kDevice, device, size, size, &lease_));
  data_ = lease_.data();
  size_ = bytes;
  kind_ = memory::Kind{GDDT_MEMORY_DEVICE, device};
  return GDDT_OK;
}

Status message_stream(const Message& message, const Staging& staging, gpu::Stream* stream) {
  *stream = nullptr;
  const int device = device_of(message.kind, staging.kind());
  return device < 0 ? GDDT_OK : gpu::library_stream(device, stream);
}

Status copy_span(const Message& message, const Staging& staging) {
  return copy_and_wait(staging.data(), static_cast<const char*>(message.buffer) + message.span_lb(),
                       static_cast<std::size_t>(message.span_bytes()),
                       message.kind.is_device() ? message.kind.device : -1);
}

Status copy_span_back(const Message& message, const Staging& staging) {
  return copy_and_wait(static_cast<char*>(message.buffer) + message.span_lb(), staging.data(),
                       static_cast<std::size_t>(message.span_bytes()),
                       message.kind.is_device() ? message.kind.device : -1);
}

Status pack_message(const Message& message, const Staging& staging, const gpu::WhileWaiting& meanwhile) {
  return pack_message_part(message, staging, 0, message.bytes(), nullptr, meanwhile);
}

Status pack_message_part(const Message& message, const Staging& staging, std::int64_t offset, std::int64_t bytes,
                         gpu::Stream stream, const gpu::WhileWaiting& meanwhile) {
  return pack(pack::Window{message.layout.get(), message.count, offset, bytes}, message.typed(), message.kind,
              static_cast<char*>(staging.data()) + offset, staging.kind(), stream,
              way_for(message.kind, staging.kind(), bytes), meanwhile);
}

Status queue_pack(const Message& message, const Staging& staging, gpu::Stream* stream,
                  const gpu::WhileWaiting& meanwhile) {
  *stream = nullptr;
  const std::int64_t bytes = message.bytes();
  const Way way = way_for(message.kind, staging.kind(), bytes);
  if (way == Way::kDevice || way == Way::kZeroCopy) GDDT_CHECK(message_stream(message, staging, stream));
  return pack(whole(message, bytes), message.typed(), message.kind, staging.data(), staging.kind(), *stream, way,
              meanwhile);
}

bool moves_in_one_launch(const Message& message, const Staging& staging, std::int64_t bytes) {
  const Way way = way_for(message.kind, staging.kind(), bytes);
  return way == Way::kDevice || way == Way::kZeroCopy;
}

namespace {

template <bool kPacking>
Status queue_set(const MessageMove* moves, int count, gpu::Stream stream) {
  if (count <= 0) return GDDT_OK;
  std::vector<pack::WindowMove> windows;
  windows.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    windows.push_back({whole(*moves[i].message, moves[i].bytes), moves[i].message->buffer, moves[i].staging->data()});
  }
  return queue_windows(kPacking, windows.data(), count, device_of(moves[0].message->kind, moves[0].staging->kind()),
                       stream);
}

}  // namespace

Status queue_windows(bool packing, const pack::WindowMove* windows, int count, int device, gpu::Stream stream) {
  if (count <= 0) return GDDT_OK;
  gpu::DeviceGuard guard(device);
  // Windows queued on a stream of `device` are moved by the backend of its memory.
  const pack::Backend* backend = pack::backend_for(GDDT_MEMORY_DEVICE, GDDT_MEMORY_DEVICE);
  if (backend == nullptr) return GDDT_ERR_INTERNAL;
  const auto set = packing ? backend->pack_set : backend->unpack_set;
  for (int first = 0; first < count; first += pack::kSetMost) {
    const int members = std::min(pack::kSetMost, count - first);
    if (set != nullptr) {
      GDDT_CHECK(set(windows + first, members, stream));
      continue;
    }
    for (const pack::WindowMove* w = windows + first; w != windows + first + members; ++w) {
      GDDT_CHECK(packing ? backend->pack(w->window, w->typed, const_cast<void*>(w->packed), stream)
                         : backend->unpack(w->window, const_cast<void*>(w->typed), w->packed, stream));
    }
  }
  return GDDT_OK;
}

Status queue_packs(const MessageMove* moves, int count, gpu::Stream stream) {
  return queue_set<true>(moves, count, stream);
}

Status queue_unpacks(const MessageMove* moves, int count, gpu::Stream stream) {
  return queue_set<false>(moves, count, stream);
}

Status unpack_message(const Message& message, const Staging& staging, std::int64_t received, gpu::Stream stream,
                      const gpu::WhileWaiting& meanwhile, pack::Ordering ordering) {
  return unpack_message_part(message, staging, 0, received, stream, meanwhile, ordering);
}

Status unpack_message_part(const Message& message, const Staging& staging, std::int64_t offset, std::int64_t bytes,
                           gpu::Stream stream, const gpu::WhileWaiting& meanwhile, pack::Ordering ordering) {
  return unpack(pack::Window{message.layout.get(), message.count, offset, bytes}, const_cast<void*>(message.typed()),
                message.kind, static_cast<const char*>(staging.data()) + offset, staging.kind(), stream,
                way_for(message.kind, staging.kind(), bytes), meanwhile, ordering);
}

}  // namespace gddt::protocol
