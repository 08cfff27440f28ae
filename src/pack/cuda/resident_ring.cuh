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
  alignas(64) Slot slots[kJobSlots];
};

GDDT_HOST_DEVICE std::uint32_t stamp_of(std::uint64_t job_index) { return static_cast<std::uint32_t>(job_index + 1); }

// Takes the jobs of `ring` from job `next` on, until it stops or idles long enough to exit.
__global__ void resident_kernel(Ring* ring, std::uint64_t next);

}  // namespace gddt::pack::cuda_impl
