// The datatype IR: where the bytes of one datatype element are, in packed order, as a
// short list of strided N-D blocks repeated over a few outer dimensions. It knows nothing of
// MPI handles or devices; decode.cpp builds it from an MPI datatype and canonicalize passes
// shrink it to the smallest equivalent description.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace gddt::type {

constexpr int kMaxDims = 8;
// Canonical pieces and repeat lists use at most this many dimensions, leaving one free so a
// backend can describe `count` elements as one more outer dimension.
constexpr int kMaxCanonicalDims = kMaxDims - 1;
// Pieces a layout may hold before a constructor that would expand further is refused
// (GDDT_ERR_UNSUPPORTED); the caller then falls back to the MPI library.
constexpr std::size_t kMaxPieces = std::size_t{1} << 22;

struct Dim {
  std::int64_t count = 1;
  std::int64_t stride = 0;  // bytes; may be zero or negative
  bool operator==(const Dim& o) const { return count == o.count && stride == o.stride; }
  bool operator!=(const Dim& o) const { return !(*this == o); }
};

// `block` contiguous bytes at offset + sum_d idx_d * dims[d].stride for every index tuple
// 0 <= idx_d < dims[d].count, packed with dims[0] varying fastest.
struct StridedBlock {
  std::int64_t offset = 0;
  std::int64_t block = 0;
  int ndims = 0;
  std::array<Dim, kMaxDims> dims{};

  std::int64_t blocks() const;        // product of the counts
  std::int64_t packed_bytes() const;  // block * blocks()
  // Same shape (block and dims) regardless of offset.
  bool same_shape(const StridedBlock& o) const;
  bool operator==(const StridedBlock& o) const { return offset == o.offset && same_shape(o); }
};

enum class Shape {
  kEmpty,       // no bytes
  kContiguous,  // one block (pieces[0], ndims 0, no repeats)
  kStrided,     // one strided N-D block (pieces[0], no repeats)
  kBlockList    // several pieces, possibly repeated over `repeat`
};

const char* shape_name(Shape shape);

// Private per-backend data attached to a layout (for example the piece list copied to a
// GPU). Copying a layout copies no slot: the copy builds its own on first use.
class BackendSlots {
 public:
  static constexpr int kSlots = 4;
  struct Slot {
    std::mutex mutex;
    std::shared_ptr<void> data;
  };
  BackendSlots() = default;
  BackendSlots(const BackendSlots&) {}
  BackendSlots& operator=(const BackendSlots&) { return *this; }
  Slot& operator[](int i) const { return slots_[i]; }

 private:
  mutable std::array<Slot, kSlots> slots_;
};

// One element of a datatype. Its packed stream is: for every repeat index tuple (repeat[0]
// fastest), every piece in order, each piece's blocks in its own order, with the piece
// offsets shifted by sum_r idx_r * repeat[r].stride. `count` elements of the type are that
// stream again for element e at e * extent.
struct Layout {
  Shape shape = Shape::kEmpty;
  std::vector<StridedBlock> pieces;
  std::vector<std::int64_t> piece_begin;  // packed offset of each piece in one group; size pieces+1
  int nrepeat = 0;
  std::array<Dim, kMaxDims> repeat{};

  std::int64_t group_bytes = 0;  // packed bytes of one pass over `pieces`
  std::int64_t size = 0;         // packed bytes of one element (MPI_Type_size)
  std::int64_t lb = 0;           // the MPI standard's lower bound and extent of the
  std::int64_t extent = 0;       // datatype (element i starts at i * extent)
  std::int64_t true_lb = 0;      // lowest byte touched by one element, relative to the buffer
  std::int64_t true_ub = 0;      // one past the highest (true_lb == true_ub when empty)
  std::uint32_t alignment = 1;   // largest power of two <= 16 dividing every offset, block,
                                 // stride and the extent: the widest safe access
  BackendSlots backend_slots;

  // Lowest and one-past-highest byte touched by `count` elements (count >= 1).
  std::int64_t span_lb(std::int64_t count) const;
  std::int64_t span_ub(std::int64_t count) const;
  std::string describe() const;  // one line, for logs, gddt-info and test failures
};

// ---- building (used by decode.cpp and the unit tests) -----------------------------------
// Every builder returns a canonical layout: the rewrite passes below have run to a fixed
// point. `lb`/`extent` of a built layout are the natural ones (true bounds); decode sets the
// MPI standard's bounds of the datatype (bounds.hpp) with set_bounds().

Layout make_block(std::int64_t bytes);
// The typemap of `inner` placed `count` times, the i-th shifted by i * stride.
Status make_repeat(const Layout& inner, std::int64_t count, std::int64_t stride, Layout* out);
// `inner` shifted by `delta` bytes.
Layout make_shifted(const Layout& inner, std::int64_t delta);
// The typemaps of `parts` one after another (struct, indexed).
Status make_concat(const std::vector<Layout>& parts, Layout* out);
void set_bounds(Layout* layout, std::int64_t lb, std::int64_t extent);

// ---- canonicalization ---------------------------------------------------------------------
// The passes, each a small rewrite returning whether it changed anything. canonicalize() runs
// them to a fixed point and recomputes the derived fields (shape, piece_begin, sizes, bounds,
// alignment). Exposed for unit tests.
namespace pass {
bool drop_unit_dims(StridedBlock* piece);       // count 1 dimensions vanish
bool fold_dense_dim(StridedBlock* piece);       // dims[0].stride == block: block grows
bool merge_dims(StridedBlock* piece);           // dims[i+1].stride == count_i * stride_i
bool drop_empty_pieces(Layout* layout);         // zero-byte pieces vanish
bool merge_adjacent_pieces(Layout* layout);     // contiguous neighbours become one block
bool fold_piece_runs(Layout* layout);           // equal pieces at a constant step: one more dim
bool fold_single_piece_repeats(Layout* layout); // one piece repeated: repeats become its dims
bool merge_repeat_dims(Layout* layout);         // unit repeats vanish, compatible ones merge
}  // namespace pass

Status canonicalize(Layout* layout);

// ---- walking the packed stream --------------------------------------------------------------
// Calls fn(typed_offset, packed_offset, bytes) for each contiguous run of the packed window
// [offset, offset + length) of `count` elements, in packed order; typed_offset is relative to
// the buffer, packed_offset relative to the start of the window. Runs are maximal within
// one block. Used by the host backend and the tests.
template <typename Fn>
void for_each_run(const Layout& layout, std::int64_t count, std::int64_t offset,
                  std::int64_t length, Fn&& fn);

}  // namespace gddt::type

#include "type/layout_walk.hpp"
