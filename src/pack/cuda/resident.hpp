// The resident kernel: one cluster of thread blocks per device (resident_kernel_blocks) that keeps
// running between calls and moves the small windows posted to it. A call that waits for a small window then pays a few
// round trips over the bus (about 3 us on an H200) instead of a kernel launch and its
// completion (about 10 us). Calls post jobs to a ring in mapped pinned memory; the kernel exits
// after GDDT_RESIDENT_IDLE_US without work and the next job starts it again.
#pragma once

#include <cstdint>

#include "core/gpu.hpp"
#include "pack/cuda/plan.hpp"

namespace gddt::pack::cuda_impl {

// Moves one planned window with 32-bit indices by the resident kernel of the current device
// and waits for it. *served is false where it declines (resident kernels off or unwanted on
// this GPU, the ring full, work still queued on the legacy default stream (asked unless
// `ordering` says the caller did), a piece table too large for shared memory, a launch that
// failed); nothing was done then.
Status run_resident(bool unpack, const StridedPlan& plan, const void* typed, const void* packed, Ordering ordering,
                    const gpu::WhileWaiting& meanwhile, bool* served);
Status run_resident(bool unpack, const BlockListPlan& plan, const PieceTable& table, const void* typed,
                    const void* packed, Ordering ordering, const gpu::WhileWaiting& meanwhile, bool* served);

// Thread blocks of the resident kernel of `device` (one cluster of GDDT_RESIDENT_BLOCKS where
// the GPU has clusters, else one), each on a multiprocessor of its own.
int resident_kernel_blocks(int device);

// Multiprocessors the resident kernel of `device` holds now: its blocks while it may be
// running, else 0 (a guess: it may exit or start at any moment).
int resident_multiprocessors(int device);

// Asks every resident kernel to exit, waits for it and frees its ring.
void stop_resident();

// Jobs run and kernels launched since the process started (for tests and gddt-info).
struct ResidentCounts {
  std::uint64_t jobs = 0;
  std::uint64_t launches = 0;
};
ResidentCounts resident_counts();

}  // namespace gddt::pack::cuda_impl
