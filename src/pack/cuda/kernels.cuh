// The pack and unpack kernels: one template moves the words of a window, specialized by word
// width, direction and how a word's typed offset is found (strided shape or block list).
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "pack/cuda/addressing.hpp"

namespace gddt::pack::cuda_impl {

constexpr int kThreadsPerBlock = 256;

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

template <int N>
using Constant = std::integral_constant<int, N>;

// Calls fn(Constant<W>{}) for a run-time word width W, so each width gets its own instance.
template <typename Fn>
decltype(auto) with_width(int width, Fn&& fn) {
  switch (width) {
    case 16: return fn(Constant<16>{});
    case 8: return fn(Constant<8>{});
    case 4: return fn(Constant<4>{});
    case 2: return fn(Constant<2>{});
    default: return fn(Constant<1>{});
  }
}

// Independent words each thread keeps in flight: 64 bytes of wide words, or eight narrow
// ones, so index arithmetic and memory latency overlap.
template <int W>
constexpr int kWordsPerThread = W >= 8 ? 64 / W : 8;

// Block-list packs keep at most four words in flight: their lookups hold many values per word,
// and with eight a thread needs 80 registers, leaving room for 3 resident blocks of 256 threads
// per multiprocessor instead of 5 (at 48): 1.16-1.29x faster at 256 MiB on an H200.
// Unpacks keep eight, which measured 5-7% faster for them (performance.md).
template <int W, bool kUnpack>
constexpr int kBlockListWordsPerThread = kUnpack || kWordsPerThread<W> < 4 ? kWordsPerThread<W> : 4;

// How move_words reads. A kernel launched after the data was written may read through L1; the
// resident kernel (resident.cu) outlives many writes to the same buffers, and its L1 may still
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

// Moves every word of the window: whole words as single W-byte accesses, each thread loading
// its words before storing any; then the partial words at the window's ends, bytewise.
// `typed_offset(word)` is the typed byte offset of a word. Blocks have kThreads threads.
template <int W, int kUnroll, bool kUnpack, int kThreads, Reads kReads, typename Index, typename TypedOffset>
__device__ __forceinline__ void move_words(const WindowWords<Index>& a, TypedOffset typed_offset) {
  using Word = typename WordOf<W>::type;
  const Index tile_words = static_cast<Index>(kThreads) * a.words_per_thread;
  const Index stride = static_cast<Index>(gridDim.x) * tile_words;
  for (Index tile = a.word_begin + static_cast<Index>(blockIdx.x) * tile_words; tile < a.word_end; tile += stride) {
    Word value[kUnroll];
    Word* destination[kUnroll];
    GDDT_UNROLL
    for (int u = 0; u < kUnroll; ++u) {
      const Index word = tile + threadIdx.x + static_cast<Index>(u) * kThreads;
      destination[u] = nullptr;
      if (u < a.words_per_thread && word < a.word_end) {
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
  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < a.npartial) {
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
}

template <int W, int kDims, bool kUnpack, typename Index>
__global__ void __launch_bounds__(kThreadsPerBlock) strided_kernel(const __grid_constant__ StridedArgs<Index> a) {
  move_words<W, kWordsPerThread<W>, kUnpack, kThreadsPerBlock, Reads::kCached>(
      a.window, [&a](Index word) { return strided_offset<kDims>(a, word); });
}

// Piece tables up to this size are copied into shared memory first (the launch provides that
// much dynamic shared memory): every word's lookup then costs no trip to L2 or DRAM.
constexpr std::uint32_t kMaxSharedTableBytes = 16 << 10;

GDDT_HOST_DEVICE unsigned shared_table_bytes(const PieceTable& table) {
  return table.bytes <= kMaxSharedTableBytes ? table.bytes : 0;
}

// The table copied into `shared` (shared_table_bytes(table) of it) by a block of kThreads threads.
template <int kThreads, Reads kReads>
__device__ __forceinline__ PieceTable table_in_shared(const PieceTable& table, uint4* shared) {
  const auto* source = static_cast<const uint4*>(table.base);
  for (std::uint32_t i = threadIdx.x; i < table.bytes / sizeof(uint4); i += kThreads) shared[i] = read<kReads>(source + i);
  __syncthreads();
  return table.moved_to(shared);
}

template <int W, bool kUnpack, typename Index>
__global__ void __launch_bounds__(kThreadsPerBlock) block_list_kernel(const __grid_constant__ BlockListArgs<Index> a) {
  extern __shared__ uint4 shared_table[];
  PieceTable table = a.table;
  if (shared_table_bytes(table) != 0) table = table_in_shared<kThreadsPerBlock, Reads::kCached>(table, shared_table);
  move_words<W, kBlockListWordsPerThread<W, kUnpack>, kUnpack, kThreadsPerBlock, Reads::kCached>(
      a.window, [&a, &table](Index word) { return block_list_offset(a, table, static_cast<Index>(word * W)); });
}

}  // namespace gddt::pack::cuda_impl
