// The hand-written pack and unpack kernels of the "pipeline" method: what a user who writes
// Fig. 4(b) of the MVAPICH2 paper would write, one thread per 4-byte word of a packed chunk.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace gddt::bench {

// A TypeWalk as the kernels take it: block lists live in device memory.
struct DeviceWalk {
  std::size_t base = 0;
  std::size_t block_words = 0;
  std::size_t count0 = 1;
  std::size_t count1 = 1;
  std::size_t stride0 = 0;
  std::size_t stride1 = 0;
  std::size_t stride2 = 0;
  std::size_t block_count = 0;                     // > 0: a block list
  const std::uint64_t* block_first_word = nullptr;  // block_count + 1 entries
  const std::uint64_t* block_offset = nullptr;
};

// Packs words [first_word, first_word + words) of the typed buffer into `packed` (which
// receives exactly those words), or unpacks them back; queued on `stream`.
void launch_pack(const DeviceWalk& walk, const void* typed, void* packed, std::size_t first_word, std::size_t words,
                 cudaStream_t stream);
void launch_unpack(const DeviceWalk& walk, const void* packed, void* typed, std::size_t first_word,
                   std::size_t words, cudaStream_t stream);

}  // namespace gddt::bench
