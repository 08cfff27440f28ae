// Test oracles for layouts: the packed stream expanded byte by byte with plain nested loops
// (independent of for_each_run), the same stream read back through for_each_run in arbitrary
// windows, and the checks every canonical layout must pass.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "type/layout.hpp"

namespace gddt::type::testing {

using Bytes = std::vector<std::int64_t>;  // typed offset of each packed byte, in packed order

// Calls fn(offset) for every index tuple of dims (dims[0] fastest), offset = sum idx*stride.
template <typename Fn>
void for_each_index(const std::array<Dim, kMaxDims>& dims, int ndims, std::int64_t base, Fn&& fn) {
  if (ndims == 0) {
    fn(base);
    return;
  }
  const Dim& outer = dims[ndims - 1];
  for (std::int64_t i = 0; i < outer.count; ++i) {
    for_each_index(dims, ndims - 1, base + i * outer.stride, fn);
  }
}

inline Bytes reference_bytes(const Layout& layout, std::int64_t count = 1) {
  Bytes bytes;
  for (std::int64_t e = 0; e < count; ++e) {
    for_each_index(layout.repeat, layout.nrepeat, e * layout.extent, [&](std::int64_t group) {
      for (const StridedBlock& piece : layout.pieces) {
        for_each_index(piece.dims, piece.ndims, group + piece.offset, [&](std::int64_t block) {
          for (std::int64_t b = 0; b < piece.block; ++b) bytes.push_back(block + b);
        });
      }
    });
  }
  return bytes;
}

// The window [offset, offset + length) through for_each_run, checking that the runs tile the
// window in order.
inline Bytes walked_bytes(const Layout& layout, std::int64_t count, std::int64_t offset,
                          std::int64_t length) {
  Bytes bytes;
  for_each_run(layout, count, offset, length,
               [&](std::int64_t typed, std::int64_t packed, std::int64_t run) {
                 EXPECT_EQ(packed, static_cast<std::int64_t>(bytes.size()));
                 EXPECT_GT(run, 0);
                 for (std::int64_t b = 0; b < run; ++b) bytes.push_back(typed + b);
               });
  return bytes;
}

// Splits the packed stream of `count` elements into random windows and checks that they
// read, one after another, exactly the reference stream.
inline void expect_windows_match(const Layout& layout, std::int64_t count, std::mt19937* rng,
                                 int splits = 8) {
  const Bytes expected = reference_bytes(layout, count);
  const std::int64_t total = static_cast<std::int64_t>(expected.size());
  ASSERT_EQ(total, layout.size * count) << layout.describe();
  EXPECT_EQ(walked_bytes(layout, count, 0, total), expected) << layout.describe();
  for (int trial = 0; trial < splits; ++trial) {
    Bytes joined;
    std::int64_t offset = 0;
    while (offset < total) {
      std::int64_t length = std::uniform_int_distribution<std::int64_t>(1, std::max<std::int64_t>(total / 3, 1))(*rng);
      Bytes part = walked_bytes(layout, count, offset, length);
      EXPECT_EQ(static_cast<std::int64_t>(part.size()), std::min(length, total - offset));
      joined.insert(joined.end(), part.begin(), part.end());
      offset += length;
    }
    ASSERT_EQ(joined, expected) << layout.describe();
  }
  EXPECT_TRUE(walked_bytes(layout, count, total, 10).empty());
}

inline bool divides(std::int64_t alignment, std::int64_t value) { return value % alignment == 0; }

// The promises of canonicalize(): derived fields right, and no pass left anything to do.
inline void expect_canonical(const Layout& layout) {
  SCOPED_TRACE(layout.describe());
  const Bytes bytes = reference_bytes(layout);
  EXPECT_EQ(layout.size, static_cast<std::int64_t>(bytes.size()));
  if (bytes.empty()) {
    EXPECT_EQ(layout.shape, Shape::kEmpty);
    EXPECT_TRUE(layout.pieces.empty());
    EXPECT_EQ(layout.true_lb, layout.true_ub);
    return;
  }
  EXPECT_EQ(layout.true_lb, *std::min_element(bytes.begin(), bytes.end()));
  EXPECT_EQ(layout.true_ub, *std::max_element(bytes.begin(), bytes.end()) + 1);

  Layout copy = layout;
  for (StridedBlock& piece : copy.pieces) {
    EXPECT_LE(piece.ndims, kMaxCanonicalDims);
    EXPECT_FALSE(pass::drop_unit_dims(&piece));
    EXPECT_FALSE(pass::fold_dense_dim(&piece));
    EXPECT_FALSE(pass::merge_dims(&piece));
  }
  EXPECT_FALSE(pass::drop_empty_pieces(&copy));
  EXPECT_FALSE(pass::merge_adjacent_pieces(&copy));
  EXPECT_FALSE(pass::fold_piece_runs(&copy));
  EXPECT_FALSE(pass::fold_single_piece_repeats(&copy));
  EXPECT_FALSE(pass::merge_repeat_dims(&copy));
  EXPECT_LE(layout.nrepeat, kMaxCanonicalDims);

  const bool one_piece = layout.pieces.size() == 1 && layout.nrepeat == 0;
  const Shape shape = !one_piece ? Shape::kBlockList
                      : layout.pieces[0].ndims == 0 ? Shape::kContiguous
                                                    : Shape::kStrided;
  EXPECT_EQ(layout.shape, shape);

  ASSERT_EQ(layout.piece_begin.size(), layout.pieces.size() + 1);
  for (std::size_t i = 0; i < layout.pieces.size(); ++i) {
    EXPECT_EQ(layout.piece_begin[i + 1] - layout.piece_begin[i], layout.pieces[i].packed_bytes());
  }
  EXPECT_EQ(layout.group_bytes, layout.piece_begin.back());

  const std::int64_t a = layout.alignment;
  EXPECT_TRUE(a == 1 || a == 2 || a == 4 || a == 8 || a == 16);
  EXPECT_TRUE(divides(a, layout.extent));
  for (const StridedBlock& piece : layout.pieces) {
    EXPECT_TRUE(divides(a, piece.offset) && divides(a, piece.block));
    for (int d = 0; d < piece.ndims; ++d) EXPECT_TRUE(divides(a, piece.dims[d].stride));
  }
  for (int r = 0; r < layout.nrepeat; ++r) EXPECT_TRUE(divides(a, layout.repeat[r].stride));
}

}  // namespace gddt::type::testing
