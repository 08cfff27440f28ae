// The ring through which the host side of the resident kernel (resident.cu) hands jobs to the
// kernel (resident_kernel.cu). Host and kernel share one Ring per device in mapped pinned memory;
// each side writes only its own fields. A job slot is a row of 8-byte cells, each holding 4 bytes
// of the job and the job's stamp (its index + 1): an aligned 8-byte store or load is never torn,
// so a warp that finds the stamp in every cell of the slot has the whole job, in one round trip
// over the bus instead of one for a "posted" counter and another for the slot. The block then
// moves the window, and thread 0 makes every thread's writes visible system-wide and advances
// `done`, which the caller that posted the job polls.
//
// The kernel exits on its own after GDDT_RESIDENT_IDLE_US without work, clearing `running`
// after its last `done`; a caller that finds `running` clear while its job is not done starts
// a new kernel from `done`. So a job posted just as the kernel decided to exit still runs.
// Each kernel notes how soon after the last one's idle exit it started (resident.cu reads it to
// tell a program that waits for the whole device).
//
// A job may wait for a word in device memory (another process's GPU, mapped through CUDA IPC)
// before it moves its window, and set a word of its own after: the peer protocol's eager path
// orders a receiver's unpack after the sender's pack so, with no host between them. A job waits
// only for a job posted before it, and a job that sets a word never waits, so rings whose
// waiting jobs block the jobs behind them never wait for each other in a circle. The wait is
// bounded (kFlagPatienceNs): a job that gives up moves nothing and is named in `gave_up`, and its
// caller moves the window the ordinary way after a launched wait (wait_flag_kernel).
#pragma once

#include <algorithm>
#include <cstdint>

#include "pack/cuda/addressing.hpp"

namespace gddt::pack::cuda_impl {

// 512 threads a block keep enough loads in flight for windows of 16 KiB, and with one resident
// block per multiprocessor the register file has room for them at any register count.
constexpr int kResidentThreads = 512;
constexpr int kWarp = 32;
constexpr std::uint64_t kJobSlots = 16;

enum class JobKind : std::uint32_t { kStrided, kBlockList };

constexpr std::size_t kArgsBytes = std::max(sizeof(StridedArgs<std::uint32_t>), sizeof(BlockListArgs<std::uint32_t>));

struct alignas(16) Job {
  JobKind kind;
  std::uint32_t width;
  std::uint32_t unpack;
  std::uint32_t blocks;  // of the cluster that move the window
  std::uint64_t wait_at;  // device address of a word to wait for (0: none) until it is >= wait_value
  std::uint64_t wait_value;
  std::uint64_t signal_at;  // device address of a word set to signal_value once the window is written (0: none)
  std::uint64_t signal_value;
  alignas(16) unsigned char args[(kArgsBytes + 15) / 16 * 16];  // StridedArgs or BlockListArgs
};

// Cells per slot: a whole number of cells for every lane of the polling warp.
constexpr int kCellsPerLane = static_cast<int>((sizeof(Job) / 4 + kWarp - 1) / kWarp);
constexpr int kCellsPerSlot = kCellsPerLane * kWarp;

struct Slot {
  std::uint64_t cells[kCellsPerSlot];  // low half: 4 bytes of the Job; high half: the stamp
};

struct Ring {
  alignas(64) std::uint64_t done;  // kernel: jobs [0, done) are finished
  std::uint32_t running;           // host sets it before a launch, the kernel clears it on exit
  std::uint32_t stop;              // host: exit once no job is posted
  std::uint64_t idle_ns;
  std::uint64_t exited_ns;       // kernel: its clock when it last exited for want of work, else 0
  std::uint64_t restart_gap_ns;  // kernel: from that exit to its own start (~0 after none; so seeded)
  std::uint64_t gave_up;         // kernel: the `done` value of the latest job whose wait it gave up (only grows)
  alignas(64) Slot slots[kJobSlots];
};

// How long a job waits for its word before it gives up: a sender's pack posted to a running kernel
// sets it within microseconds, and meanwhile every job behind it waits too.
constexpr std::uint64_t kFlagPatienceNs = 100000;

GDDT_HOST_DEVICE std::uint32_t stamp_of(std::uint64_t job_index) { return static_cast<std::uint32_t>(job_index + 1); }

// Takes the jobs of `ring` from job `next` on, until it stops or idles long enough to exit.
__global__ void resident_kernel(Ring* ring, std::uint64_t next);

// The launched counterpart of a job's wait: returns once *at >= value.
__global__ void wait_flag_kernel(const std::uint64_t* at, std::uint64_t value);

}  // namespace gddt::pack::cuda_impl
