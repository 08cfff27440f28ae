// The resident kernel: one cluster of thread blocks per device (resident_kernel_blocks) that
// keeps running between calls and moves the small windows posted to it. A call that waits for a
// small window then pays a few round trips over the bus (about 3 us on an H200) instead of a
// kernel launch and its completion (about 10 us). Calls post jobs to a ring in mapped pinned memory; the kernel exits
// after GDDT_RESIDENT_IDLE_US without work and the next job starts it again.
#pragma once

#include <chrono>
#include <cstdint>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "pack/cuda/plan.hpp"

namespace gddt::pack::cuda_impl {

// What one block of the resident kernel takes of a window at most (GDDT_RESIDENT_BLOCK_MAX
// bytes, GDDT_RESIDENT_BLOCK_SECTORS typed sectors). Their built-in models, 16 KiB and 2048
// sectors: beyond about four typed sectors per thread a launched grid is quicker, as it is for
// more than 16 KiB of fine-grained words. An x face of a 3-D grid (one 4-byte word every 252
// bytes) took 47 us one way at 16 KiB (4096 sectors) through a one-block resident kernel against
// 31 us launched, while vectors, block lists and structs of up to 16 KiB (about 1024 sectors)
// were 4-8 us quicker through it (two H200s); at 32 KiB one block was slower than a launch for
// 4-byte vectors, block lists and structs (performance.md).
inline std::uint64_t resident_most_bytes_per_block() { return config::settings().resident_block_max; }
inline std::uint64_t resident_most_sectors_per_block() { return config::settings().resident_block_sectors; }

// Blocks of a resident kernel of `kernel_blocks` blocks that move a window of `length` bytes
// touching `sectors` typed sectors: one where one block alone moves it quickly, since a job of
// the whole cluster pays about 1 us for its barriers; else all of them, which moved windows of
// 16-64 KiB up to 2 us sooner than just enough blocks for their bytes did; 0 where even all of
// them are slower than a launched grid (performance.md).
inline int resident_blocks_for(std::int64_t length, std::uint64_t sectors, int kernel_blocks) {
  const auto bytes = static_cast<std::uint64_t>(length);
  const std::uint64_t most_bytes = resident_most_bytes_per_block(), most_sectors = resident_most_sectors_per_block();
  if (bytes <= most_bytes && sectors <= most_sectors) return 1;
  const auto blocks = static_cast<std::uint64_t>(kernel_blocks);
  const bool too_much = bytes > most_bytes * blocks || sectors > most_sectors * blocks;
  return too_much ? 0 : kernel_blocks;
}

// Posts the move of one planned window with 32-bit indices to `blocks` blocks of the resident
// kernel of the current device (resident_blocks_for; at most resident_kernel_blocks), waiting
// for `after` first and setting `signal` once done (Backend::post_now); wait_resident waits for
// it. *served is false where it declines (resident kernels off or unwanted on this GPU, the ring
// full, work still queued on the legacy default stream (asked unless `ordering` says the caller
// did), a piece table too large for shared memory, a launch that failed); nothing was posted then.
Status post_resident(bool unpack, const StridedPlan& plan, const void* typed, const void* packed, int blocks,
                     DeviceFlag after, DeviceFlag signal, Ordering ordering, Posted* posted, bool* served);
Status post_resident(bool unpack, const BlockListPlan& plan, const PieceTable& table, const void* typed,
                     const void* packed, int blocks, DeviceFlag after, DeviceFlag signal, Ordering ordering,
                     Posted* posted, bool* served);

// Waits for a posted job; *moved false where it gave up waiting for its `after` flag, or may have
// (Backend::wait_posted).
Status wait_resident(const Posted& posted, const gpu::WhileWaiting& meanwhile, bool* moved);

// False where `ordering` asks and work is still queued on the legacy default stream (or the
// query fails): a window must then take the ordinary path, which is ordered after that stream.
bool legacy_stream_clear(Ordering ordering);

// Whether the resident kernel of `device` is wanted now (not off, broken, stepped aside, or on a
// GPU other processes use).
bool resident_wanted(int device);

// Whether the resident kernel of `device` would take jobs but is not running (it idled out, or
// never started). A job would then wait for it to start, 17-22 us for 4 KiB on an H200 against
// 13 for a launch after the same pause (resident_probe): the caller launches the window
// instead and calls start_resident once it is queued.
bool resident_idle(int device);

// Whether a job posted to the kernel of `device` now runs though nobody waits for it: the kernel
// runs, and its latest job was posted (or it started) less than its idle time, less a margin,
// ago. It exits no sooner than its idle time after that (its wait for the next job starts after
// the latest one was posted), so a job posted sooner is seen; one that comes just as it exits
// waits for a waiter's relaunch (wait_resident), which a job posted to run on its own
// (Backend::post_now) may not get soon: post_resident waits for such a job itself where it
// landed too late.
bool resident_runs_on(int device);

// Starts the resident kernel of `device` for the windows to come, where it is wanted and not
// running.
void start_resident(int device);

// Counts a window launched because the kernel was idle (ResidentCounts::cold_windows).
void note_cold_window();

// Whether a program waits for the resident kernel to exit. One that synchronizes the whole
// device after each exchange (cudaDeviceSynchronize, say) waits until the kernel idles out, and
// its next window then comes just after the exit: Stencil2D at 1024^2 lost 45-55 us an iteration
// so (performance.md). After kInARow such restarts in a row, `auto` leaves the GPU's windows to
// launched kernels, which end with their work. A restart counts within the idle time of the exit
// (the host's calls before the next window and the launch took 25-35 us there; a program whose
// windows merely come a little more than the idle time apart loses little, having paid a launch
// for each anyway), and only after a kernel that took fewer than kJobsWorthAWait jobs: each job
// saved about 3.8 us against a launch (resident_probe: 6.9 against 10.7 us, an H200), so a wait
// of up to the idle time (50 us) was worth it, as for a benchmark that synchronizes between its
// points.
class RestartWatch {
 public:
  static constexpr int kInARow = 3;
  static constexpr std::uint64_t kJobsWorthAWait = 16;

  // A kernel started `gap_ns` after its predecessor's idle exit of `idle_ns`, which took `jobs`
  // jobs: true once the program has waited for kInARow exits in a row.
  bool awaited(std::uint64_t gap_ns, std::uint64_t idle_ns, std::uint64_t jobs) {
    in_a_row_ = gap_ns < idle_ns && jobs < kJobsWorthAWait ? in_a_row_ + 1 : 0;
    return in_a_row_ >= kInARow;
  }

 private:
  int in_a_row_ = 0;
};

// Whether the running kernel sees a job posted `since_latest` after the job before it was posted
// (or after the kernel started), the kernel waiting `idle` for each job. Its wait for this job
// began after that latest job, so it exits no sooner than `idle` after it; the job's write crosses
// the bus in 1-2 us and the kernel's last poll before it exits takes about as long, so a job
// written kMargin before that is seen. A later one sits until a waiter starts the kernel again.
struct JobLanding {
  static constexpr std::chrono::nanoseconds kMargin = std::chrono::microseconds(10);
  static bool in_time(std::chrono::nanoseconds since_latest, std::chrono::nanoseconds idle) {
    return since_latest < idle - kMargin;
  }
};

// Thread blocks of the resident kernel of `device` (one cluster of GDDT_RESIDENT_BLOCKS where
// the GPU has clusters, else one), each on a multiprocessor of its own.
int resident_kernel_blocks(int device);

// Multiprocessors the resident kernel of `device` holds now: its blocks while it may be
// running, else 0 (a guess: it may exit or start at any moment).
int resident_multiprocessors(int device);

// Asks every resident kernel to exit, waits for it and frees its ring.
void stop_resident();

// Jobs run, kernels launched, and windows launched while the kernel started (resident_idle)
// since the process started (for tests and gddt-info).
struct ResidentCounts {
  std::uint64_t jobs = 0;
  std::uint64_t launches = 0;
  std::uint64_t cold_windows = 0;
};
ResidentCounts resident_counts();

}  // namespace gddt::pack::cuda_impl
