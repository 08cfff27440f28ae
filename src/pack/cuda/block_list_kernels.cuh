// The block-list kernels, alone and in sets (kernels.hpp): a word's typed offset is looked up in
// the layout's piece table. Compiled by block_list_pack.cu and block_list_unpack.cu.
#pragma once

#include "pack/cuda/kernels.cuh"

namespace gddt::pack::cuda_impl {

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

template <int W, bool kUnpack, bool kTableInShared, typename Index>
Kernel<BlockListArgs<Index>> block_list_instance() {
  return block_list_kernel<W, kUnpack, kTableInShared, Index>;
}

template <int W, bool kUnpack, bool kTableInShared>
Kernel<WindowSet<BlockListArgs<std::uint32_t>>> block_list_set_instance() {
  return block_list_set_kernel<W, kUnpack, kTableInShared, std::uint32_t>;
}

}  // namespace gddt::pack::cuda_impl
