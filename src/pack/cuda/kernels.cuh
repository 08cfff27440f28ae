// The pack and unpack kernels: one template moves the words of a window, specialized by word
// width, direction and how a word's typed offset is found (strided shape or block list).
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "pack/backend.hpp"
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

// Block-list kernels keep four words in flight per thread: their lookups hold many values per
// word, and with eight an 8-byte pack needs 80 registers, leaving room for 3 resident blocks
// of 256 threads per multiprocessor instead of 5 (at 48): 1.16-1.29x faster at 256 MiB on an
// H200 (performance.md).
constexpr int kBlockListWordsPerThread = 4;

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

template <int W, int kDims, bool kUnpack, typename Index>
__device__ __forceinline__ void move_strided(const StridedArgs<Index>& a) {
  move_words<W, kWordsPerThread<W>, kUnpack, kThreadsPerBlock, Reads::kCached>(
      a.window, whole_grid(), [&a](Index word) { return strided_offset<kDims>(a, word); });
}

template <int W, int kDims, bool kUnpack, typename Index>
__global__ void __launch_bounds__(kThreadsPerBlock) strided_kernel(const __grid_constant__ StridedArgs<Index> a) {
  move_strided<W, kDims, kUnpack>(a);
}

// Several windows of one kind moved by one launch, which costs the host as much as a launch
// for one (3.3-4 us on an H200): row blockIdx.y of the grid moves window blockIdx.y. Messages
// posted back to back (a window of nonblocking sends, receives completing together) share one.
template <typename Args>
struct WindowSet {
  Args windows[kSetMost];
};

template <int W, int kDims, bool kUnpack, typename Index>
__global__ void __launch_bounds__(kThreadsPerBlock)
    strided_set_kernel(const __grid_constant__ WindowSet<StridedArgs<Index>> set) {
  move_strided<W, kDims, kUnpack>(set.windows[blockIdx.y]);
}

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

// Moves every word of a block-list window in spans of words_per_thread rows of 32 words, one
// span per warp at a time, each lane finding its words' pieces with a cursor (a lane's next
// word is 32 words on, a piece or two, so it rarely searches the table). Unpacks move in this
// order: 1.07-1.18x faster than in tiles at 256 MiB on an H200, presumably because each warp
// then writes the typed buffer front to back. Packs move in tiles: in spans, narrow words were
// 1.08-1.14x slower and 8-byte words no faster (performance.md).
template <int W, int kUnroll, bool kUnpack, int kThreads, typename Index>
__device__ __forceinline__ void move_spans(const BlockListArgs<Index>& a, const PieceTable& table) {
  constexpr int kWarpsPerBlock = kThreads / 32;
  const WindowWords<Index>& window = a.window;
  const Index lane = threadIdx.x % 32;
  const Index span_words = Index{32} * static_cast<Index>(window.words_per_thread);
  const Index stride = static_cast<Index>(gridDim.x) * kWarpsPerBlock * span_words;
  const Index first_warp = static_cast<Index>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  for (Index span = window.word_begin + first_warp * span_words; span < window.word_end; span += stride) {
    std::uint32_t cursor = table.npieces;
    for (int row = 0; row < window.words_per_thread; row += kUnroll) {
      move_batch<W, kUnroll, kUnpack, Reads::kCached>(
          window, window.words_per_thread - row,
          [&](int u) { return span + static_cast<Index>(row + u) * 32 + lane; },
          [&](Index word) { return block_list_offset(a, table, static_cast<Index>(word * W), &cursor); });
    }
  }
  move_partial_words<W, kUnpack, Reads::kCached>(
      window, whole_grid(), [&](Index word) { return block_list_offset(a, table, static_cast<Index>(word * W)); });
}

// Whether a block-list kernel moves its words in spans (move_spans) or in tiles (move_words).
template <bool kUnpack>
constexpr bool kBlockListSpans = kUnpack;

// The most words a thread of a block-list kernel moves per tile or span.
template <bool kUnpack>
constexpr int kBlockListMostPerThread = kBlockListSpans<kUnpack> ? kBlockListRowsPerSpan : kBlockListWordsPerThread;

// Resident blocks per multiprocessor asked of the compiler for block-list kernels (0: none).
// Five holds them to 48 registers, where they otherwise take 56-58; not asked where that
// spills: 16-byte words, 64-bit indices and 8-byte words moved in spans (which fit 48 unasked).
template <int W, bool kUnpack, typename Index>
constexpr int kBlockListMinBlocks =
    sizeof(Index) == 4 && (W <= 4 || (W == 8 && !kBlockListSpans<kUnpack>)) ? 5 : 0;

// kTableInShared: the launch provides shared_table_bytes(a.table) of dynamic shared memory and
// the table is read from a copy there. A kernel of its own for that case lets the compiler
// address the copy as shared memory (a pointer that may point to either is read with slower
// generic loads) and needs fewer registers.
template <int W, bool kUnpack, bool kTableInShared, typename Index>
__device__ __forceinline__ void move_block_list(const BlockListArgs<Index>& a) {
  PieceTable table = a.table;
  if constexpr (kTableInShared) {
    extern __shared__ uint4 shared_table[];
    table = table_in_shared<kThreadsPerBlock, Reads::kCached>(a.table, shared_table);
  }
  if constexpr (kBlockListSpans<kUnpack>) {
    move_spans<W, kBlockListWordsPerThread, kUnpack, kThreadsPerBlock>(a, table);
  } else {
    move_words<W, kBlockListWordsPerThread, kUnpack, kThreadsPerBlock, Reads::kCached>(
        a.window, whole_grid(),
        [&a, &table](Index word) { return block_list_offset(a, table, static_cast<Index>(word * W)); });
  }
}

template <int W, bool kUnpack, bool kTableInShared, typename Index>
__global__ void __launch_bounds__(kThreadsPerBlock, kBlockListMinBlocks<W, kUnpack, Index>)
    block_list_kernel(const __grid_constant__ BlockListArgs<Index> a) {
  move_block_list<W, kUnpack, kTableInShared>(a);
}

// Each row of the grid copies its own window's table when the tables are in shared memory (the
// launch provides the largest one's bytes).
template <int W, bool kUnpack, bool kTableInShared, typename Index>
__global__ void __launch_bounds__(kThreadsPerBlock, kBlockListMinBlocks<W, kUnpack, Index>)
    block_list_set_kernel(const __grid_constant__ WindowSet<BlockListArgs<Index>> set) {
  move_block_list<W, kUnpack, kTableInShared>(set.windows[blockIdx.y]);
}

}  // namespace gddt::pack::cuda_impl
