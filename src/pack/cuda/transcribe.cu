// The typed-to-typed kernels: each word is read at its place in one typed buffer and written at
// its place in another, so a message between two non-contiguous layouts (the direct plane's read
// of a sender's buffer) moves each byte once, with no packed buffer between. One line of the
// instance table in kernels.hpp.
#include "pack/cuda/kernels.cuh"

namespace gddt::pack::cuda_impl {

// Moves window `a` (`from_table` and `to_table`: block-list sides' tables, or copies of them).
template <int W, bool kFromList, bool kToList>
__device__ __forceinline__ void transcribe_window(const TranscribeSides<kFromList, kToList>& a,
                                                  const PieceTable& from_table, const PieceTable& to_table) {
  using Word = typename WordOf<W>::type;
  constexpr int kUnroll = kFromList || kToList ? kBlockListWordsPerThread : kWordsPerThread<W>;
  const WindowWords<std::uint32_t>& words = a.from.window;
  const char* source = a.from.window.typed;
  char* destination = a.to.window.typed;
  const auto shift = static_cast<std::uint32_t>(a.to_word_shift);
  const std::uint32_t tile_words = kThreadsPerBlock * static_cast<std::uint32_t>(words.words_per_thread);
  const std::uint32_t stride = gridDim.x * tile_words;
  for (std::uint32_t tile = words.word_begin + blockIdx.x * tile_words; tile < words.word_end; tile += stride) {
    Word value[kUnroll];
    Word* target[kUnroll];
    GDDT_UNROLL
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint32_t word = tile + threadIdx.x + static_cast<std::uint32_t>(u) * kThreadsPerBlock;
      target[u] = nullptr;
      if (u < words.words_per_thread && word < words.word_end) {
        value[u] = *reinterpret_cast<const Word*>(source + side_offset(a.from, from_table, W, word));
        target[u] = reinterpret_cast<Word*>(destination + side_offset(a.to, to_table, W, word + shift));
      }
    }
    GDDT_UNROLL
    for (int u = 0; u < kUnroll; ++u) {
      if (target[u] != nullptr) *target[u] = value[u];
    }
  }
  if (blockIdx.x != 0 || static_cast<int>(threadIdx.x) >= words.npartial) return;
  const PartialWord<std::uint32_t> part = threadIdx.x == 0 ? words.partial[0] : words.partial[1];
  const char* from = source + side_offset(a.from, from_table, W, part.word);
  char* to = destination + side_offset(a.to, to_table, W, part.word + shift);
  for (std::uint32_t b = part.first_byte; b < part.end_byte; ++b) to[b] = from[b];
}

// The launch provides the dynamic shared memory of both sides' block-list tables, from's first.
template <int W, bool kFromList, bool kToList>
__global__ void __launch_bounds__(kThreadsPerBlock)
    transcribe_kernel(const __grid_constant__ TranscribeSides<kFromList, kToList> a) {
  extern __shared__ uint4 shared_tables[];
  PieceTable from_table, to_table;
  if constexpr (kFromList) from_table = table_in_shared<kThreadsPerBlock, Reads::kCached>(a.from.table, shared_tables);
  if constexpr (kToList) {
    const unsigned to_at = table_of(a.from).bytes / sizeof(uint4);
    to_table = table_in_shared<kThreadsPerBlock, Reads::kCached>(a.to.table, shared_tables + to_at);
  }
  transcribe_window<W, kFromList, kToList>(a, from_table, to_table);
}

template <int W>
__global__ void __launch_bounds__(kThreadsPerBlock) transcribe_set_kernel(const __grid_constant__ TranscribeSet set) {
  transcribe_window<W, false, false>(set.members[blockIdx.y], PieceTable{}, PieceTable{});
}

template <int W, bool kFromList, bool kToList>
Kernel<TranscribeSides<kFromList, kToList>> transcribe_instance() {
  return transcribe_kernel<W, kFromList, kToList>;
}

#define GDDT_DEFINE_TRANSCRIBE(W, kFromList, kToList) \
  template Kernel<TranscribeSides<kFromList, kToList>> transcribe_instance<W, kFromList, kToList>();
GDDT_TRANSCRIBE_INSTANCES(GDDT_DEFINE_TRANSCRIBE)

template <int W>
Kernel<TranscribeSet> transcribe_set_instance() {
  return transcribe_set_kernel<W>;
}

#define GDDT_DEFINE_TRANSCRIBE_SET(W) template Kernel<TranscribeSet> transcribe_set_instance<W>();
GDDT_TRANSCRIBE_SET_INSTANCES(GDDT_DEFINE_TRANSCRIBE_SET)

}  // namespace gddt::pack::cuda_impl
