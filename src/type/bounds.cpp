// The standard's bounds: a typemap's lb is the lowest displacement of its entries and its
// ub the highest end, each entry being a child copy that brings the child's own bounds;
// where lb/ub markers are present only they count (MPI-4.0 5.1.7). The epsilon that rounds
// an unmarked extent up to the alignment of its entries is the implementation's choice (Open
// MPI pads every derived type, MPICH only structs), so it is taken from the library.
#include "type/bounds.hpp"

#include <algorithm>

namespace gddt::type {

namespace {

constexpr std::uint32_t kMaxAlignment = 16;

template <typename Value>
constexpr std::uint32_t value_index_alignment() {
  struct Pair {
    Value value;
    int index;
  };
  return alignof(Pair);
}

// Largest power of two dividing `bytes`, at most kMaxAlignment: how scalars are aligned on
// every ABI gddt builds for.
std::uint32_t scalar_alignment(std::int64_t bytes) {
  std::uint32_t alignment = 1;
  while (alignment < kMaxAlignment && bytes > 0 && bytes % (2 * alignment) == 0) alignment *= 2;
  return alignment;
}

std::uint32_t named_alignment(MPI_Datatype named, std::int64_t extent) {
  // The value-and-index pairs are C structs.
  const struct {
    MPI_Datatype handle;
    std::uint32_t alignment;
  } pairs[] = {
      {MPI_FLOAT_INT, value_index_alignment<float>()},
      {MPI_DOUBLE_INT, value_index_alignment<double>()},
      {MPI_LONG_INT, value_index_alignment<long>()},
      {MPI_2INT, value_index_alignment<int>()},
      {MPI_SHORT_INT, value_index_alignment<short>()},
      {MPI_LONG_DOUBLE_INT, value_index_alignment<long double>()},
  };
  for (const auto& pair : pairs) {
    if (named == pair.handle) return pair.alignment;
  }
  // Two values of one kind (complex numbers, Fortran pairs) are aligned like one value.
  for (MPI_Datatype twin : {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX,
                            MPI_CXX_FLOAT_COMPLEX, MPI_CXX_DOUBLE_COMPLEX,
                            MPI_CXX_LONG_DOUBLE_COMPLEX, MPI_COMPLEX, MPI_DOUBLE_COMPLEX,
                            MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32, MPI_2REAL,
                            MPI_2DOUBLE_PRECISION, MPI_2INTEGER}) {
    if (twin != MPI_DATATYPE_NULL && named == twin) return scalar_alignment(extent / 2);
  }
  return scalar_alignment(extent);
}

// `ub` moved up so that ub - lb is a multiple of `alignment`: the epsilon.
std::int64_t padded_ub(std::int64_t lb, std::int64_t ub, std::uint32_t alignment) {
  const std::int64_t remainder = (ub - lb) % alignment;
  return remainder == 0 ? ub : ub + (alignment - remainder);
}

Status sum(std::int64_t a, std::int64_t b, std::int64_t* out) {
  return __builtin_add_overflow(a, b, out) ? GDDT_ERR_UNSUPPORTED : GDDT_OK;
}

}  // namespace

TypeBounds library_bounds(MPI_Datatype datatype, std::int64_t lb, std::int64_t extent) {
  TypeBounds bounds;
  bounds.lb = lb;
  bounds.ub = lb + extent;
  bounds.occupied = true;
  bounds.alignment = named_alignment(datatype, extent);
  return bounds;
}

TypeBounds resized_bounds(const TypeBounds& child, std::int64_t lb, std::int64_t extent) {
  TypeBounds bounds;
  bounds.lb = lb;
  bounds.ub = lb + extent;
  bounds.marked = true;
  bounds.occupied = true;
  bounds.alignment = child.alignment;
  return bounds;
}

Status repeat_span(std::int64_t count, std::int64_t step, std::int64_t* low, std::int64_t* high) {
  std::int64_t last;
  if (__builtin_mul_overflow(count - 1, step, &last)) return GDDT_ERR_UNSUPPORTED;
  *low = std::min<std::int64_t>(last, 0);
  *high = std::max<std::int64_t>(last, 0);
  return GDDT_OK;
}

void BoundsBuilder::Range::include(std::int64_t low, std::int64_t high) {
  lb = any ? std::min(lb, low) : low;
  ub = any ? std::max(ub, high) : high;
  any = true;
}

Status BoundsBuilder::place(const TypeBounds& child, std::int64_t low, std::int64_t high) {
  if (!child.occupied) return GDDT_OK;
  std::int64_t lb, ub;
  GDDT_CHECK(sum(child.lb, low, &lb));
  GDDT_CHECK(sum(child.ub, high, &ub));
  (child.marked ? marked_ : plain_).include(lb, ub);
  alignment_ = std::max(alignment_, child.alignment);
  if (!child.marked) padded_after_every_block_.include(lb, ub);
  if (!marked_.any && padded_after_every_block_.any) {
    Range& padded = padded_after_every_block_;
    padded.ub = padded_ub(padded.lb, padded.ub, alignment_);
  }
  ++blocks_;
  children_agree_ = children_agree_ && child.library_agrees;
  return GDDT_OK;
}

TypeBounds BoundsBuilder::finish() const {
  TypeBounds bounds;
  const Range& range = marked_.any ? marked_ : plain_;
  if (!range.any) return bounds;
  bounds.lb = range.lb;
  bounds.ub = range.ub;
  bounds.marked = marked_.any;
  bounds.occupied = true;
  bounds.alignment = alignment_;
  if (!bounds.marked && children_agree_) bounds.max_padding = (alignment_ - 1) * blocks_;
  if (!bounds.marked) bounds.padding_after_every_block = padded_after_every_block_.ub - plain_.ub;
  return bounds;
}

TypeBounds with_epsilon(const TypeBounds& bounds) {
  TypeBounds padded = bounds;
  if (!bounds.marked) padded.ub = padded_ub(bounds.lb, bounds.ub, bounds.alignment);
  return padded;
}

TypeBounds with_epsilon_after_every_block(const TypeBounds& bounds) {
  TypeBounds padded = bounds;
  if (!bounds.marked) padded.ub += bounds.padding_after_every_block;
  padded.padding_after_every_block = 0;  // in ub now: a dup of this type must not add it again
  return with_epsilon(padded);
}

TypeBounds reconcile(const TypeBounds& standard, std::int64_t library_lb,
                     std::int64_t library_extent, bool* replaced) {
  TypeBounds result = standard;
  const std::int64_t padding = library_extent - standard.extent();
  *replaced = library_lb != standard.lb || padding < 0 || padding > standard.max_padding;
  result.library_agrees = !*replaced;
  if (!*replaced) {
    result.ub = library_lb + library_extent;
    result.padding_after_every_block = 0;  // the library's ub has its padding
  }
  return result;
}

}  // namespace gddt::type
