// The rewrite passes and canonicalize(). Every pass keeps the packed stream byte for byte:
// same bytes, same packed order. Packed order is the typemap order, not memory order, so no
// pass sorts pieces or reorders dimensions (a "sort dimensions" pass would change what MPI
// packs); only rewrites that keep the order are allowed.
#include <algorithm>
#include <limits>

#include "type/layout.hpp"

namespace gddt::type {

namespace {

bool piece_is_empty(const StridedBlock& piece) {
  if (piece.block == 0) return true;
  for (int d = 0; d < piece.ndims; ++d) {
    if (piece.dims[d].count == 0) return true;
  }
  return false;
}

void erase_dim(std::array<Dim, kMaxDims>* dims, int* ndims, int d) {
  std::copy(dims->begin() + d + 1, dims->begin() + *ndims, dims->begin() + d);
  (*dims)[--*ndims] = Dim{};
}

// Keeps dimensions with a count other than one; true when some vanished.
bool drop_unit(std::array<Dim, kMaxDims>* dims, int* ndims) {
  int kept = 0;
  for (int d = 0; d < *ndims; ++d) {
    if ((*dims)[d].count != 1) (*dims)[kept++] = (*dims)[d];
  }
  if (kept == *ndims) return false;
  std::fill(dims->begin() + kept, dims->begin() + *ndims, Dim{});
  *ndims = kept;
  return true;
}

// Merges dimension d + 1 into d wherever it continues d's progression.
bool merge_continuing(std::array<Dim, kMaxDims>* dims, int* ndims) {
  bool changed = false;
  for (int d = 0; d + 1 < *ndims;) {
    Dim& inner = (*dims)[d];
    std::int64_t span;
    if (!__builtin_mul_overflow(inner.count, inner.stride, &span) && (*dims)[d + 1].stride == span) {
      inner.count *= (*dims)[d + 1].count;
      erase_dim(dims, ndims, d + 1);
      changed = true;
    } else {
      ++d;
    }
  }
  return changed;
}

// `piece` without its outermost dimension: the shape of one step along it.
StridedBlock outer_slice(const StridedBlock& piece) {
  StridedBlock slice = piece;
  slice.dims[--slice.ndims] = Dim{};
  return slice;
}

// True when `next` is one more step along the outermost dimension of `run`; extends run.
bool absorb_next(StridedBlock* run, const StridedBlock& next) {
  if (run->ndims == 0) return false;
  Dim& outer = run->dims[run->ndims - 1];
  std::int64_t end;
  if (__builtin_mul_overflow(outer.count, outer.stride, &end) ||
      __builtin_add_overflow(end, run->offset, &end) || next.offset != end ||
      !outer_slice(*run).same_shape(next)) {
    return false;
  }
  ++outer.count;
  return true;
}

// True when `previous` is the step before the outermost dimension of `run`; extends run.
bool absorb_previous(const StridedBlock& previous, StridedBlock* run) {
  if (run->ndims == 0) return false;
  Dim& outer = run->dims[run->ndims - 1];
  std::int64_t start;
  if (__builtin_sub_overflow(run->offset, outer.stride, &start) || previous.offset != start ||
      !outer_slice(*run).same_shape(previous)) {
    return false;
  }
  ++outer.count;
  run->offset = previous.offset;
  return true;
}

// Length of the run of pieces from `first` with the same shape at a constant offset step.
std::size_t run_length(const std::vector<StridedBlock>& pieces, std::size_t first,
                       std::int64_t* step) {
  std::size_t end = first + 1;
  if (end == pieces.size() || !pieces[end].same_shape(pieces[first]) ||
      __builtin_sub_overflow(pieces[end].offset, pieces[first].offset, step)) {
    return 1;
  }
  for (++end; end < pieces.size(); ++end) {
    std::int64_t gap;
    if (!pieces[end].same_shape(pieces[first]) ||
        __builtin_sub_overflow(pieces[end].offset, pieces[end - 1].offset, &gap) || gap != *step) {
      break;
    }
  }
  return end - first;
}

// Adds to [*lo, *hi) the reach of `dims` (the lowest and highest offset any index adds).
bool widen_by_dims(const std::array<Dim, kMaxDims>& dims, int ndims, std::int64_t* lo,
                   std::int64_t* hi) {
  for (int d = 0; d < ndims; ++d) {
    std::int64_t reach;
    if (__builtin_mul_overflow(dims[d].count - 1, dims[d].stride, &reach)) return false;
    if (__builtin_add_overflow(reach < 0 ? *lo : *hi, reach, reach < 0 ? lo : hi)) return false;
  }
  return true;
}

bool valid_dims(const std::array<Dim, kMaxDims>& dims, int ndims) {
  if (ndims < 0 || ndims > kMaxDims) return false;
  for (int d = 0; d < ndims; ++d) {
    if (dims[d].count < 0) return false;
  }
  return true;
}

struct Measure {
  std::int64_t size = 0;
  std::int64_t true_lb = 0;
  std::int64_t true_ub = 0;
};

// Size and true bounds of a layout that may not be canonical yet, refusing malformed input
// (GDDT_ERR_INVALID_ARG) and sizes or offsets beyond int64 (GDDT_ERR_UNSUPPORTED). The
// passes keep the typemap, so these values hold for the canonical form as well.
Status measure(const Layout& layout, Measure* m) {
  if (!valid_dims(layout.repeat, layout.nrepeat)) return GDDT_ERR_INVALID_ARG;
  std::int64_t group = 0;
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  for (const StridedBlock& piece : layout.pieces) {
    if (piece.block < 0 || !valid_dims(piece.dims, piece.ndims)) return GDDT_ERR_INVALID_ARG;
    if (piece_is_empty(piece)) continue;
    std::int64_t bytes = piece.block;
    for (int d = 0; d < piece.ndims; ++d) {
      if (__builtin_mul_overflow(bytes, piece.dims[d].count, &bytes)) return GDDT_ERR_UNSUPPORTED;
    }
    std::int64_t piece_lo = piece.offset;
    std::int64_t piece_hi = piece.offset;
    if (__builtin_add_overflow(group, bytes, &group) ||
        !widen_by_dims(piece.dims, piece.ndims, &piece_lo, &piece_hi) ||
        __builtin_add_overflow(piece_hi, piece.block, &piece_hi)) {
      return GDDT_ERR_UNSUPPORTED;
    }
    lo = std::min(lo, piece_lo);
    hi = std::max(hi, piece_hi);
  }
  *m = Measure{};
  for (int r = 0; r < layout.nrepeat; ++r) {
    if (layout.repeat[r].count == 0) group = 0;
  }
  if (group == 0) return GDDT_OK;
  m->size = group;
  for (int r = 0; r < layout.nrepeat; ++r) {
    if (__builtin_mul_overflow(m->size, layout.repeat[r].count, &m->size)) {
      return GDDT_ERR_UNSUPPORTED;
    }
  }
  if (!widen_by_dims(layout.repeat, layout.nrepeat, &lo, &hi)) return GDDT_ERR_UNSUPPORTED;
  m->true_lb = lo;
  m->true_ub = hi;
  return GDDT_OK;
}

// Largest power of two up to 16 dividing every value that positions a byte: offsets, blocks,
// strides of dimensions that repeat, and the extent that places the next element.
std::uint32_t compute_alignment(const Layout& layout) {
  std::uint64_t bits = 16 | static_cast<std::uint64_t>(layout.extent);
  auto add_dims = [&bits](const std::array<Dim, kMaxDims>& dims, int ndims) {
    for (int d = 0; d < ndims; ++d) {
      if (dims[d].count > 1) bits |= static_cast<std::uint64_t>(dims[d].stride);
    }
  };
  for (const StridedBlock& piece : layout.pieces) {
    bits |= static_cast<std::uint64_t>(piece.offset) | static_cast<std::uint64_t>(piece.block);
    add_dims(piece.dims, piece.ndims);
  }
  add_dims(layout.repeat, layout.nrepeat);
  return static_cast<std::uint32_t>(bits & (~bits + 1));
}

Shape classify(const Layout& layout) {
  if (layout.pieces.empty()) return Shape::kEmpty;
  if (layout.pieces.size() > 1 || layout.nrepeat > 0) return Shape::kBlockList;
  return layout.pieces[0].ndims == 0 ? Shape::kContiguous : Shape::kStrided;
}

bool run_passes_once(Layout* layout) {
  bool changed = false;
  for (StridedBlock& piece : layout->pieces) {
    changed |= pass::drop_unit_dims(&piece);
    changed |= pass::fold_dense_dim(&piece);
    changed |= pass::merge_dims(&piece);
  }
  changed |= pass::drop_empty_pieces(layout);
  changed |= pass::merge_adjacent_pieces(layout);
  changed |= pass::fold_piece_runs(layout);
  changed |= pass::fold_single_piece_repeats(layout);
  changed |= pass::merge_repeat_dims(layout);
  return changed;
}

}  // namespace

namespace pass {

bool drop_unit_dims(StridedBlock* piece) { return drop_unit(&piece->dims, &piece->ndims); }

bool fold_dense_dim(StridedBlock* piece) {
  bool changed = false;
  while (piece->ndims > 0 && piece->block > 0 && piece->dims[0].stride == piece->block) {
    std::int64_t block;
    if (__builtin_mul_overflow(piece->block, piece->dims[0].count, &block)) break;
    piece->block = block;
    erase_dim(&piece->dims, &piece->ndims, 0);
    changed = true;
  }
  return changed;
}

bool merge_dims(StridedBlock* piece) { return merge_continuing(&piece->dims, &piece->ndims); }

// A zero repeat count empties the whole group.
bool drop_empty_pieces(Layout* layout) {
  for (int r = 0; r < layout->nrepeat; ++r) {
    if (layout->repeat[r].count != 0) continue;
    bool changed = !layout->pieces.empty() || layout->nrepeat > 0;
    layout->pieces.clear();
    layout->nrepeat = 0;
    layout->repeat = {};
    return changed;
  }
  std::size_t before = layout->pieces.size();
  auto& pieces = layout->pieces;
  pieces.erase(std::remove_if(pieces.begin(), pieces.end(), piece_is_empty), pieces.end());
  if (pieces.empty() && layout->nrepeat > 0) {
    layout->nrepeat = 0;
    layout->repeat = {};
    return true;
  }
  return pieces.size() != before;
}

bool merge_adjacent_pieces(Layout* layout) {
  auto& pieces = layout->pieces;
  if (pieces.size() < 2) return false;
  std::size_t kept = 0;
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    StridedBlock& last = pieces[kept];
    const StridedBlock& next = pieces[i];
    std::int64_t end;
    if (last.ndims == 0 && next.ndims == 0 &&
        !__builtin_add_overflow(last.offset, last.block, &end) && next.offset == end) {
      last.block += next.block;
    } else {
      pieces[++kept] = next;
    }
  }
  bool changed = kept + 1 != pieces.size();
  pieces.resize(kept + 1);
  return changed;
}

// Runs of equal pieces at a constant step become one piece with one more outer dimension;
// a piece that is the next (or previous) step of a neighbour's outermost dimension joins it.
bool fold_piece_runs(Layout* layout) {
  auto& pieces = layout->pieces;
  if (pieces.size() < 2) return false;
  std::vector<StridedBlock> folded;
  folded.reserve(pieces.size());
  for (std::size_t i = 0; i < pieces.size();) {
    std::int64_t step = 0;
    std::size_t length = pieces[i].ndims < kMaxCanonicalDims ? run_length(pieces, i, &step) : 1;
    StridedBlock piece = pieces[i];
    if (length > 1) piece.dims[piece.ndims++] = Dim{static_cast<std::int64_t>(length), step};
    i += length;
    if (!folded.empty() && absorb_next(&folded.back(), piece)) continue;
    if (!folded.empty() && absorb_previous(folded.back(), &piece)) {
      folded.back() = piece;
      continue;
    }
    folded.push_back(piece);
  }
  bool changed = folded.size() != pieces.size();
  pieces = std::move(folded);
  return changed;
}

// The repeats of a single piece become its outermost dimensions, fastest first, as long as
// the piece has room.
bool fold_single_piece_repeats(Layout* layout) {
  if (layout->pieces.size() != 1 || layout->nrepeat == 0) return false;
  StridedBlock& piece = layout->pieces[0];
  int moved = 0;
  while (moved < layout->nrepeat && piece.ndims < kMaxCanonicalDims) {
    piece.dims[piece.ndims++] = layout->repeat[moved++];
  }
  for (int r = 0; r < moved; ++r) erase_dim(&layout->repeat, &layout->nrepeat, 0);
  return moved > 0;
}

bool merge_repeat_dims(Layout* layout) {
  bool dropped = drop_unit(&layout->repeat, &layout->nrepeat);
  bool merged = merge_continuing(&layout->repeat, &layout->nrepeat);
  return dropped || merged;
}

}  // namespace pass

Status canonicalize(Layout* layout) {
  Measure m;
  GDDT_CHECK(measure(*layout, &m));
  while (run_passes_once(layout)) {
  }
  // Builders never get here; only a hand-made layout can keep too many dimensions.
  for (const StridedBlock& piece : layout->pieces) {
    if (piece.ndims > kMaxCanonicalDims) return GDDT_ERR_UNSUPPORTED;
  }
  if (layout->nrepeat > kMaxCanonicalDims) return GDDT_ERR_UNSUPPORTED;

  layout->shape = classify(*layout);
  layout->piece_begin.assign(1, 0);
  for (const StridedBlock& piece : layout->pieces) {
    layout->piece_begin.push_back(layout->piece_begin.back() + piece.packed_bytes());
  }
  layout->group_bytes = layout->piece_begin.back();
  layout->size = m.size;
  layout->true_lb = m.true_lb;
  layout->true_ub = m.true_ub;
  layout->alignment = compute_alignment(*layout);
  return GDDT_OK;
}

void set_bounds(Layout* layout, std::int64_t lb, std::int64_t extent) {
  layout->lb = lb;
  layout->extent = extent;
  layout->alignment = compute_alignment(*layout);
}

}  // namespace gddt::type
