// The merge kernels (merge.hpp): one thread per 8-byte word where the three buffers allow words,
// one per byte otherwise; grid-stride loops, so one launch covers a window of any size.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "pack/merge.hpp"
#include "pack/merge_word.hpp"

namespace gddt::pack {
namespace {

constexpr int kThreads = 256;
// Enough blocks to fill an H100's multiprocessors several times over; larger windows loop.
constexpr std::int64_t kMostBlocks = 4096;

__global__ void merge_words(const std::uint64_t* from, std::uint64_t* snapshot, unsigned char* to,
                            std::int64_t words) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words; w += step) {
    const std::uint64_t now = from[w], before = snapshot[w];
    if (now == before) continue;
    snapshot[w] = now;
    merge_word::write_changed(now, before, to + 8 * w);
  }
}

__global__ void merge_bytes(const unsigned char* from, unsigned char* snapshot, unsigned char* to,
                            std::int64_t bytes) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < bytes; b += step) {
    const unsigned char now = from[b];
    if (now == snapshot[b]) continue;
    snapshot[b] = now;
    to[b] = now;
  }
}

unsigned blocks_for(std::int64_t items) {
  return static_cast<unsigned>(std::min(kMostBlocks, (items + kThreads - 1) / kThreads));
}

}  // namespace

Status merge_changed_device(const void* from, void* snapshot, void* to, std::int64_t bytes, gpu::Stream stream) {
  auto* source = static_cast<const unsigned char*>(from);
  auto* seen = static_cast<unsigned char*>(snapshot);
  auto* target = static_cast<unsigned char*>(to);
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  const bool aligned = (reinterpret_cast<std::uintptr_t>(source) | reinterpret_cast<std::uintptr_t>(seen) |
                        reinterpret_cast<std::uintptr_t>(target)) % 8 == 0;
  const std::int64_t words = aligned ? bytes / 8 : 0;
  if (words > 0) {
    merge_words<<<blocks_for(words), kThreads, 0, cuda_stream>>>(reinterpret_cast<const std::uint64_t*>(source),
                                                                 reinterpret_cast<std::uint64_t*>(seen), target, words);
    GDDT_CHECK(gpu::check_last_error("merge kernel launch"));
  }
  const std::int64_t rest = bytes - 8 * words;
  if (rest > 0) {
    merge_bytes<<<blocks_for(rest), kThreads, 0, cuda_stream>>>(source + 8 * words, seen + 8 * words,
                                                                target + 8 * words, rest);
    GDDT_CHECK(gpu::check_last_error("merge kernel launch"));
  }
  return GDDT_OK;
}

}  // namespace gddt::pack
