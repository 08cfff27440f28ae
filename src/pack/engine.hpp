// The pack engine: moves a window of the packed stream between a typed buffer and a packed
// buffer of any memory kinds, choosing the backend by where the bytes live and staging
// through pooled scratch memory when neither backend can reach both buffers.
#pragma once

#include "core/memory.hpp"
#include "pack/backend.hpp"

namespace gddt::pack {

// With `stream` == nullptr the call returns when the bytes are in place. With a stream, work
// between device-accessible buffers is only queued on it (the stream must belong to the device
// that owns the device-side buffer); paths through pageable host memory still complete
// before returning.
Status pack(const Window& window, const void* typed, memory::Kind typed_kind, void* packed,
            memory::Kind packed_kind, gpu::Stream stream);
Status unpack(const Window& window, void* typed, memory::Kind typed_kind, const void* packed,
              memory::Kind packed_kind, gpu::Stream stream);

}  // namespace gddt::pack
