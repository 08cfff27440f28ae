// What every pack and unpack kernel runs: moving the words of a window, specialized by word width
// and direction, given how a word's typed offset is found. The kernels are in
// strided_kernels.cuh, block_list_kernels.cuh and resident_kernel.cu.
#pragma once

#include <cuda_runtime.h>

#include "pack/cuda/kernels.hpp"

namespace gddt::pack::cuda_impl {

template <int W>
struct WordOf;
template <>
struct WordOf<1> {
  using type = unsigned char;
};
template <>
struct WordOf<2> {
  using type = unsigned short;
};
template <>
struct WordOf<4> {
  using type = unsigned int;
};
template <>
struct WordOf<8> {
  using type = unsigned long long;
};
template <>
struct WordOf<16> {
  using type = uint4;
};

// How move_words reads. A kernel launched after the data was written may read through L1; the
// resident kernel (resident_kernel.cu) outlives many writes to the same buffers, and its L1 may still
// hold their old bytes, so it fetches every word again.
enum class Reads { kCached, kFetchAgain };

template <Reads kReads, typename T>
__device__ __forceinline__ T read(const T* at) {
  if constexpr (kReads == Reads::kFetchAgain) {
    return __ldcv(at);
  } else {
    return *at;
  }
}

// Moves up to kUnroll whole words per thread, the u-th at word_at(u) for u < rows, as single
// W-byte accesses: each thread loads all of its words before it stores any, so their latencies
// overlap. `typed_offset(word)` is the typed byte offset of a word, asked in order of u.
template <int W, int kUnroll, bool kUnpack, Reads kReads, typename Index, typename WordAt, typename TypedOffset>
__device__ __forceinline__ void move_batch(const WindowWords<Index>& a, int rows, WordAt word_at,
                                           TypedOffset typed_offset) {
  using Word = typename WordOf<W>::type;
  Word value[kUnroll];
  Word* destination[kUnroll];
  GDDT_UNROLL
  for (int u = 0; u < kUnroll; ++u) {
    const Index word = word_at(u);
    destination[u] = nullptr;
    if (u < rows && word < a.word_end) {
      auto* typed = reinterpret_cast<Word*>(a.typed + typed_offset(word));
      auto* packed = reinterpret_cast<Word*>(a.packed + (static_cast<std::int64_t>(word) * W - a.packed_shift));
      value[u] = read<kReads>(kUnpack ? packed : typed);
      destination[u] = kUnpack ? typed : packed;
    }
  }
  GDDT_UNROLL
  for (int u = 0; u < kUnroll; ++u) {
    if (destination[u] != nullptr) *destination[u] = value[u];
  }
}

// The blocks that move a window together, and which of them this one is: the launch's grid,
// or those of the resident kernel's cluster that a job uses.
struct BlockShare {
  unsigned blocks;
  unsigned block;
};

__device__ __forceinline__ BlockShare whole_grid() { return BlockShare{gridDim.x, blockIdx.x}; }

// Moves the bytes of the words at the window's ends that it covers only in part.
template <int W, bool kUnpack, Reads kReads, typename Index, typename TypedOffset>
__device__ __forceinline__ void move_partial_words(const WindowWords<Index>& a, BlockShare share,
                                                   TypedOffset typed_offset) {
  if (share.block != 0 || static_cast<int>(threadIdx.x) >= a.npartial) return;
  const PartialWord<Index> part = threadIdx.x == 0 ? a.partial[0] : a.partial[1];
  char* typed = a.typed + typed_offset(part.word);
  char* packed = a.packed + (static_cast<std::int64_t>(part.word) * W - a.packed_shift);
  for (std::uint32_t b = part.first_byte; b < part.end_byte; ++b) {
    if (kUnpack) {
      typed[b] = read<kReads>(packed + b);
    } else {
      packed[b] = read<kReads>(typed + b);
    }
  }
}

// Moves every word of the window in tiles of kThreads x words_per_thread words, the threads
// of a block taking consecutive words (blocks have kThreads threads).
template <int W, int kUnroll, bool kUnpack, int kThreads, Reads kReads, typename Index, typename TypedOffset>
__device__ __forceinline__ void move_words(const WindowWords<Index>& a, BlockShare share, TypedOffset typed_offset) {
  const Index tile_words = static_cast<Index>(kThreads) * a.words_per_thread;
  const Index stride = static_cast<Index>(share.blocks) * tile_words;
  for (Index tile = a.word_begin + static_cast<Index>(share.block) * tile_words; tile < a.word_end; tile += stride) {
    move_batch<W, kUnroll, kUnpack, kReads>(
        a, a.words_per_thread, [&](int u) { return tile + threadIdx.x + static_cast<Index>(u) * kThreads; },
        typed_offset);
  }
  move_partial_words<W, kUnpack, kReads>(a, share, typed_offset);
}

// The table copied into `shared` (shared_table_bytes(table) of it) by a block of kThreads threads.
template <int kThreads, Reads kReads>
__device__ __forceinline__ PieceTable table_in_shared(const PieceTable& table, uint4* shared) {
  const auto* source = static_cast<const uint4*>(table.base);
  for (std::uint32_t i = threadIdx.x; i < table.bytes / sizeof(uint4); i += kThreads) shared[i] = read<kReads>(source + i);
  __syncthreads();
  return table.moved_to(shared);
}

}  // namespace gddt::pack::cuda_impl
