// Host side of the CUDA backend: turns a window into what one launch needs. A window is
// either one contiguous typed range (a plain copy), a strided block in word units, or a block
// list read through per-layout tables. Header-only so that tests/gpu/cuda_plan_test.cpp runs
// the same planning, and the kernels' index arithmetic, on the CPU.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "pack/backend.hpp"
#include "pack/cuda/addressing.hpp"

namespace gddt::pack::cuda_impl {

constexpr int kMaxWidth = 16;

// ---- the window as words -------------------------------------------------------------------

// The window in `width`-byte words, before the index type is chosen. Positions count from a
// rebased origin (see plan_strided and plan_block_list) that the typed pointer is shifted to.
struct WordPlan {
  int width = 1;
  std::int64_t typed_shift = 0;
  std::uint64_t word_begin = 0;
  std::uint64_t word_end = 0;
  std::int64_t packed_shift = 0;  // the window's first byte, as a rebased position
  int npartial = 0;
  PartialWord<std::uint64_t> partial[2];
  std::uint64_t largest_operand = 0;  // of any division the kernel runs
};

// Largest power of two up to `most` (itself one, at most kMaxWidth) dividing every value OR-ed
// into `bits`.
inline int word_width(std::uint64_t bits, int most = kMaxWidth) {
  bits |= static_cast<std::uint64_t>(most);
  return static_cast<int>(bits & (~bits + 1));
}

inline std::uint64_t address_bits(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr); }

// Splits the rebased byte range [start, start + length) into whole words and at most two
// partial ones at its ends.
inline WordPlan plan_words(int width, std::int64_t start, std::int64_t length) {
  WordPlan plan;
  plan.width = width;
  plan.packed_shift = start;
  const auto w = static_cast<std::uint64_t>(width);
  const auto first = static_cast<std::uint64_t>(start);
  const auto end = static_cast<std::uint64_t>(start + length);
  const std::uint64_t full_begin = (first + w - 1) / w;
  const std::uint64_t full_end = end / w;
  auto add_partial = [&plan](std::uint64_t word, std::uint64_t from, std::uint64_t to) {
    plan.partial[plan.npartial++] = {word, static_cast<std::uint32_t>(from), static_cast<std::uint32_t>(to)};
  };
  if (full_begin > full_end) {  // inside one word, touching neither of its ends
    add_partial(first / w, first % w, end - first / w * w);
    plan.word_begin = plan.word_end = full_begin;
  } else {
    if (first % w != 0) add_partial(first / w, first % w, w);
    if (end % w != 0) add_partial(end / w, 0, end % w);
    plan.word_begin = full_begin;
    plan.word_end = full_end;
  }
  plan.largest_operand = (end + w - 1) / w;
  return plan;
}

template <typename Index>
WindowWords<Index> window_words(const WordPlan& plan, const void* typed, const void* packed) {
  WindowWords<Index> words;
  words.typed = const_cast<char*>(static_cast<const char*>(typed)) + plan.typed_shift;
  words.packed = const_cast<char*>(static_cast<const char*>(packed));
  words.word_begin = static_cast<Index>(plan.word_begin);
  words.word_end = static_cast<Index>(plan.word_end);
  words.packed_shift = plan.packed_shift;
  words.npartial = plan.npartial;
  for (int i = 0; i < plan.npartial; ++i) {
    words.partial[i] = {static_cast<Index>(plan.partial[i].word), plan.partial[i].first_byte, plan.partial[i].end_byte};
  }
  return words;
}

// 32-bit index arithmetic when every operand of the kernel's divisions fits below 2^31.
inline bool fits_narrow_index(std::uint64_t largest_operand) { return largest_operand < (std::uint64_t{1} << 31); }

// ---- strided shapes ------------------------------------------------------------------------

// `count` elements of a contiguous or strided layout as one strided block in bytes: the
// element count is one more dimension (stride = extent), merged where the layout allows.
struct ByteShape {
  std::int64_t base = 0;
  std::int64_t block = 0;
  int ndims = 0;
  type::Dim dims[type::kMaxDims + 1];
};

// Unit dimensions vanish, dense leading dimensions fold into the block, and neighbours whose
// strides nest merge; repeated to a fixed point.
inline void simplify(ByteShape* s) {
  bool changed = true;
  while (changed) {
    changed = false;
    int kept = 0;
    for (int d = 0; d < s->ndims; ++d) {
      if (s->dims[d].count != 1) s->dims[kept++] = s->dims[d];
    }
    changed |= kept != s->ndims;
    s->ndims = kept;
    if (s->ndims > 0 && s->dims[0].stride == s->block) {
      s->block *= s->dims[0].count;
      std::copy(s->dims + 1, s->dims + s->ndims, s->dims);
      --s->ndims;
      changed = true;
    }
    for (int d = 0; d + 1 < s->ndims; ++d) {
      if (s->dims[d + 1].stride == s->dims[d].count * s->dims[d].stride) {
        s->dims[d].count *= s->dims[d + 1].count;
        std::copy(s->dims + d + 2, s->dims + s->ndims, s->dims + d + 1);
        --s->ndims;
        changed = true;
      }
    }
  }
}

inline ByteShape strided_byte_shape(const type::Layout& layout, std::int64_t count) {
  const type::StridedBlock& piece = layout.pieces[0];
  ByteShape shape;
  shape.base = piece.offset;
  shape.block = piece.block;
  for (int d = 0; d < piece.ndims; ++d) shape.dims[shape.ndims++] = piece.dims[d];
  shape.dims[shape.ndims++] = type::Dim{count, layout.extent};
  simplify(&shape);
  return shape;
}

// True when the window lies inside one block; then *typed_offset is where it starts.
inline bool contiguous_range(const ByteShape& s, std::int64_t offset, std::int64_t length,
                             std::int64_t* typed_offset) {
  std::int64_t block = offset / s.block;
  if (block != (offset + length - 1) / s.block) return false;
  std::int64_t at = s.base + offset % s.block;
  for (int d = 0; d < s.ndims; ++d) {
    at += block % s.dims[d].count * s.dims[d].stride;
    block /= s.dims[d].count;
  }
  *typed_offset = at;
  return true;
}

struct StridedPlan {
  WordPlan words;
  int ndims = 0;
  type::Dim dims[kMaxWordDims];  // in words: counts of words or blocks, strides in bytes
};

// The window of a shape that spans more than one block. The word dimension leads (when a
// block holds several words); the window is rebased onto the outermost dimension's index of
// its first word, so the kernel's indices stay below inner words + window words.
inline StridedPlan plan_strided(const ByteShape& s, const void* typed, const void* packed,
                                std::int64_t offset, std::int64_t length, int most_width = kMaxWidth) {
  std::uint64_t bits = static_cast<std::uint64_t>(s.block) | (address_bits(typed) + static_cast<std::uint64_t>(s.base)) |
                       (address_bits(packed) - static_cast<std::uint64_t>(offset));
  for (int d = 0; d < s.ndims; ++d) bits |= static_cast<std::uint64_t>(s.dims[d].stride);
  const int width = word_width(bits, most_width);

  StridedPlan plan;
  if (s.block > width) plan.dims[plan.ndims++] = type::Dim{s.block / width, width};
  for (int d = 0; d < s.ndims; ++d) plan.dims[plan.ndims++] = s.dims[d];
  if (plan.ndims == 0) plan.dims[plan.ndims++] = type::Dim{1, width};

  std::int64_t inner_words = 1;
  for (int d = 0; d + 1 < plan.ndims; ++d) inner_words *= plan.dims[d].count;
  const std::int64_t outer = offset / width / inner_words;
  const std::int64_t rebase = outer * inner_words * width;

  plan.words = plan_words(width, offset - rebase, length);
  plan.words.typed_shift = s.base + outer * plan.dims[plan.ndims - 1].stride;
  for (int d = 0; d + 1 < plan.ndims; ++d) {
    plan.words.largest_operand = std::max(plan.words.largest_operand, static_cast<std::uint64_t>(plan.dims[d].count));
  }
  return plan;
}

// A window inside one block (a plain copy from `typed_offset`) as a strided block of one
// dimension, for a kernel rather than the copy engine: words as wide as both addresses allow,
// partial words at the end.
inline StridedPlan plan_range(std::int64_t typed_offset, const void* typed, const void* packed, std::int64_t length,
                              int most_width = kMaxWidth) {
  const int width =
      word_width((address_bits(typed) + static_cast<std::uint64_t>(typed_offset)) | address_bits(packed), most_width);
  StridedPlan plan;
  plan.dims[plan.ndims++] = type::Dim{(length + width - 1) / width, width};
  plan.words = plan_words(width, 0, length);
  plan.words.typed_shift = typed_offset;
  return plan;
}

template <typename Index>
StridedArgs<Index> strided_args(const StridedPlan& plan, const void* typed, const void* packed) {
  StridedArgs<Index> args;
  args.window = window_words<Index>(plan.words, typed, packed);
  args.ndims = plan.ndims;
  for (int d = 0; d < plan.ndims; ++d) {
    // The last dimension's count is never divided by, and may not fit the index type.
    if (d + 1 < plan.ndims) args.counts[d] = Divider<Index>::make(static_cast<Index>(plan.dims[d].count));
    args.strides[d] = plan.dims[d].stride;
  }
  return args;
}

// ---- block lists -----------------------------------------------------------------------------

// The device tables of a block-list layout, built in host memory in one block that is
// uploaded as is; table_at() points a PieceTable into a copy of it.
struct PieceTableImage {
  std::vector<std::uint64_t> storage;  // 8-byte words keep every section aligned
  std::size_t pieces_at = 0, piece_begin_at = 0, dims_at = 0, chunk_first_at = 0;  // bytes
  std::size_t word_map_at = 0;  // 0: no word map
  std::uint32_t npieces = 0;
  std::uint32_t chunk_shift = 0;
  std::uint32_t map_shift = 0;

  std::size_t bytes() const { return storage.size() * sizeof(std::uint64_t); }
  PieceTable table_at(const void* base) const {
    const char* at = static_cast<const char*>(base);
    PieceTable table;
    table.base = base;
    table.bytes = static_cast<std::uint32_t>(bytes());
    table.pieces = reinterpret_cast<const PieceRecord*>(at + pieces_at);
    table.piece_begin = reinterpret_cast<const std::int64_t*>(at + piece_begin_at);
    table.dims = reinterpret_cast<const DimRecord*>(at + dims_at);
    table.chunk_first = reinterpret_cast<const std::uint32_t*>(at + chunk_first_at);
    if (word_map_at != 0) table.word_map = reinterpret_cast<const std::int32_t*>(at + word_map_at);
    table.map_shift = map_shift;
    table.npieces = npieces;
    table.chunk_shift = chunk_shift;
    return table;
  }
};

enum class WordMap { kNone, kWhereItFits };

inline std::uint32_t log2_of(std::uint32_t power_of_two) {
  std::uint32_t shift = 0;
  while ((std::uint32_t{1} << shift) < power_of_two) ++shift;
  return shift;
}

// Appends a word map to `image` when the group's words fit it beside the rest of the table in
// shared memory and every typed offset fits 32 bits: with it a block-list lookup is one read of
// shared memory instead of a search through the pieces (the offsets come from that search, run
// here once per word).
inline void add_word_map(const type::Layout& layout, PieceTableImage* image) {
  const std::uint32_t width = std::max<std::uint32_t>(layout.alignment, 1);
  const auto group = static_cast<std::uint64_t>(layout.group_bytes);
  const std::uint64_t words = group / width;
  const std::size_t map_bytes = (words * sizeof(std::int32_t) + 15) / 16 * 16;
  if (words == 0 || group % width != 0 || image->bytes() + map_bytes > kMaxSharedTableBytes) return;
  const PieceTable table = image->table_at(image->storage.data());
  std::vector<std::int32_t> map(words);
  for (std::uint64_t i = 0; i < words; ++i) {
    const std::uint64_t in_group = i * width;
    const std::int64_t offset = offset_in_piece(table, find_piece(table, in_group), in_group);
    if (offset < INT32_MIN || offset > INT32_MAX) return;
    map[i] = static_cast<std::int32_t>(offset);
  }
  image->word_map_at = image->bytes();
  image->map_shift = log2_of(width);
  image->storage.resize((image->word_map_at + map_bytes) / sizeof(std::uint64_t), 0);
  std::memcpy(reinterpret_cast<char*>(image->storage.data()) + image->word_map_at, map.data(),
              map.size() * sizeof(std::int32_t));
}

inline PieceTableImage build_piece_table(const type::Layout& layout, WordMap word_map = WordMap::kWhereItFits) {
  PieceTableImage image;
  const std::size_t npieces = layout.pieces.size();
  image.npieces = static_cast<std::uint32_t>(npieces);

  std::vector<PieceRecord> pieces(npieces);
  std::vector<DimRecord> dims;
  for (std::size_t i = 0; i < npieces; ++i) {
    const type::StridedBlock& p = layout.pieces[i];
    pieces[i] = PieceRecord{p.offset, p.block, static_cast<std::uint32_t>(p.ndims), static_cast<std::uint32_t>(dims.size())};
    if (p.ndims == 0) continue;
    dims.push_back(DimRecord{Divider<std::uint64_t>::make(static_cast<std::uint64_t>(p.block)), 0});
    for (int d = 0; d < p.ndims; ++d) {
      dims.push_back(DimRecord{Divider<std::uint64_t>::make(static_cast<std::uint64_t>(p.dims[d].count)), p.dims[d].stride});
    }
  }

  // Chunks as large as about half a piece on average, so a search usually meets one or two.
  const auto group = static_cast<std::uint64_t>(layout.group_bytes);
  while (((group - 1) >> image.chunk_shift) + 1 > 2 * npieces) ++image.chunk_shift;
  const std::uint64_t nchunks = ((group - 1) >> image.chunk_shift) + 1;
  std::vector<std::uint32_t> chunk_first(nchunks + 1);
  std::uint32_t piece = 0;
  for (std::uint64_t c = 0; c < nchunks; ++c) {
    const auto byte = static_cast<std::int64_t>(c << image.chunk_shift);
    while (piece + 1 < npieces && layout.piece_begin[piece + 1] <= byte) ++piece;
    chunk_first[c] = piece;
  }
  chunk_first[nchunks] = image.npieces - 1;

  auto section = [](std::size_t at, std::size_t bytes) { return (at + bytes + 15) / 16 * 16; };
  image.pieces_at = 0;
  image.piece_begin_at = section(image.pieces_at, pieces.size() * sizeof(PieceRecord));
  image.dims_at = section(image.piece_begin_at, (npieces + 1) * sizeof(std::int64_t));
  image.chunk_first_at = section(image.dims_at, dims.size() * sizeof(DimRecord));
  const std::size_t total = section(image.chunk_first_at, chunk_first.size() * sizeof(std::uint32_t));
  image.storage.assign(total / sizeof(std::uint64_t), 0);
  char* at = reinterpret_cast<char*>(image.storage.data());
  std::memcpy(at + image.pieces_at, pieces.data(), pieces.size() * sizeof(PieceRecord));
  std::memcpy(at + image.piece_begin_at, layout.piece_begin.data(), (npieces + 1) * sizeof(std::int64_t));
  std::memcpy(at + image.dims_at, dims.data(), dims.size() * sizeof(DimRecord));
  std::memcpy(at + image.chunk_first_at, chunk_first.data(), chunk_first.size() * sizeof(std::uint32_t));
  if (word_map == WordMap::kWhereItFits) add_word_map(layout, &image);
  return image;
}

struct BlockListPlan {
  WordPlan words;
  const type::Layout* layout = nullptr;
};

// The window rebased onto the element it starts in: positions count from that element's
// first packed byte, which keeps them below element size + window length.
inline BlockListPlan plan_block_list(const type::Layout& layout, const void* typed, const void* packed,
                                     std::int64_t offset, std::int64_t length, int most_width = kMaxWidth) {
  const int width = word_width(
      layout.alignment | address_bits(typed) | (address_bits(packed) - static_cast<std::uint64_t>(offset)), most_width);
  const std::int64_t element = offset / layout.size;
  BlockListPlan plan;
  plan.layout = &layout;
  plan.words = plan_words(width, offset - element * layout.size, length);
  plan.words.typed_shift = element * layout.extent;
  // Positions are bytes: the kernel multiplies word indices by the width before dividing.
  std::uint64_t largest = plan.words.largest_operand * static_cast<std::uint64_t>(width);
  largest = std::max(largest, static_cast<std::uint64_t>(layout.size));
  for (int r = 0; r < layout.nrepeat; ++r) largest = std::max(largest, static_cast<std::uint64_t>(layout.repeat[r].count));
  plan.words.largest_operand = largest;
  return plan;
}

template <typename Index>
BlockListArgs<Index> block_list_args(const BlockListPlan& plan, const PieceTable& table, const void* typed,
                                     const void* packed) {
  const type::Layout& layout = *plan.layout;
  BlockListArgs<Index> args;
  args.window = window_words<Index>(plan.words, typed, packed);
  args.element = Divider<Index>::make(static_cast<Index>(layout.size));
  args.extent = layout.extent;
  args.group = Divider<Index>::make(static_cast<Index>(layout.group_bytes));
  args.nrepeat = layout.nrepeat;
  for (int r = 0; r < layout.nrepeat; ++r) {
    args.repeat_counts[r] = Divider<Index>::make(static_cast<Index>(layout.repeat[r].count));
    args.repeat_strides[r] = layout.repeat[r].stride;
  }
  args.table = table;
  return args;
}

// ---- one call ---------------------------------------------------------------------------------

struct WindowPlan {
  enum class Kind { kCopy, kStrided, kBlockList };
  Kind kind = Kind::kCopy;
  std::int64_t copy_offset = 0;  // kCopy: typed offset of the window's first byte
  StridedPlan strided;
  BlockListPlan block_list;
};

// What one call does with a non-empty window: block lists go to their kernel; other shapes
// become one strided block, copied as a range when the window lies inside one block. Words are
// at most `most_width` bytes wide.
inline WindowPlan plan_window(const Window& w, const void* typed, const void* packed, int most_width = kMaxWidth) {
  WindowPlan plan;
  if (w.layout->shape == type::Shape::kBlockList) {
    plan.kind = WindowPlan::Kind::kBlockList;
    plan.block_list = plan_block_list(*w.layout, typed, packed, w.offset, w.length, most_width);
    return plan;
  }
  const ByteShape shape = strided_byte_shape(*w.layout, w.count);
  if (contiguous_range(shape, w.offset, w.length, &plan.copy_offset)) return plan;
  plan.kind = WindowPlan::Kind::kStrided;
  plan.strided = plan_strided(shape, typed, packed, w.offset, w.length, most_width);
  return plan;
}

// The words of a planned window; null for a copy.
inline const WordPlan* word_plan(const WindowPlan& plan) {
  switch (plan.kind) {
    case WindowPlan::Kind::kStrided: return &plan.strided.words;
    case WindowPlan::Kind::kBlockList: return &plan.block_list.words;
    case WindowPlan::Kind::kCopy: break;
  }
  return nullptr;
}

// ---- typed to typed -----------------------------------------------------------------------------

// A window read from one typed buffer and written straight into another's window of the same
// length (the kernels of transcribe.cu): both sides planned as words of one width, packed
// position q of the two windows being word (q + from's packed_shift) / width of `from` and
// (q + to's packed_shift) / width of `to`. A side inside one block is a range of words.
struct TranscribePlan {
  WindowPlan from;
  WindowPlan to;
  int width = 1;
  std::int64_t to_word_shift = 0;  // to's word of from's word w: w + to_word_shift
};

// Where the packed side of a window would lie for its words to be as wide as the typed side
// allows: a plan of a typed-to-typed move has no packed buffer.
inline const void* unbounded_packed(std::int64_t offset) {
  return reinterpret_cast<const void*>(static_cast<std::uintptr_t>(kMaxWidth + offset));
}

inline WindowPlan plan_side(const Window& w, const void* typed, int most_width) {
  WindowPlan plan = plan_window(w, typed, unbounded_packed(w.offset), most_width);
  if (plan.kind == WindowPlan::Kind::kCopy) {
    plan.kind = WindowPlan::Kind::kStrided;
    plan.strided = plan_range(plan.copy_offset, typed, unbounded_packed(0), w.length, most_width);
  }
  return plan;
}

// The widest words both sides allow whose packed positions line up (the partial words at the
// two ends then are the same bytes of both). Windows of equal, non-zero length.
inline TranscribePlan plan_transcribe(const Window& from, const void* from_typed, const Window& to,
                                      const void* to_typed) {
  TranscribePlan plan;
  int most = kMaxWidth;
  for (;;) {
    plan.from = plan_side(from, from_typed, most);
    plan.to = plan_side(to, to_typed, most);
    const WordPlan& f = *word_plan(plan.from);
    const WordPlan& t = *word_plan(plan.to);
    if (f.width != t.width) {
      most = std::min(f.width, t.width);
      continue;
    }
    const std::int64_t shift = t.packed_shift - f.packed_shift;
    if (shift % f.width == 0 || f.width == 1) {
      plan.width = f.width;
      plan.to_word_shift = shift / f.width;
      return plan;
    }
    most = f.width / 2;
  }
}

// About how many 32-byte sectors of typed memory a window of `width`-byte words touches: one
// per word where words lie further apart than a sector, else the window's share of the typed
// span (one element's true span, or its extent where that is larger).
inline std::uint64_t typed_sectors(const Window& w, int width) {
  const type::Layout& layout = *w.layout;
  const auto length = static_cast<double>(w.length);
  const double element_span = static_cast<double>(
      std::max<std::int64_t>({layout.true_ub - layout.true_lb, layout.extent, -layout.extent, layout.size}));
  const double footprint = length * element_span / static_cast<double>(std::max<std::int64_t>(layout.size, 1));
  return static_cast<std::uint64_t>(std::min(length / width, footprint / 32 + 1));
}

}  // namespace gddt::pack::cuda_impl
