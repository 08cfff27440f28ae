// How the CUDA backend shapes its launches: how many thread blocks one gets (fit_grid), from the
// GPU's multiprocessors and how many blocks of a kernel each holds, both asked of the runtime once;
// and which moves share a set launch (launch_in_sets). Host code of the launching files
// (cuda_backend.cu, transcribe_launch.cu).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "pack/cuda/kernels.hpp"
#include "pack/cuda/resident.hpp"

namespace gddt::pack::cuda_impl {

inline int multiprocessors(int device) {
  constexpr int kCachedDevices = 64;
  static std::atomic<int> cached[kCachedDevices];
  const bool cacheable = device >= 0 && device < kCachedDevices;
  if (cacheable) {
    const int known = cached[device].load(std::memory_order_relaxed);
    if (known > 0) return known;
  }
  int count = 0;
  if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || count <= 0) {
    cudaGetLastError();
    return 1;
  }
  if (cacheable) cached[device].store(count, std::memory_order_relaxed);
  return count;
}

// Thread blocks of `kernel` with `shared_bytes` of dynamic shared memory that one
// multiprocessor of `device` holds at once, asked of the runtime once per kernel, device and
// 2 KiB class of shared memory (rounded up, so the answer never overstates).
template <typename Kernel>
int resident_blocks(Kernel* kernel, int device, std::size_t shared_bytes) {
  constexpr std::size_t kSharedClass = 2 << 10;
  const std::size_t shared = (shared_bytes + kSharedClass - 1) / kSharedClass * kSharedClass;
  struct Known {
    const void* kernel;
    int device;
    std::size_t shared;
    int blocks;
  };
  static std::mutex mutex;
  static std::vector<Known> known;
  const auto* key = reinterpret_cast<const void*>(kernel);
  std::lock_guard<std::mutex> lock(mutex);
  for (const Known& k : known) {
    if (k.kernel == key && k.device == device && k.shared == shared) return k.blocks;
  }
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreadsPerBlock, shared) != cudaSuccess ||
      blocks <= 0) {
    cudaGetLastError();
    blocks = 1;
  }
  known.push_back({key, device, shared, blocks});
  return blocks;
}

// GDDT_GRID_WAVES, the waves of thread blocks a large window's grid has: whole waves, since
// with a partial one some multiprocessors sit idle while it runs (grids of 1.2 and 1.6 waves of
// a block-list pack took 1.32x and 1.06x the time of one wave at 256 MiB on an H200), and
// several, which evens out multiprocessors that finish their share sooner; the built-in model
// is four, which were 1.00-1.05x faster than two for block lists and faces, two 1.01-1.07x
// faster than one (performance.md).
// GDDT_GRID_BLOCK_TILES_MAX: twice as many waves where each block would otherwise loop over
// more than this many full tiles; the model is four: at 256 MiB on an H200 eight waves were
// then 1.01-1.03x faster for packs and up to 1.09x for unpacks, while at 16 MiB (fewer tiles a
// block) they took up to 1.14x as long as four.
//
// Sets how many words each thread moves per tile and returns the grid for `kernel`: that many
// full waves of blocks (or twice that for very large windows), which loop over the tiles, for
// a window that fills them with full tiles; for a smaller one, tiles small enough to spread
// over that many blocks, since its time is the latency of each thread's chain of offset
// arithmetic and loads, not bandwidth. Multiprocessors that the resident kernel holds are
// left out.
template <int kMostPerThread, typename Index, typename Kernel>
unsigned fit_grid(WindowWords<Index>* words, Kernel* kernel, std::size_t shared_bytes) {
  const std::uint64_t whole = words->word_end > words->word_begin ? words->word_end - words->word_begin : 0;
  const int device = gpu::current_device();
  const auto usable =
      static_cast<std::uint64_t>(std::max(1, multiprocessors(device) - resident_multiprocessors(device)));
  std::uint64_t blocks = usable;
  if (whole > usable * kThreadsPerBlock) {
    const std::uint64_t wave = usable * static_cast<std::uint64_t>(resident_blocks(kernel, device, shared_bytes));
    const std::uint64_t full_tiles = whole / (std::uint64_t{kThreadsPerBlock} * kMostPerThread);
    const std::uint64_t waves = config::settings().grid_waves;
    blocks = wave * (full_tiles > wave * waves * config::settings().grid_block_tiles_max ? 2 * waves : waves);
  }
  const std::uint64_t spread = (whole + blocks * kThreadsPerBlock - 1) / (blocks * kThreadsPerBlock);
  words->words_per_thread =
      static_cast<int>(std::clamp<std::uint64_t>(spread, 1, static_cast<std::uint64_t>(kMostPerThread)));
  const std::uint64_t tile = std::uint64_t{kThreadsPerBlock} * static_cast<std::uint64_t>(words->words_per_thread);
  const std::uint64_t tiles = (whole + tile - 1) / tile;
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(tiles, blocks)));
}

// Calls launch(set, size) for `members` in sets of up to `most` that `same` pairs with the set's
// first, in the order of the first members; stops at the first failed launch.
template <typename Member, typename Same, typename Launch>
Status launch_in_sets(const std::vector<Member>& members, int most, Same&& same, Launch&& launch) {
  std::vector<bool> launched(members.size(), false);
  std::vector<const Member*> set;
  for (std::size_t first = 0; first < members.size(); ++first) {
    if (launched[first]) continue;
    set.clear();
    for (std::size_t i = first; i < members.size() && static_cast<int>(set.size()) < most; ++i) {
      if (launched[i] || !same(members[i], members[first])) continue;
      set.push_back(&members[i]);
      launched[i] = true;
    }
    GDDT_CHECK(launch(set.data(), static_cast<int>(set.size())));
  }
  return GDDT_OK;
}

}  // namespace gddt::pack::cuda_impl
