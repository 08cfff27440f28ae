// The pack backends' one interface. A backend moves the bytes of a packed-stream window
// between a typed buffer (laid out as the datatype says) and a contiguous packed buffer.
// Both buffers must be of memory kinds the backend declares it reaches (Backend::cost). The
// engine (engine.hpp) picks the backend; the protocol stages between memory kinds.
#pragma once

#include <array>
#include <cstdint>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "core/memory.hpp"
#include "type/layout.hpp"

namespace gddt::pack {

// The bytes [offset, offset + length) of the packed stream of `count` elements of `layout`.
struct Window {
  const type::Layout* layout = nullptr;
  std::int64_t count = 0;
  std::int64_t offset = 0;
  std::int64_t length = 0;
};

// Slot indices into type::Layout::backend_slots, one per row of backends.def.
enum BackendSlotIndex {
#define GDDT_BACKEND(slot, function) slot,
#include "pack/backends.def"
#undef GDDT_BACKEND
  kBackendCount
};
static_assert(kBackendCount <= type::BackendSlots::kSlots, "a layout has a slot for every backend");

// Memory kinds a backend may reach, indexing Backend::cost.
constexpr int kMemoryTypes = GDDT_MEMORY_OPENCL + 1;
// Backend::cost of a memory kind the backend cannot touch.
constexpr int kUnreachable = -1;

// Whether the caller already found the legacy default stream idle since its MPI call began (a
// blocking receive asks while it waits for its message), or a resident move must ask first.
enum class Ordering { kCheckLegacyStream, kLegacyStreamIdle };

// Whether pack_now and unpack_now consider a window of `length` bytes at all (GDDT_RESIDENT is
// not off, GDDT_RESIDENT_MAX allows it); they may still decline it.
inline bool resident_may_take(std::int64_t length) {
  return config::resident() != config::Resident::kOff &&
         static_cast<std::uint64_t>(length) <= config::settings().resident_max;
}

// A word in device memory through which two processes' GPUs order their moves with no host
// between them (the peer protocol's eager path): a move waits until *at >= value, or sets *at =
// value once its bytes are written. `at` null: none.
struct DeviceFlag {
  std::uint64_t* at = nullptr;
  std::uint64_t value = 0;
};

// A move posted to what a backend keeps running (Backend::post_now), to be waited for later.
struct Posted {
  int device = -1;
  std::uint64_t ticket = 0;  // 0: nothing posted
};

// Windows one launch of the CUDA backend's pack_set or unpack_set moves at most.
constexpr int kSetMost = 8;

// One window of several that a backend moves in one call (pack_set, unpack_set). The typed
// side is read by packs and written by unpacks; the packed side the reverse.
struct WindowMove {
  Window window;
  const void* typed = nullptr;
  const void* packed = nullptr;
};

// One typed-to-typed move of several that a backend queues in one call (transcribe_set):
// `from`'s packed bytes of `from_typed` into window `to` (of equal length) of `to_typed`.
struct TranscribeMove {
  Window from;
  const void* from_typed = nullptr;
  Window to;
  void* to_typed = nullptr;
  bool served = false;  // set where the backend queued it; nothing is queued for one it declined
};

// A backend is filled by field name (a lambda that sets the fields it has), so an optional
// function it lacks stays null without a row of placeholders.
struct Backend {
  const char* name = nullptr;
  // What moving a byte of each memory kind costs this backend on the typed and on the packed
  // side, relative to the host backend on host memory (1), or kUnreachable. The engine gives a
  // pair of buffers the backend with the lowest sum among those reaching both.
  std::array<int, kMemoryTypes> typed_cost{};
  std::array<int, kMemoryTypes> packed_cost{};
  // Copies window bytes from `typed` into `packed` (packed receives exactly length bytes).
  Status (*pack)(const Window& window, const void* typed, void* packed, gpu::Stream stream) = nullptr;
  // Copies `length` bytes from `packed` into the window positions of `typed`; bytes of
  // `typed` outside the typemap are never written.
  Status (*unpack)(const Window& window, void* typed, const void* packed, gpu::Stream stream) = nullptr;
  // Optional (null where a backend has none): the same moves, finished when the call returns,
  // by a kernel the backend keeps running on the current device, so that small windows pay no
  // kernel launch. *served is false where it declines (the window is too large, work is still
  // queued on the legacy default stream, the setting is off); the caller then moves the window
  // the ordinary way. `meanwhile` runs between polls while it waits.
  Status (*pack_now)(const Window& window, const void* typed, void* packed, Ordering ordering,
                     const gpu::WhileWaiting& meanwhile, bool* served) = nullptr;
  Status (*unpack_now)(const Window& window, void* typed, const void* packed, Ordering ordering,
                       const gpu::WhileWaiting& meanwhile, bool* served) = nullptr;
  // Optional, with pack_now: posts the move (an unpack where `unpack`) of a window like pack_now
  // does and returns at once; it starts once `after` is reached and sets `signal` when done
  // (either null: none). *served is false where pack_now would decline, and where what it keeps
  // running is idle or may be about to idle out: the caller moves this window the ordinary way
  // (pack_now then starts it for the windows to come; for a move with `after`, post_now did).
  Status (*post_now)(bool unpack, const Window& window, const void* typed, const void* packed, DeviceFlag after,
                     DeviceFlag signal, Ordering ordering, Posted* posted, bool* served) = nullptr;
  // Waits for a posted move. *moved is false where it gave up waiting for its `after` (nothing was
  // moved), or may have (a later move gave up too): the caller moves the window the ordinary way,
  // behind queue_flag_wait, which writes the same bytes where they were moved already.
  Status (*wait_posted)(const Posted& posted, const gpu::WhileWaiting& meanwhile, bool* moved) = nullptr;
  // Queues on `stream` (of the current device) a wait until `flag` is reached.
  Status (*queue_flag_wait)(DeviceFlag flag, gpu::Stream stream) = nullptr;
  // Stops what pack_now and unpack_now keep running (at MPI_Finalize); a later call starts it
  // again.
  void (*stop)() = nullptr;
  // Optional, with pack_now: false where it declines every window on `device` now (what it
  // keeps running is not wanted there: the GPU is shared, say), so that a caller skips the
  // preparations only it would need.
  bool (*serves_now)(int device) = nullptr;
  // Optional (null where a backend has none; callers then move the windows one by one): the
  // moves of `count` windows queued on `stream` like pack and unpack, in as few launches as
  // the backend can. The windows' buffers must not overlap where one of them is written.
  Status (*pack_set)(const WindowMove* moves, int count, gpu::Stream stream) = nullptr;
  Status (*unpack_set)(const WindowMove* moves, int count, gpu::Stream stream) = nullptr;
  // Optional (null where a backend has nothing to load): loads the backend's device code for
  // the current device now. CUDA loads a kernel lazily at its first launch, and that load waits
  // for every kernel running on the device: one waiting on gddt would never let it finish.
  Status (*load)() = nullptr;
  // Optional (null where a backend keeps nothing per layout): makes now what moves of `layout`
  // on `device` would make at their first use (the CUDA backend's piece table of a block list,
  // waiting for its own copy only), so that a datatype committed before an exchange does not pay
  // for it in its first message.
  Status (*prepare)(const type::Layout& layout, int device) = nullptr;
  // Optional (null where a backend has none; callers then pack and unpack through a buffer):
  // moves the packed bytes of window `from` of `from_typed` straight into window `to` (of equal
  // length) of `to_typed`, as a pack then an unpack would, queued on `stream`. *served is false
  // where it declines; it has then queued nothing.
  Status (*transcribe)(const Window& from, const void* from_typed, const Window& to, void* to_typed,
                       gpu::Stream stream, bool* served) = nullptr;
  // Optional, with transcribe: the moves of `moves` queued on `stream` in as few launches as the
  // backend takes, each marked served, or not where transcribe would decline it.
  Status (*transcribe_set)(TranscribeMove* moves, int count, gpu::Stream stream) = nullptr;
};

}  // namespace gddt::pack
