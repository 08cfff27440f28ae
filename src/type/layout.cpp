// The layout builders and the small queries on pieces and layouts. Builders only assemble
// pieces and repeats; canonicalize() (canonicalize.cpp) shrinks the result to its canonical
// form and fills in the derived fields.
#include "type/layout.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace gddt::type {

namespace {

// Canonicalizes `layout` and gives it its natural bounds (the bytes it touches), as every
// builder promises.
Status finish(Layout* layout) {
  GDDT_CHECK(canonicalize(layout));
  set_bounds(layout, layout->true_lb, layout->true_ub - layout->true_lb);
  return GDDT_OK;
}

// Rewrites the repeats of `layout` as explicit pieces, in packed order, so another repeat
// dimension can be added on top. Refused when that would exceed kMaxPieces.
Status expand_repeats(Layout* layout) {
  std::int64_t groups = 1;
  for (int r = 0; r < layout->nrepeat; ++r) groups *= layout->repeat[r].count;
  if (groups > static_cast<std::int64_t>(kMaxPieces / std::max<std::size_t>(layout->pieces.size(), 1))) {
    return GDDT_ERR_UNSUPPORTED;
  }
  std::vector<StridedBlock> expanded;
  expanded.reserve(static_cast<std::size_t>(groups) * layout->pieces.size());
  std::array<std::int64_t, kMaxDims> idx{};
  std::int64_t shift = 0;
  for (std::int64_t g = 0; g < groups; ++g) {
    for (StridedBlock piece : layout->pieces) {
      piece.offset += shift;
      expanded.push_back(piece);
    }
    shift += walk_detail::advance(layout->repeat, layout->nrepeat, &idx);
  }
  layout->pieces = std::move(expanded);
  layout->nrepeat = 0;
  layout->repeat = {};
  return GDDT_OK;
}

// True when `part` is `first` shifted by `delta`, piece by piece.
bool is_shifted_copy(const Layout& first, const Layout& part, std::int64_t delta) {
  if (part.pieces.size() != first.pieces.size() || part.nrepeat != first.nrepeat) return false;
  for (int r = 0; r < first.nrepeat; ++r) {
    if (part.repeat[r] != first.repeat[r]) return false;
  }
  for (std::size_t i = 0; i < first.pieces.size(); ++i) {
    const StridedBlock& a = first.pieces[i];
    const StridedBlock& b = part.pieces[i];
    std::int64_t expected;
    if (!b.same_shape(a) || __builtin_add_overflow(a.offset, delta, &expected) ||
        b.offset != expected) {
      return false;
    }
  }
  return true;
}

// The step when parts[i] is parts[0] shifted by i * step for every i (at least two parts).
bool arithmetic_progression(const std::vector<const Layout*>& parts, std::int64_t* step) {
  if (parts.size() < 2) return false;
  if (__builtin_sub_overflow(parts[1]->pieces[0].offset, parts[0]->pieces[0].offset, step)) {
    return false;
  }
  std::int64_t delta = 0;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (__builtin_add_overflow(delta, *step, &delta) ||
        !is_shifted_copy(*parts[0], *parts[i], delta)) {
      return false;
    }
  }
  return true;
}

void append_dims(std::string* text, const std::array<Dim, kMaxDims>& dims, int ndims) {
  char buf[64];
  for (int d = 0; d < ndims; ++d) {
    std::snprintf(buf, sizeof buf, "%s%" PRId64 "@%" PRId64, d ? "," : "", dims[d].count,
                  dims[d].stride);
    *text += buf;
  }
}

}  // namespace

std::int64_t StridedBlock::blocks() const {
  std::int64_t n = 1;
  for (int d = 0; d < ndims; ++d) n *= dims[d].count;
  return n;
}

std::int64_t StridedBlock::packed_bytes() const { return block * blocks(); }

bool StridedBlock::same_shape(const StridedBlock& o) const {
  if (block != o.block || ndims != o.ndims) return false;
  for (int d = 0; d < ndims; ++d) {
    if (dims[d] != o.dims[d]) return false;
  }
  return true;
}

const char* shape_name(Shape shape) {
  switch (shape) {
    case Shape::kEmpty: return "empty";
    case Shape::kContiguous: return "contiguous";
    case Shape::kStrided: return "strided";
    case Shape::kBlockList: return "block-list";
  }
  return "unknown";
}

// Elements sit at e * extent, so a negative extent moves the low end and a positive one the
// high end.
std::int64_t Layout::span_lb(std::int64_t count) const {
  return extent < 0 ? true_lb + (count - 1) * extent : true_lb;
}

std::int64_t Layout::span_ub(std::int64_t count) const {
  return extent > 0 ? true_ub + (count - 1) * extent : true_ub;
}

std::string Layout::describe() const {
  constexpr std::size_t kPiecesShown = 4;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "%s size=%" PRId64 " lb=%" PRId64 " extent=%" PRId64 " true=[%" PRId64
                ",%" PRId64 ") align=%u pieces=%zu",
                shape_name(shape), size, lb, extent, true_lb, true_ub, alignment, pieces.size());
  std::string text = buf;
  for (std::size_t i = 0; i < pieces.size() && i < kPiecesShown; ++i) {
    const StridedBlock& p = pieces[i];
    std::snprintf(buf, sizeof buf, " {%" PRId64 "+%" PRId64 " [", p.offset, p.block);
    text += buf;
    append_dims(&text, p.dims, p.ndims);
    text += "]}";
  }
  if (pieces.size() > kPiecesShown) text += " ...";
  if (nrepeat > 0) {
    text += " repeat [";
    append_dims(&text, repeat, nrepeat);
    text += "]";
  }
  return text;
}

Layout make_block(std::int64_t bytes) {
  Layout layout;
  StridedBlock piece;
  piece.block = bytes;
  layout.pieces.push_back(piece);
  // A single block can only fail to canonicalize on a negative size, which leaves it empty.
  if (is_error(finish(&layout))) layout = Layout{};
  return layout;
}

Status make_repeat(const Layout& inner, std::int64_t count, std::int64_t stride, Layout* out) {
  if (count < 0) return GDDT_ERR_INVALID_ARG;
  Layout result = inner;
  if (count == 0) result.pieces.clear();
  if (result.pieces.size() == 1 && result.nrepeat == 0 &&
      result.pieces[0].ndims < kMaxCanonicalDims) {
    StridedBlock& piece = result.pieces[0];
    piece.dims[piece.ndims++] = Dim{count, stride};
  } else if (!result.pieces.empty()) {
    if (result.nrepeat >= kMaxCanonicalDims) GDDT_CHECK(expand_repeats(&result));
    result.repeat[result.nrepeat++] = Dim{count, stride};
  }
  GDDT_CHECK(finish(&result));
  *out = std::move(result);
  return GDDT_OK;
}

// Shifting changes no relation between pieces, so the shifted layout is still canonical and
// only the offsets, bounds and alignment move.
Layout make_shifted(const Layout& inner, std::int64_t delta) {
  Layout result = inner;
  if (result.shape == Shape::kEmpty) return result;
  for (StridedBlock& piece : result.pieces) piece.offset += delta;
  result.true_lb += delta;
  result.true_ub += delta;
  set_bounds(&result, result.true_lb, result.true_ub - result.true_lb);
  return result;
}

Status make_concat(const std::vector<Layout>& parts, Layout* out) {
  std::vector<const Layout*> nonempty;
  for (const Layout& part : parts) {
    if (!part.pieces.empty()) nonempty.push_back(&part);
  }
  if (nonempty.size() == 1) {
    *out = *nonempty[0];
    set_bounds(out, out->true_lb, out->true_ub - out->true_lb);
    return GDDT_OK;
  }
  // Equal parts at a constant step (darray, indexed_block of a struct) stay one repeated
  // group instead of growing the piece list.
  std::int64_t step = 0;
  if (arithmetic_progression(nonempty, &step)) {
    return make_repeat(*nonempty[0], static_cast<std::int64_t>(nonempty.size()), step, out);
  }
  Layout result;
  for (const Layout* part : nonempty) {
    Layout expanded;
    const std::vector<StridedBlock>* pieces = &part->pieces;
    if (part->nrepeat > 0) {
      expanded = *part;
      GDDT_CHECK(expand_repeats(&expanded));
      pieces = &expanded.pieces;
    }
    if (pieces->size() > kMaxPieces - result.pieces.size()) return GDDT_ERR_UNSUPPORTED;
    result.pieces.insert(result.pieces.end(), pieces->begin(), pieces->end());
  }
  GDDT_CHECK(finish(&result));
  *out = std::move(result);
  return GDDT_OK;
}

}  // namespace gddt::type
