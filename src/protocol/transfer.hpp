// Moving a window of the packed stream between a typed buffer and a packed buffer of any two
// memory kinds: the ways of doing it and the cost model that picks one per transfer.
#pragma once

#include "core/memory.hpp"
#include "pack/backend.hpp"

namespace gddt::protocol {

enum class Way {
  kHost,       // host backend: both buffers host memory
  kDevice,     // CUDA backend in place: both buffers device-accessible, one on the device
  kZeroCopy,   // CUDA backend reading or writing pinned host memory over the bus: one launch
  kPipelined,  // chunks through scratch slots on two lanes, pack of one chunk overlapping the
               // copy of the previous one
};

const char* way_name(Way way);

// The GPU whose kernels move data between buffers of these kinds (-1: none, both in host memory).
int device_of(memory::Kind typed, memory::Kind packed);

// The cost model. Small transfers between device and pinned memory take one launch; larger
// ones, and every transfer touching pageable host memory and the device, are pipelined.
Way choose(memory::Kind typed, memory::Kind packed, std::int64_t bytes);

// With `stream` == nullptr the call returns when the bytes are in place. With a stream, kDevice
// and kZeroCopy work is only queued on it; kHost and kPipelined complete before returning.
// kPipelined on two host buffers runs the pipeline on the CPU (how CI exercises it).
// `meanwhile` runs between polls whenever the call itself waits for the GPU. Calls that wait
// move small windows by the backend's resident kernel where it takes them (`ordering`: see
// pack::Ordering).
Status pack(const pack::Window& window, const void* typed, memory::Kind typed_kind, void* packed,
            memory::Kind packed_kind, gpu::Stream stream, Way way, const gpu::WhileWaiting& meanwhile = {},
            pack::Ordering ordering = pack::Ordering::kCheckLegacyStream);
Status unpack(const pack::Window& window, void* typed, memory::Kind typed_kind, const void* packed,
              memory::Kind packed_kind, gpu::Stream stream, Way way, const gpu::WhileWaiting& meanwhile = {},
              pack::Ordering ordering = pack::Ordering::kCheckLegacyStream);

// Copies `bytes` between any two memories as they are, through `device`'s library stream
// (ordered after the legacy default stream) where one side is on a GPU, and waits for them.
Status copy_and_wait(void* dst, const void* src, std::size_t bytes, int device);

}  // namespace gddt::protocol
