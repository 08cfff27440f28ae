#include "walk_kernels.hpp"

#include "checks.hpp"

namespace gddt::bench {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::size_t kMostBlocks = 65535;

__device__ std::size_t typed_byte_offset(const DeviceWalk& walk, std::size_t word) {
  if (walk.block_count > 0) {
    std::size_t low = 0;  // the last block starting at or before `word`
    std::size_t high = walk.block_count;
    while (high - low > 1) {
      const std::size_t middle = (low + high) / 2;
      if (walk.block_first_word[middle] <= word) {
        low = middle;
      } else {
        high = middle;
      }
    }
    return walk.block_offset[low] + (word - walk.block_first_word[low]) * 4;
  }
  const std::size_t block = word / walk.block_words;
  const std::size_t within = word - block * walk.block_words;
  const std::size_t i0 = block % walk.count0;
  const std::size_t rest = block / walk.count0;
  const std::size_t i1 = rest % walk.count1;
  const std::size_t i2 = rest / walk.count1;
  return walk.base + i0 * walk.stride0 + i1 * walk.stride1 + i2 * walk.stride2 + within * 4;
}

__global__ void pack_words(DeviceWalk walk, const char* typed, std::uint32_t* packed, std::size_t first_word,
                           std::size_t words) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < words;
       i += std::size_t{gridDim.x} * blockDim.x) {
    packed[i] = *reinterpret_cast<const std::uint32_t*>(typed + typed_byte_offset(walk, first_word + i));
  }
}

__global__ void unpack_words(DeviceWalk walk, const std::uint32_t* packed, char* typed, std::size_t first_word,
                             std::size_t words) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < words;
       i += std::size_t{gridDim.x} * blockDim.x) {
    *reinterpret_cast<std::uint32_t*>(typed + typed_byte_offset(walk, first_word + i)) = packed[i];
  }
}

unsigned grid_for(std::size_t words) {
  return static_cast<unsigned>(std::min(kMostBlocks, (words + kThreads - 1) / kThreads));
}

}  // namespace

void launch_pack(const DeviceWalk& walk, const void* typed, void* packed, std::size_t first_word, std::size_t words,
                 cudaStream_t stream) {
  if (words == 0) return;
  pack_words<<<grid_for(words), kThreads, 0, stream>>>(walk, static_cast<const char*>(typed),
                                                       static_cast<std::uint32_t*>(packed), first_word, words);
  BENCH_CUDA_CHECK(cudaGetLastError());
}

void launch_unpack(const DeviceWalk& walk, const void* packed, void* typed, std::size_t first_word,
                   std::size_t words, cudaStream_t stream) {
  if (words == 0) return;
  unpack_words<<<grid_for(words), kThreads, 0, stream>>>(walk, static_cast<const std::uint32_t*>(packed),
                                                         static_cast<char*>(typed), first_word, words);
  BENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gddt::bench
