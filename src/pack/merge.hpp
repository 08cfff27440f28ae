// Merging two copies of one memory that both sides may have changed since they were last equal:
// the bytes of `from` that differ from `snapshot` (what both copies held at the last merge) are
// written into `to`, and `snapshot` takes `from`'s bytes; every other byte of `to` is left alone,
// byte for byte. One-sided windows over device memory need it (mpi/onesided_window.hpp): the
// library's window is a host copy that remote processes update while the owner stores into its
// device copy, so neither copy may simply overwrite the other.
#pragma once

#include <cstdint>

#include "core/gpu.hpp"

namespace gddt::pack {

// By the calling thread; the three buffers in host-accessible memory.
void merge_changed_host(const void* from, void* snapshot, void* to, std::int64_t bytes);

// Queued on `stream` (of the GPU the buffers are reached from): `from` and `to` device memory,
// managed memory or mapped pinned host memory, `snapshot` device memory. GDDT_ERR_NO_DEVICE in a
// build without CUDA.
Status merge_changed_device(const void* from, void* snapshot, void* to, std::int64_t bytes, gpu::Stream stream);

}  // namespace gddt::pack
