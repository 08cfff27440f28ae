// One 8-byte word of a merge (merge.hpp), shared by the host loop and the CUDA kernel. Words are
// little-endian: byte b of a word is bits 8b..8b+7 (x86-64 and aarch64, hosts and GPUs alike).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GDDT_MERGE_FUNCTION __host__ __device__ __forceinline__
#else
#define GDDT_MERGE_FUNCTION inline
#endif

namespace gddt::pack::merge_word {

// Writes into the 8 bytes at `to` the bytes of `now` that differ from `before`. A word that
// changed whole is one store; otherwise each changed byte is stored alone, so that bytes another
// process writes into `to` meanwhile (remote updates of a public window copy) are never
// overwritten with stale values.
GDDT_MERGE_FUNCTION void write_changed(std::uint64_t now, std::uint64_t before, unsigned char* to) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
  const std::uint64_t difference = now ^ before;
  if (((difference - kOnes) & ~difference & kHighs) == 0) {  // no byte of the difference is zero
    *reinterpret_cast<std::uint64_t*>(to) = now;
    return;
  }
  for (int b = 0; b < 8; ++b) {
    const auto byte = static_cast<unsigned char>(now >> (8 * b));
    if (byte != static_cast<unsigned char>(before >> (8 * b))) to[b] = byte;
  }
}

}  // namespace gddt::pack::merge_word
