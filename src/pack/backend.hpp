// The pack backends' one interface. A backend moves the bytes of a packed-stream window
// between a typed buffer (laid out as the datatype says) and a contiguous packed buffer.
// Both buffers must be accessible to the backend: the host backend needs host-accessible
// memory, the CUDA backend device-accessible memory (device, managed or pinned host). The
// engine (engine.hpp) picks the backend and stages between memory kinds.
#pragma once

#include <cstdint>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "type/layout.hpp"

namespace gddt::pack {

// The bytes [offset, offset + length) of the packed stream of `count` elements of `layout`.
struct Window {
  const type::Layout* layout = nullptr;
  std::int64_t count = 0;
  std::int64_t offset = 0;
  std::int64_t length = 0;
};

// Slot indices into type::Layout::backend_slots.
enum BackendSlotIndex { kHostSlot = 0, kCudaSlot = 1, kOpenclSlot = 2 };

// Whether the caller already found the legacy default stream idle since its MPI call began (a
// blocking receive asks while it waits for its message), or a resident move must ask first.
enum class Ordering { kCheckLegacyStream, kLegacyStreamIdle };

// Whether pack_now and unpack_now consider a window of `length` bytes at all (GDDT_RESIDENT is
// not off, GDDT_RESIDENT_MAX allows it); they may still decline it.
inline bool resident_may_take(std::int64_t length) {
  return config::resident() != config::Resident::kOff &&
         static_cast<std::uint64_t>(length) <= config::settings().resident_max;
}

// Windows one launch of the CUDA backend's pack_set or unpack_set moves at most.
constexpr int kSetMost = 8;

// One window of several that a backend moves in one call (pack_set, unpack_set). The typed
// side is read by packs and written by unpacks; the packed side the reverse.
struct WindowMove {
  Window window;
  const void* typed = nullptr;
  const void* packed = nullptr;
};

struct Backend {
  const char* name;
  // Copies window bytes from `typed` into `packed` (packed receives exactly length bytes).
  Status (*pack)(const Window& window, const void* typed, void* packed, gpu::Stream stream);
  // Copies `length` bytes from `packed` into the window positions of `typed`; bytes of
  // `typed` outside the typemap are never written.
  Status (*unpack)(const Window& window, void* typed, const void* packed, gpu::Stream stream);
  // Optional (null where a backend has none): the same moves, finished when the call returns,
  // by a kernel the backend keeps running on the current device, so that small windows pay no
  // kernel launch. *served is false where it declines (the window is too large, work is still
  // queued on the legacy default stream, the setting is off); the caller then moves the window
  // the ordinary way. `meanwhile` runs between polls while it waits.
  Status (*pack_now)(const Window& window, const void* typed, void* packed, Ordering ordering,
                     const gpu::WhileWaiting& meanwhile, bool* served);
  Status (*unpack_now)(const Window& window, void* typed, const void* packed, Ordering ordering,
                       const gpu::WhileWaiting& meanwhile, bool* served);
  // Stops what pack_now and unpack_now keep running (at MPI_Finalize); a later call starts it
  // again.
  void (*stop)();
  // Optional (null where a backend has none; callers then move the windows one by one): the
  // moves of `count` windows queued on `stream` like pack and unpack, in as few launches as
  // the backend can. The windows' buffers must not overlap where one of them is written.
  Status (*pack_set)(const WindowMove* moves, int count, gpu::Stream stream);
  Status (*unpack_set)(const WindowMove* moves, int count, gpu::Stream stream);
};

// Synchronous, on the calling thread; `stream` is ignored.
const Backend& host_backend();
// Asynchronous on `stream` (a stream of the current device; the caller sets the device with
// gpu::DeviceGuard). With CUDA compiled out every call returns GDDT_ERR_NO_DEVICE.
const Backend& cuda_backend();

}  // namespace gddt::pack
