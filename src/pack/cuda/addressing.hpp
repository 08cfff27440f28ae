// Where each word of a packed window lives in the typed buffer: the arguments the CUDA
// kernels receive by value and the index arithmetic they run per word. Everything here is
// plain C++ usable on the host as well, so the index arithmetic is tested without a GPU
// (tests/gpu/cuda_plan_test.cpp) exactly as the kernels run it.
#pragma once

#include <cstdint>
#include <type_traits>

#include "type/layout.hpp"

#if defined(__CUDACC__)
#define GDDT_HOST_DEVICE __host__ __device__ __forceinline__
#define GDDT_UNROLL _Pragma("unroll")
#else
#define GDDT_HOST_DEVICE inline
#define GDDT_UNROLL
#endif

namespace gddt::pack::cuda_impl {

// Division by a divisor fixed before launch, as a multiply-high, an add and a shift (the
// round-up method of Granlund and Montgomery, "Division by invariant integers using
// multiplication", 1994). Valid for dividends below 2^(bits-1), which keeps t + n from
// overflowing; the planner picks the 32-bit variant only when every dividend fits that.
template <typename Index>
struct Divider {
  static_assert(std::is_same<Index, std::uint32_t>::value || std::is_same<Index, std::uint64_t>::value,
                "32- or 64-bit unsigned index");
  static constexpr int kBits = 8 * sizeof(Index);

  Index divisor = 1;
  Index magic = 1;
  std::uint32_t shift = 0;

  // divisor in [1, 2^(bits-1)].
  static Divider make(Index d) {
    using Wide = std::conditional_t<kBits == 32, std::uint64_t, unsigned __int128>;
    Divider result;
    result.divisor = d;
    while ((Index{1} << result.shift) < d) ++result.shift;
    const Wide excess = (Wide{1} << result.shift) - d;  // 2^shift - d, below d
    result.magic = static_cast<Index>((excess << kBits) / d + 1);
    return result;
  }

  GDDT_HOST_DEVICE Index quotient(Index n) const { return (multiply_high(n, magic) + n) >> shift; }

  // n / divisor, leaving n % divisor in *remainder.
  GDDT_HOST_DEVICE Index divide(Index n, Index* remainder) const {
    const Index q = quotient(n);
    *remainder = n - q * divisor;
    return q;
  }

 private:
  GDDT_HOST_DEVICE static Index multiply_high(Index a, Index b) {
#if defined(__CUDA_ARCH__)
    if constexpr (kBits == 32) {
      return __umulhi(a, b);
    } else {
      return __umul64hi(a, b);
    }
#else
    if constexpr (kBits == 32) {
      return static_cast<Index>((std::uint64_t{a} * b) >> 32);
    } else {
      return static_cast<Index>((static_cast<unsigned __int128>(a) * b) >> 64);
    }
#endif
  }
};

// A word at the edge of the window that the window covers only in part: bytes
// [first_byte, end_byte) of it move, one at a time.
template <typename Index>
struct PartialWord {
  Index word = 0;
  std::uint32_t first_byte = 0;
  std::uint32_t end_byte = 0;
};

// The window as a range of aligned `width`-byte words. Word w's packed bytes start at
// packed + w * width - packed_shift; its typed bytes at typed + (the shape's offset of w).
template <typename Index>
struct WindowWords {
  char* typed = nullptr;
  char* packed = nullptr;
  Index word_begin = 0;  // the words moved whole: [word_begin, word_end)
  Index word_end = 0;
  std::int64_t packed_shift = 0;
  // Whole words each thread moves per tile (at most the kernel's unroll): fewer for small
  // windows, so that they spread over more multiprocessors instead of queueing on a few.
  int words_per_thread = 1;
  int npartial = 0;
  PartialWord<Index> partial[2];
};

// ---- strided shapes ------------------------------------------------------------------------
// One strided block in word units: dims[0] is usually the words of a block (stride = the
// width), the others the block dimensions and the element count, merged where they could.
constexpr int kMaxWordDims = type::kMaxDims + 2;

template <typename Index>
struct StridedArgs {
  WindowWords<Index> window;
  int ndims = 0;
  Divider<Index> counts[kMaxWordDims];  // the last dimension's is never used
  std::int64_t strides[kMaxWordDims] = {};
};

// The word dimensions a strided kernel's offset loop is unrolled for, for a shape of `ndims`: two
// cover vectors, four the faces and boxes of 3-D grids. A pack kernel instance each (kernels.hpp's
// GDDT_EACH_DIMS); a branch of the typed-to-typed kernel (side_offset).
GDDT_HOST_DEVICE int dims_class(int ndims) { return ndims <= 2 ? 2 : ndims <= 4 ? 4 : kMaxWordDims; }

// Typed offset of `word`. kDims bounds ndims at compile time so every array index below is a
// constant and the arguments stay in the constant bank (a run-time index would copy them to
// local memory).
template <int kDims, typename Index>
GDDT_HOST_DEVICE std::int64_t strided_offset(const StridedArgs<Index>& a, Index word) {
  std::int64_t offset = 0;
GDDT_UNROLL
  for (int d = 0; d < kDims; ++d) {
    if (d + 1 < a.ndims) {
      Index index;
      word = a.counts[d].divide(word, &index);
      offset += static_cast<std::int64_t>(index) * a.strides[d];
    } else if (d + 1 == a.ndims) {
      offset += static_cast<std::int64_t>(word) * a.strides[d];
    }
  }
  return offset;
}

// ---- block lists ---------------------------------------------------------------------------
// The per-layout tables a block-list kernel reads from device memory (uploaded once per
// layout and device; see PieceTableImage in plan.hpp).
struct PieceRecord {
  std::int64_t offset;
  std::int64_t block;
  std::uint32_t ndims;
  std::uint32_t dim_begin;  // dims[dim_begin] divides by the block, the next ndims are its dims
};

struct DimRecord {
  Divider<std::uint64_t> count;
  std::int64_t stride;
};

// Piece tables up to this size are copied into shared memory first (the launch provides that
// much dynamic shared memory): every word's lookup then costs no trip to L2 or DRAM.
constexpr std::uint32_t kMaxSharedTableBytes = 16 << 10;

struct PieceTable {
  const void* base = nullptr;  // the sections lie in [base, base + bytes)
  std::uint32_t bytes = 0;
  const PieceRecord* pieces = nullptr;
  const std::int64_t* piece_begin = nullptr;  // npieces + 1 packed offsets within a group
  const DimRecord* dims = nullptr;
  // chunk_first[c]: the piece holding group byte c << chunk_shift; nchunks + 1 entries, the
  // last npieces - 1. Narrows the search for a byte's piece to the pieces of its chunk.
  const std::uint32_t* chunk_first = nullptr;
  // Where the group is small enough: word_map[i] is the typed offset of group byte
  // i << map_shift (words of the layout's alignment, which never straddle two blocks), so a
  // lookup is one read instead of a search through the pieces. Null where there is none.
  const std::int32_t* word_map = nullptr;
  std::uint32_t map_shift = 0;
  std::uint32_t npieces = 0;
  std::uint32_t chunk_shift = 0;

  // The same table read from a copy of its bytes at `copy` (a kernel's shared memory).
  GDDT_HOST_DEVICE PieceTable moved_to(const void* copy) const {
    const auto move = [&](const auto* p) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
      return reinterpret_cast<const T*>(static_cast<const char*>(copy) +
                                        (reinterpret_cast<const char*>(p) - static_cast<const char*>(base)));
    };
    PieceTable moved = *this;
    moved.base = copy;
    moved.pieces = move(pieces);
    moved.piece_begin = move(piece_begin);
    moved.dims = move(dims);
    moved.chunk_first = move(chunk_first);
    if (word_map != nullptr) moved.word_map = move(word_map);
    return moved;
  }
};

// The piece holding group byte `in_group`: the last piece starting at or before it.
GDDT_HOST_DEVICE std::uint32_t find_piece(const PieceTable& t, std::uint64_t in_group) {
  const std::uint64_t chunk = in_group >> t.chunk_shift;
  std::uint32_t lo = t.chunk_first[chunk];
  std::uint32_t hi = t.chunk_first[chunk + 1];
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo + 1) / 2;
    if (static_cast<std::uint64_t>(t.piece_begin[mid]) <= in_group) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

template <typename Index>
struct BlockListArgs {
  WindowWords<Index> window;
  Divider<Index> element;  // packed bytes of one element
  std::int64_t extent = 0;
  Divider<Index> group;    // packed bytes of one pass over the pieces
  int nrepeat = 0;
  Divider<Index> repeat_counts[type::kMaxDims];
  std::int64_t repeat_strides[type::kMaxDims] = {};
  PieceTable table;
};

// Where the packed byte `position` (counted from the element the window starts in) lies: the
// typed offset of its pass over the pieces, and its packed offset within that pass.
struct GroupPosition {
  std::int64_t offset;
  std::uint64_t in_group;
};

template <typename Index>
GDDT_HOST_DEVICE GroupPosition group_position(const BlockListArgs<Index>& a, Index position) {
  Index in_element;
  const Index element = a.element.divide(position, &in_element);
  std::int64_t offset = static_cast<std::int64_t>(element) * a.extent;
  Index in_group = in_element;
  if (a.nrepeat > 0) {
    Index group = a.group.divide(in_element, &in_group);
GDDT_UNROLL
    for (int r = 0; r < type::kMaxDims; ++r) {
      if (r + 1 < a.nrepeat) {
        Index index;
        group = a.repeat_counts[r].divide(group, &index);
        offset += static_cast<std::int64_t>(index) * a.repeat_strides[r];
      } else if (r + 1 == a.nrepeat) {
        offset += static_cast<std::int64_t>(group) * a.repeat_strides[r];
      }
    }
  }
  return GroupPosition{offset, static_cast<std::uint64_t>(in_group)};
}

// Typed offset of group byte `in_group`, which piece `piece` holds, relative to its group.
GDDT_HOST_DEVICE std::int64_t offset_in_piece(const PieceTable& table, std::uint32_t piece, std::uint64_t in_group) {
  const PieceRecord& record = table.pieces[piece];
  const std::uint64_t in_piece = in_group - static_cast<std::uint64_t>(table.piece_begin[piece]);
  std::int64_t offset = record.offset;
  if (record.ndims == 0) return offset + static_cast<std::int64_t>(in_piece);
  const DimRecord* dims = table.dims + record.dim_begin;
  std::uint64_t in_block;
  std::uint64_t block = dims[0].count.divide(in_piece, &in_block);
  offset += static_cast<std::int64_t>(in_block);
  for (std::uint32_t d = 1; d < record.ndims; ++d) {
    std::uint64_t index;
    block = dims[d].count.divide(block, &index);
    offset += static_cast<std::int64_t>(index) * dims[d].stride;
  }
  return offset + static_cast<std::int64_t>(block) * dims[record.ndims].stride;
}

// Typed offset of group byte `in_group` read from the table's word map (which it must have).
GDDT_HOST_DEVICE std::int64_t mapped_offset(const PieceTable& table, std::uint64_t in_group) {
  const std::uint64_t in_word = in_group & ((std::uint64_t{1} << table.map_shift) - 1);
  return table.word_map[in_group >> table.map_shift] + static_cast<std::int64_t>(in_word);
}

// Typed offset of the packed byte `position`, reading the pieces (or the word map) from `table`
// (a.table or a copy of it). Every piece byte offset, block and stride is a multiple of the word
// width, so a word never straddles two blocks.
template <typename Index>
GDDT_HOST_DEVICE std::int64_t block_list_offset(const BlockListArgs<Index>& a, const PieceTable& table,
                                                Index position) {
  const GroupPosition at = group_position(a, position);
  if (table.word_map != nullptr) return at.offset + mapped_offset(table, at.in_group);
  return at.offset + offset_in_piece(table, find_piece(table, at.in_group), at.in_group);
}

// Rows of 32 words a warp walks in one span where a block-list kernel moves its words in
// spans (move_spans in kernels.cuh): each lane's words lie 32 words apart.
constexpr int kBlockListRowsPerSpan = 16;

// Pieces a lookup with a cursor steps on at most before it searches the table.
constexpr int kCursorSteps = 3;

// The same as block_list_offset for a caller that moves forward through the packed stream in
// steps of a piece or two (a lane walking its span): the search for the piece starts at
// *cursor, the piece of the caller's previous byte (npieces before the first), and *cursor
// becomes the piece found. A step back (into the next group or element) or one past more than
// kCursorSteps pieces searches the table as block_list_offset does.
template <typename Index>
GDDT_HOST_DEVICE std::int64_t block_list_offset(const BlockListArgs<Index>& a, const PieceTable& table,
                                                Index position, std::uint32_t* cursor) {
  const GroupPosition at = group_position(a, position);
  if (table.word_map != nullptr) return at.offset + mapped_offset(table, at.in_group);
  std::uint32_t piece = *cursor;
  bool found = false;
  if (piece < table.npieces && static_cast<std::uint64_t>(table.piece_begin[piece]) <= at.in_group) {
    // piece_begin has npieces + 1 entries, the last the group's size, so piece + 1 is in range.
    for (int step = 0; step <= kCursorSteps; ++step) {
      if (static_cast<std::uint64_t>(table.piece_begin[piece + 1]) > at.in_group) {
        found = true;
        break;
      }
      ++piece;
    }
  }
  if (!found) piece = find_piece(table, at.in_group);
  *cursor = piece;
  return at.offset + offset_in_piece(table, piece, at.in_group);
}

// ---- typed to typed ---------------------------------------------------------------------------

// A window read from one typed buffer and written into another's (plan_transcribe in plan.hpp):
// `from` holds the words moved and the partial words at the ends, and its typed pointer the
// source; `to` the destination's shape and typed pointer (its words and packed pointer go
// unused). From's word w is to's word w + to_word_shift.
template <typename From, typename To>
struct TranscribeArgs {
  From from;
  To to;
  std::int64_t to_word_shift = 0;
};

// A side's block-list table; none for a strided side.
template <typename Index>
GDDT_HOST_DEVICE PieceTable table_of(const StridedArgs<Index>&) {
  return PieceTable{};
}

template <typename Index>
GDDT_HOST_DEVICE PieceTable table_of(const BlockListArgs<Index>& a) {
  return a.table;
}

// The typed offset of word `word` of one side, `width` bytes wide; `table` is a block list's
// piece table (a.table or a copy of it). A strided side takes the loop unrolled for its number of
// dimensions (the branch is the same for every word of a launch): one unrolled for every possible
// dimension made the typed-to-typed kernel of a 4-byte vector 1.45x the time of the simplest
// kernel moving it on an H200 (performance.md, sector_probe).
template <typename Index>
GDDT_HOST_DEVICE std::int64_t side_offset(const StridedArgs<Index>& a, const PieceTable&, int, Index word) {
  switch (dims_class(a.ndims)) {
    case 2: return strided_offset<2>(a, word);
    case 4: return strided_offset<4>(a, word);
    default: return strided_offset<kMaxWordDims>(a, word);
  }
}

template <typename Index>
GDDT_HOST_DEVICE std::int64_t side_offset(const BlockListArgs<Index>& a, const PieceTable& table, int width,
                                          Index word) {
  return block_list_offset(a, table, static_cast<Index>(word * static_cast<Index>(width)));
}

}  // namespace gddt::pack::cuda_impl
