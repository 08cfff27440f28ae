#include "pack/engine.hpp"

#include <algorithm>
#include <cstring>

#include "core/config.hpp"
#include "core/pool.hpp"

namespace gddt::pack {
namespace {

// Device work needs the GPU; pageable host memory is out of a kernel's reach.
bool needs_gpu(memory::Kind a, memory::Kind b) { return a.is_device() || b.is_device(); }

int owning_device(memory::Kind typed_kind, memory::Kind packed_kind) {
  if (typed_kind.is_device()) return typed_kind.device;
  return packed_kind.device;
}

std::size_t staging_chunk() {
  return static_cast<std::size_t>(std::max<std::uint64_t>(config::settings().staging_chunk, 4096));
}

// The chunk loops below stage through one pooled buffer, so a window of any size needs at
// most staging_chunk() bytes of scratch, and less when the pool is short (down to 64 KiB).
constexpr std::size_t kMinStagingBytes = 64 * 1024;

Window sub_window(const Window& w, std::int64_t done, std::int64_t bytes) {
  Window sub = w;
  sub.offset = w.offset + done;
  sub.length = bytes;
  return sub;
}

// The one chunk loop of the staged paths: borrows a staging buffer of `where` and calls
// step(chunk_window, staging, done, bytes) per chunk, synchronizing the stream after each
// because the next chunk reuses the buffer and host-side copies must be complete.
template <typename Step>
Status staged(const Window& w, pool::Where where, int device, gpu::Stream stream, Step&& step) {
  pool::Lease staging;
  const auto length = static_cast<std::size_t>(w.length);
  GDDT_CHECK(pool::acquire(where, device, std::min(length, staging_chunk()),
                           std::min(length, kMinStagingBytes), &staging));
  const auto chunk = static_cast<std::int64_t>(staging.size());
  for (std::int64_t done = 0; done < w.length; done += chunk) {
    std::int64_t bytes = std::min(chunk, w.length - done);
    GDDT_CHECK(step(sub_window(w, done, bytes), staging.data(), done, static_cast<std::size_t>(bytes)));
    GDDT_CHECK(gpu::stream_synchronize(stream));
  }
  return GDDT_OK;
}

template <typename Body>
Status on_device(int device, gpu::Stream user_stream, Body&& body) {
  gpu::DeviceGuard guard(device);
  gpu::Stream stream = user_stream;
  if (stream == nullptr) GDDT_CHECK(gpu::library_stream(device, &stream));
  GDDT_CHECK(body(stream));
  if (user_stream == nullptr) GDDT_CHECK(gpu::stream_synchronize(stream));
  return GDDT_OK;
}

}  // namespace

Status pack(const Window& w, const void* typed, memory::Kind typed_kind, void* packed,
            memory::Kind packed_kind, gpu::Stream stream) {
  if (w.length == 0) return GDDT_OK;
  if (!needs_gpu(typed_kind, packed_kind)) return host_backend().pack(w, typed, packed, nullptr);
  if (!gpu::available()) return GDDT_ERR_NO_DEVICE;
  GDDT_LOG(kDebug, "pack %lld bytes at %lld: %s -> %s (%s)", static_cast<long long>(w.length),
           static_cast<long long>(w.offset), gddt_memory_type_name(typed_kind.type),
           gddt_memory_type_name(packed_kind.type), type::shape_name(w.layout->shape));
  auto* out = static_cast<char*>(packed);
  return on_device(owning_device(typed_kind, packed_kind), stream, [&](gpu::Stream s) {
    if (!typed_kind.device_accessible()) {
      // CPU packs into pinned staging, the copy engine moves it up.
      return staged(w, pool::Where::kPinned, -1, s, [&](const Window& c, void* stage, std::int64_t done, std::size_t bytes) {
        GDDT_CHECK(host_backend().pack(c, typed, stage, nullptr));
        return gpu::memcpy_async(out + done, stage, bytes, s);
      });
    }
    if (!packed_kind.device_accessible()) {
      // GPU packs into device scratch, the copy engine moves it down.
      return staged(w, pool::Where::kDevice, typed_kind.device, s, [&](const Window& c, void* stage, std::int64_t done, std::size_t bytes) {
        GDDT_CHECK(cuda_backend().pack(c, typed, stage, s));
        return gpu::memcpy_async(out + done, stage, bytes, s);
      });
    }
    return cuda_backend().pack(w, typed, packed, s);
  });
}

Status unpack(const Window& w, void* typed, memory::Kind typed_kind, const void* packed,
              memory::Kind packed_kind, gpu::Stream stream) {
  if (w.length == 0) return GDDT_OK;
  if (!needs_gpu(typed_kind, packed_kind)) return host_backend().unpack(w, typed, packed, nullptr);
  if (!gpu::available()) return GDDT_ERR_NO_DEVICE;
  GDDT_LOG(kDebug, "unpack %lld bytes at %lld: %s -> %s (%s)", static_cast<long long>(w.length),
           static_cast<long long>(w.offset), gddt_memory_type_name(packed_kind.type),
           gddt_memory_type_name(typed_kind.type), type::shape_name(w.layout->shape));
  const auto* in = static_cast<const char*>(packed);
  return on_device(owning_device(typed_kind, packed_kind), stream, [&](gpu::Stream s) {
    if (!typed_kind.device_accessible()) {
      return staged(w, pool::Where::kPinned, -1, s, [&](const Window& c, void* stage, std::int64_t done, std::size_t bytes) {
        GDDT_CHECK(gpu::memcpy_async(stage, in + done, bytes, s));
        GDDT_CHECK(gpu::stream_synchronize(s));
        return host_backend().unpack(c, typed, stage, nullptr);
      });
    }
    if (!packed_kind.device_accessible()) {
      return staged(w, pool::Where::kDevice, typed_kind.device, s, [&](const Window& c, void* stage, std::int64_t done, std::size_t bytes) {
        GDDT_CHECK(gpu::memcpy_async(stage, in + done, bytes, s));
        return cuda_backend().unpack(c, typed, stage, s);
      });
    }
    return cuda_backend().unpack(w, typed, packed, s);
  });
}

}  // namespace gddt::pack
