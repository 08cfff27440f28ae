// What the launches (cuda_backend.cu) know of the pack and unpack kernels: their block and tile
// shapes, and a function per kernel instance that returns it. The kernels' code compiles only in
// thin files, one per kernel family and direction, driven by the table at the end: nvcc builds
// them in parallel, and a change to one family's kernels recompiles that family's files alone.
// Plain C++: the host code that includes it sees no kernel code.
//
// The launches get each kernel from a function rather than through `extern template`
// declarations of the kernel templates: whole-program nvcc gives a kernel template's host stub
// internal linkage (-static-global-template-stub, on by default in CUDA 13), so only the file
// that instantiates a kernel can name it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "pack/backend.hpp"
#include "pack/cuda/addressing.hpp"

namespace gddt::pack::cuda_impl {

constexpr int kThreadsPerBlock = 256;

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

// Whether a block-list kernel moves its words in spans (move_spans) or in tiles (move_words).
template <bool kUnpack>
constexpr bool kBlockListSpans = kUnpack;

// The most words a thread of a block-list kernel moves per tile or span.
template <bool kUnpack>
constexpr int kBlockListMostPerThread = kBlockListSpans<kUnpack> ? kBlockListRowsPerSpan : kBlockListWordsPerThread;

// Several windows of one kind moved by one launch, which costs the host as much as a launch
// for one (3.3-4 us on an H200): row blockIdx.y of the grid moves window blockIdx.y. Messages
// posted back to back (a window of nonblocking sends, receives completing together) share one.
template <typename Args>
struct WindowSet {
  Args windows[kSetMost];
};

GDDT_HOST_DEVICE unsigned shared_table_bytes(const PieceTable& table) {
  return table.bytes <= kMaxSharedTableBytes ? table.bytes : 0;
}

// What a launch (kernel<<<...>>>(args)) goes through: the kernel's host stub, which the file that
// compiled the kernel hands out.
template <typename Args>
using Kernel = void (*)(Args);

// The kernel instances: strided_kernel and strided_set_kernel (strided_kernels.cuh), and
// block_list_kernel and block_list_set_kernel (block_list_kernels.cuh), with the same template
// arguments. Sets have 32-bit indices only.
template <int W, int kDims, bool kUnpack, typename Index>
Kernel<StridedArgs<Index>> strided_instance();
template <int W, int kDims, bool kUnpack>
Kernel<WindowSet<StridedArgs<std::uint32_t>>> strided_set_instance();
template <int W, bool kUnpack, bool kTableInShared, typename Index>
Kernel<BlockListArgs<Index>> block_list_instance();
template <int W, bool kUnpack, bool kTableInShared>
Kernel<WindowSet<BlockListArgs<std::uint32_t>>> block_list_set_instance();

// The typed-to-typed kernels (transcribe.cu): a side is a strided shape or a block list whose
// table is read from a copy in shared memory; 32-bit indices only.
template <bool kBlockList>
using SideArgs = std::conditional_t<kBlockList, BlockListArgs<std::uint32_t>, StridedArgs<std::uint32_t>>;
template <bool kFromList, bool kToList>
using TranscribeSides = TranscribeArgs<SideArgs<kFromList>, SideArgs<kToList>>;
template <int W, bool kFromList, bool kToList>
Kernel<TranscribeSides<kFromList, kToList>> transcribe_instance();

// Typed-to-typed moves between strided shapes in one launch, row blockIdx.y of the grid moving
// member blockIdx.y: as many as the classic 4 KiB of kernel parameters hold (7).
constexpr int kTranscribeSetMost = std::min(kSetMost, static_cast<int>(4000 / sizeof(TranscribeSides<false, false>)));
static_assert(kTranscribeSetMost >= 2, "a set of typed-to-typed moves holds several");
struct TranscribeSet {
  TranscribeSides<false, false> members[kTranscribeSetMost];
};
template <int W>
Kernel<TranscribeSet> transcribe_set_instance();

// ---- the instances, one table ------------------------------------------------------------------

// X(..., value) for each value a kernel's template argument takes: the word widths of
// with_width, the unrolled dimensions of with_dims (cuda_backend.cu), either of a flag.
#define GDDT_EACH_WIDTH(X, ...) \
  X(__VA_ARGS__, 1) X(__VA_ARGS__, 2) X(__VA_ARGS__, 4) X(__VA_ARGS__, 8) X(__VA_ARGS__, 16)
#define GDDT_EACH_DIMS(X, ...) X(__VA_ARGS__, 2) X(__VA_ARGS__, 4) X(__VA_ARGS__, kMaxWordDims)
#define GDDT_EACH_FLAG(X, ...) X(__VA_ARGS__, false) X(__VA_ARGS__, true)

// X(family, Args, leading template arguments) for every instance of the strided and of the
// block-list kernels of one direction: the table that the declarations below, the files that
// compile the kernels and the loading of every kernel (cuda_backend.cu) expand.
#define GDDT_STRIDED_DIMS(X, kUnpack, W, kDims) X(strided, StridedArgs, W, kDims, kUnpack)
#define GDDT_STRIDED_WIDTH(X, kUnpack, W) GDDT_EACH_DIMS(GDDT_STRIDED_DIMS, X, kUnpack, W)
#define GDDT_STRIDED_INSTANCES(X, kUnpack) GDDT_EACH_WIDTH(GDDT_STRIDED_WIDTH, X, kUnpack)
#define GDDT_BLOCK_LIST_SHARED(X, kUnpack, W, kTableInShared) X(block_list, BlockListArgs, W, kUnpack, kTableInShared)
#define GDDT_BLOCK_LIST_WIDTH(X, kUnpack, W) GDDT_EACH_FLAG(GDDT_BLOCK_LIST_SHARED, X, kUnpack, W)
#define GDDT_BLOCK_LIST_INSTANCES(X, kUnpack) GDDT_EACH_WIDTH(GDDT_BLOCK_LIST_WIDTH, X, kUnpack)

// Explicit instantiations (PREFIX empty) or their declarations (PREFIX extern) of a family's
// kernel with 32- and 64-bit indices and of its set kernel, for the given leading template
// arguments.
#define GDDT_FAMILY_INSTANCES(PREFIX, family, Args, ...)                                       \
  PREFIX template Kernel<Args<std::uint32_t>> family##_instance<__VA_ARGS__, std::uint32_t>(); \
  PREFIX template Kernel<Args<std::uint64_t>> family##_instance<__VA_ARGS__, std::uint64_t>(); \
  PREFIX template Kernel<WindowSet<Args<std::uint32_t>>> family##_set_instance<__VA_ARGS__>();
#define GDDT_DECLARE_INSTANCES(family, Args, ...) GDDT_FAMILY_INSTANCES(extern, family, Args, __VA_ARGS__)
#define GDDT_DEFINE_INSTANCES(family, Args, ...) GDDT_FAMILY_INSTANCES(, family, Args, __VA_ARGS__)

// Each line is compiled by one file: strided_pack.cu, strided_unpack.cu, block_list_pack.cu,
// block_list_unpack.cu.
GDDT_STRIDED_INSTANCES(GDDT_DECLARE_INSTANCES, false)
GDDT_STRIDED_INSTANCES(GDDT_DECLARE_INSTANCES, true)
GDDT_BLOCK_LIST_INSTANCES(GDDT_DECLARE_INSTANCES, false)
GDDT_BLOCK_LIST_INSTANCES(GDDT_DECLARE_INSTANCES, true)

// X(W, kFromList, kToList) for every typed-to-typed kernel, compiled by transcribe.cu.
// (The destination's flag has a macro of its own: one cannot expand inside its own expansion.)
#define GDDT_TRANSCRIBE_FROM(X, W, kFromList) X(W, kFromList, false) X(W, kFromList, true)
#define GDDT_TRANSCRIBE_WIDTH(X, W) GDDT_EACH_FLAG(GDDT_TRANSCRIBE_FROM, X, W)
#define GDDT_TRANSCRIBE_INSTANCES(X) GDDT_EACH_WIDTH(GDDT_TRANSCRIBE_WIDTH, X)
#define GDDT_DECLARE_TRANSCRIBE(W, kFromList, kToList) \
  extern template Kernel<TranscribeSides<kFromList, kToList>> transcribe_instance<W, kFromList, kToList>();
GDDT_TRANSCRIBE_INSTANCES(GDDT_DECLARE_TRANSCRIBE)
#undef GDDT_DECLARE_TRANSCRIBE
#define GDDT_TRANSCRIBE_SET_WIDTH(X, W) X(W)
#define GDDT_TRANSCRIBE_SET_INSTANCES(X) GDDT_EACH_WIDTH(GDDT_TRANSCRIBE_SET_WIDTH, X)
#define GDDT_DECLARE_TRANSCRIBE_SET(W) extern template Kernel<TranscribeSet> transcribe_set_instance<W>();
GDDT_TRANSCRIBE_SET_INSTANCES(GDDT_DECLARE_TRANSCRIBE_SET)
#undef GDDT_DECLARE_TRANSCRIBE_SET

}  // namespace gddt::pack::cuda_impl
