// The layout IR without MPI: every rewrite pass on hand-made input, the builders' canonical
// results, and for_each_run against a byte-by-byte expansion, including a random fuzz of
// builder trees.
#include <gtest/gtest.h>

#include <random>

#include "type/layout.hpp"
#include "type/wire.hpp"
#include "typemap_reference.hpp"

namespace gddt::type {
namespace {

using testing::Bytes;
using testing::expect_canonical;
using testing::expect_windows_match;
using testing::reference_bytes;

StridedBlock piece(std::int64_t offset, std::int64_t block, std::vector<Dim> dims = {}) {
  StridedBlock p;
  p.offset = offset;
  p.block = block;
  for (const Dim& d : dims) p.dims[p.ndims++] = d;
  return p;
}

Layout layout_of(std::vector<StridedBlock> pieces, std::vector<Dim> repeats = {}) {
  Layout l;
  l.pieces = std::move(pieces);
  for (const Dim& r : repeats) l.repeat[l.nrepeat++] = r;
  return l;
}

Layout repeated(const Layout& inner, std::int64_t count, std::int64_t stride) {
  Layout out;
  EXPECT_EQ(make_repeat(inner, count, stride, &out), GDDT_OK);
  return out;
}

Layout concat(const std::vector<Layout>& parts) {
  Layout out;
  EXPECT_EQ(make_concat(parts, &out), GDDT_OK);
  return out;
}

// Runs a piece pass and checks it kept the bytes.
template <typename Pass>
bool run_piece_pass(Pass pass, StridedBlock* p) {
  const Bytes before = reference_bytes(layout_of({*p}));
  bool changed = pass(p);
  EXPECT_EQ(reference_bytes(layout_of({*p})), before);
  return changed;
}

template <typename Pass>
bool run_layout_pass(Pass pass, Layout* l) {
  const Bytes before = reference_bytes(*l);
  bool changed = pass(l);
  EXPECT_EQ(reference_bytes(*l), before);
  return changed;
}

// ---- passes ---------------------------------------------------------------------------

TEST(LayoutPass, DropUnitDims) {
  StridedBlock p = piece(0, 4, {{1, 100}, {3, 8}, {1, 5}});
  EXPECT_TRUE(run_piece_pass(pass::drop_unit_dims, &p));
  EXPECT_EQ(p, piece(0, 4, {{3, 8}}));
  EXPECT_FALSE(run_piece_pass(pass::drop_unit_dims, &p));
}

TEST(LayoutPass, FoldDenseDim) {
  StridedBlock p = piece(0, 4, {{3, 4}, {2, 12}, {2, 100}});
  EXPECT_TRUE(run_piece_pass(pass::fold_dense_dim, &p));
  EXPECT_EQ(p, piece(0, 24, {{2, 100}}));
  StridedBlock gapped = piece(0, 4, {{3, 8}});
  EXPECT_FALSE(run_piece_pass(pass::fold_dense_dim, &gapped));
  StridedBlock backwards = piece(8, 4, {{3, -4}});
  EXPECT_FALSE(run_piece_pass(pass::fold_dense_dim, &backwards));
}

TEST(LayoutPass, MergeDims) {
  StridedBlock p = piece(0, 4, {{3, 8}, {2, 24}, {5, 1000}});
  EXPECT_TRUE(run_piece_pass(pass::merge_dims, &p));
  EXPECT_EQ(p, piece(0, 4, {{6, 8}, {5, 1000}}));
  StridedBlock negative = piece(100, 4, {{3, -8}, {2, -24}});
  EXPECT_TRUE(run_piece_pass(pass::merge_dims, &negative));
  EXPECT_EQ(negative, piece(100, 4, {{6, -8}}));
  StridedBlock zero = piece(0, 4, {{3, 0}, {2, 0}});
  EXPECT_TRUE(run_piece_pass(pass::merge_dims, &zero));
  EXPECT_EQ(zero, piece(0, 4, {{6, 0}}));
  StridedBlock kept = piece(0, 4, {{3, 8}, {2, 25}});
  EXPECT_FALSE(run_piece_pass(pass::merge_dims, &kept));
}

TEST(LayoutPass, DropEmptyPieces) {
  Layout l = layout_of({piece(0, 0), piece(4, 4), piece(8, 4, {{0, 16}}), piece(20, 2)});
  EXPECT_TRUE(run_layout_pass(pass::drop_empty_pieces, &l));
  EXPECT_EQ(l.pieces.size(), 2u);
  EXPECT_FALSE(run_layout_pass(pass::drop_empty_pieces, &l));

  Layout zero_repeat = layout_of({piece(0, 4), piece(8, 4)}, {{3, 100}, {0, 1000}});
  EXPECT_TRUE(run_layout_pass(pass::drop_empty_pieces, &zero_repeat));
  EXPECT_TRUE(zero_repeat.pieces.empty());
  EXPECT_EQ(zero_repeat.nrepeat, 0);
}

TEST(LayoutPass, MergeAdjacentPieces) {
  Layout l = layout_of({piece(0, 4), piece(4, 4), piece(8, 2), piece(12, 4), piece(16, 4, {{2, 8}})});
  EXPECT_TRUE(run_layout_pass(pass::merge_adjacent_pieces, &l));
  ASSERT_EQ(l.pieces.size(), 3u);
  EXPECT_EQ(l.pieces[0], piece(0, 10));
  EXPECT_EQ(l.pieces[1], piece(12, 4));
  // Memory-adjacent but out of packed order: must stay apart.
  Layout reversed = layout_of({piece(4, 4), piece(0, 4)});
  EXPECT_FALSE(run_layout_pass(pass::merge_adjacent_pieces, &reversed));
}

TEST(LayoutPass, FoldPieceRuns) {
  Layout l = layout_of({piece(0, 4), piece(10, 4), piece(20, 4), piece(25, 8), piece(-5, 8)});
  EXPECT_TRUE(run_layout_pass(pass::fold_piece_runs, &l));
  ASSERT_EQ(l.pieces.size(), 2u);
  EXPECT_EQ(l.pieces[0], piece(0, 4, {{3, 10}}));
  EXPECT_EQ(l.pieces[1], piece(25, 8, {{2, -30}}));
  EXPECT_FALSE(run_layout_pass(pass::fold_piece_runs, &l));
}

TEST(LayoutPass, FoldPieceRunsJoinsNeighbourOfOuterDim) {
  Layout next = layout_of({piece(0, 4, {{3, 10}}), piece(30, 4)});
  EXPECT_TRUE(run_layout_pass(pass::fold_piece_runs, &next));
  ASSERT_EQ(next.pieces.size(), 1u);
  EXPECT_EQ(next.pieces[0], piece(0, 4, {{4, 10}}));

  Layout previous = layout_of({piece(-10, 4), piece(0, 4, {{3, 10}})});
  EXPECT_TRUE(run_layout_pass(pass::fold_piece_runs, &previous));
  ASSERT_EQ(previous.pieces.size(), 1u);
  EXPECT_EQ(previous.pieces[0], piece(-10, 4, {{4, 10}}));

  Layout other_shape = layout_of({piece(0, 4, {{3, 10}}), piece(30, 8)});
  EXPECT_FALSE(run_layout_pass(pass::fold_piece_runs, &other_shape));
}

TEST(LayoutPass, FoldSinglePieceRepeats) {
  Layout l = layout_of({piece(0, 4, {{2, 8}})}, {{3, 100}, {2, 1000}});
  EXPECT_TRUE(run_layout_pass(pass::fold_single_piece_repeats, &l));
  EXPECT_EQ(l.nrepeat, 0);
  EXPECT_EQ(l.pieces[0], piece(0, 4, {{2, 8}, {3, 100}, {2, 1000}}));

  Layout two = layout_of({piece(0, 4), piece(8, 4)}, {{3, 100}});
  EXPECT_FALSE(run_layout_pass(pass::fold_single_piece_repeats, &two));

  // Only as many repeats move as the piece has room for.
  std::vector<Dim> six;
  for (int d = 0; d < kMaxCanonicalDims - 1; ++d) six.push_back({2, 10 + 100 * d});
  Layout full = layout_of({piece(0, 4, six)}, {{3, 7}, {5, 9}});
  EXPECT_TRUE(run_layout_pass(pass::fold_single_piece_repeats, &full));
  EXPECT_EQ(full.pieces[0].ndims, kMaxCanonicalDims);
  ASSERT_EQ(full.nrepeat, 1);
  EXPECT_EQ(full.repeat[0], (Dim{5, 9}));
}

TEST(LayoutPass, MergeRepeatDims) {
  Layout l = layout_of({piece(0, 4), piece(8, 4)}, {{1, 5}, {2, 16}, {3, 32}});
  EXPECT_TRUE(run_layout_pass(pass::merge_repeat_dims, &l));
  ASSERT_EQ(l.nrepeat, 1);
  EXPECT_EQ(l.repeat[0], (Dim{6, 16}));
  EXPECT_FALSE(run_layout_pass(pass::merge_repeat_dims, &l));
}

// ---- canonicalize and the builders ----------------------------------------------------

TEST(Canonicalize, DerivedFields) {
  Layout l = layout_of({piece(8, 4), piece(0, 2, {{3, 16}})}, {{2, -100}});
  ASSERT_EQ(canonicalize(&l), GDDT_OK);
  expect_canonical(l);
  EXPECT_EQ(l.shape, Shape::kBlockList);
  EXPECT_EQ(l.group_bytes, 10);
  EXPECT_EQ(l.size, 20);
  EXPECT_EQ(l.true_lb, -100);
  EXPECT_EQ(l.true_ub, 34);
  EXPECT_EQ(l.alignment, 2u);
}

TEST(Canonicalize, RefusesMalformedAndOverflowingInput) {
  Layout negative_block = layout_of({piece(0, -4)});
  EXPECT_EQ(canonicalize(&negative_block), GDDT_ERR_INVALID_ARG);
  Layout negative_count = layout_of({piece(0, 4, {{-2, 8}})});
  EXPECT_EQ(canonicalize(&negative_count), GDDT_ERR_INVALID_ARG);
  Layout huge = layout_of({piece(0, std::int64_t{1} << 40, {{std::int64_t{1} << 30, 1}})});
  EXPECT_EQ(canonicalize(&huge), GDDT_ERR_UNSUPPORTED);
  Layout far = layout_of({piece(0, 1, {{std::int64_t{1} << 40, std::int64_t{1} << 40}})});
  EXPECT_EQ(canonicalize(&far), GDDT_ERR_UNSUPPORTED);
  std::vector<Dim> eight;
  for (int d = 0; d < kMaxDims; ++d) eight.push_back({2, 10 + 100 * d});
  Layout too_deep = layout_of({piece(0, 4, eight)});
  EXPECT_EQ(canonicalize(&too_deep), GDDT_ERR_UNSUPPORTED);
}

TEST(Builders, BlockAndDenseVector) {
  Layout block = make_block(16);
  expect_canonical(block);
  EXPECT_EQ(block.shape, Shape::kContiguous);
  EXPECT_EQ(block.extent, 16);
  EXPECT_EQ(block.alignment, 16u);

  Layout dense = repeated(make_block(4), 8, 4);
  expect_canonical(dense);
  EXPECT_EQ(dense.shape, Shape::kContiguous);
  EXPECT_EQ(dense.pieces[0].block, 32);

  Layout dense_vector = repeated(repeated(make_block(4), 2, 4), 5, 8);
  EXPECT_EQ(dense_vector.shape, Shape::kContiguous);
  EXPECT_EQ(dense_vector.size, 40);
}

TEST(Builders, StridedVectors) {
  Layout vector = repeated(make_block(4), 8, 8);
  expect_canonical(vector);
  EXPECT_EQ(vector.shape, Shape::kStrided);
  EXPECT_EQ(vector.pieces[0], piece(0, 4, {{8, 8}}));
  EXPECT_EQ(vector.extent, 60);

  Layout nested = repeated(repeated(repeated(make_block(4), 3, 8), 5, 100), 2, 1000);
  expect_canonical(nested);
  EXPECT_EQ(nested.shape, Shape::kStrided);
  EXPECT_EQ(nested.pieces[0], piece(0, 4, {{3, 8}, {5, 100}, {2, 1000}}));

  Layout negative = repeated(make_block(4), 4, -8);
  expect_canonical(negative);
  EXPECT_EQ(negative.true_lb, -24);
  EXPECT_EQ(negative.true_ub, 4);
  EXPECT_EQ(negative.lb, -24);
  EXPECT_EQ(negative.extent, 28);
}

TEST(Builders, ZeroCountsAreEmpty) {
  EXPECT_EQ(make_block(0).shape, Shape::kEmpty);
  Layout none = repeated(make_block(4), 0, 8);
  expect_canonical(none);
  EXPECT_EQ(none.shape, Shape::kEmpty);
  EXPECT_EQ(none.size, 0);
  Layout of_empty = repeated(none, 5, 8);
  EXPECT_EQ(of_empty.shape, Shape::kEmpty);
  Layout with_empty = concat({none, make_shifted(make_block(4), 12), none});
  EXPECT_EQ(with_empty.shape, Shape::kContiguous);
  EXPECT_EQ(with_empty.true_lb, 12);
  Layout out;
  EXPECT_EQ(make_repeat(make_block(4), -1, 8, &out), GDDT_ERR_INVALID_ARG);
}

TEST(Builders, StructWithGapsIsBlockList) {
  Layout s = concat({make_block(4), make_shifted(make_block(8), 8), make_shifted(make_block(2), 16)});
  expect_canonical(s);
  EXPECT_EQ(s.shape, Shape::kBlockList);
  ASSERT_EQ(s.pieces.size(), 2u);
  EXPECT_EQ(s.pieces[1], piece(8, 10));
  EXPECT_EQ(s.size, 14);
  EXPECT_EQ(s.extent, 18);
}

TEST(Builders, ResizedWithOverlap) {
  Layout overlapping = repeated(make_block(4), 3, 2);
  expect_canonical(overlapping);
  EXPECT_EQ(overlapping.shape, Shape::kStrided);
  EXPECT_EQ(overlapping.size, 12);
  EXPECT_EQ(overlapping.true_ub - overlapping.true_lb, 8);
  EXPECT_EQ(reference_bytes(overlapping), (Bytes{0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7}));
}

TEST(Builders, ShiftedMovesBoundsAndAlignment) {
  Layout s = make_shifted(repeated(make_block(8), 3, 16), -6);
  expect_canonical(s);
  EXPECT_EQ(s.true_lb, -6);
  EXPECT_EQ(s.lb, -6);
  EXPECT_EQ(s.alignment, 2u);
}

TEST(Builders, ConcatOfShiftedCopiesIsOneRepeat) {
  Layout two_pieces = concat({make_block(4), make_shifted(make_block(8), 8)});
  std::vector<Layout> parts;
  for (int i = 0; i < 5; ++i) parts.push_back(make_shifted(two_pieces, 100 * i + 40));
  Layout l = concat(parts);
  expect_canonical(l);
  EXPECT_EQ(l.pieces.size(), 2u);
  ASSERT_EQ(l.nrepeat, 1);
  EXPECT_EQ(l.repeat[0], (Dim{5, 100}));
  EXPECT_EQ(l.pieces[0].offset, 40);

  // A broken progression falls back to a piece list with the repeats expanded.
  parts.push_back(make_shifted(repeated(two_pieces, 2, 50), 1000));
  Layout broken = concat(parts);
  expect_canonical(broken);
  EXPECT_EQ(broken.nrepeat, 0);
  EXPECT_EQ(broken.pieces.size(), 14u);
}

TEST(Builders, RepeatOfMultiPieceAddsRepeatDim) {
  Layout two_pieces = concat({make_block(4), make_shifted(make_block(8), 8)});
  Layout r = repeated(repeated(two_pieces, 3, 32), 4, 96);
  expect_canonical(r);
  ASSERT_EQ(r.nrepeat, 1);  // the two repeats continue each other and merge
  EXPECT_EQ(r.repeat[0], (Dim{12, 32}));
}

TEST(Builders, DeepNestingKeepsOneDimensionFree) {
  Layout single = make_block(2);
  std::int64_t stride = 3;
  for (int level = 0; level < kMaxDims + 2; ++level) {
    single = repeated(single, 2, stride);
    stride = stride * 2 + 1;  // never continues the previous dimension
  }
  expect_canonical(single);
  EXPECT_EQ(single.pieces[0].ndims, kMaxCanonicalDims);
  EXPECT_EQ(single.nrepeat, kMaxDims + 2 - kMaxCanonicalDims);
  std::mt19937 rng(7);
  expect_windows_match(single, 2, &rng);

  Layout group = concat({make_block(4), make_shifted(make_block(4), 6)});
  stride = 11;
  for (int level = 0; level < kMaxDims + 2; ++level) {
    group = repeated(group, 2, stride);
    stride = stride * 2 + 1;
  }
  expect_canonical(group);
  EXPECT_EQ(group.size, 8 << (kMaxDims + 2));
  expect_windows_match(group, 1, &rng, 2);
}

TEST(Builders, PieceLimit) {
  Layout two_pieces = concat({make_block(4), make_shifted(make_block(8), 8)});
  Layout big = repeated(repeated(two_pieces, 3000, 1000), 3000, 10'000'000);
  ASSERT_EQ(big.nrepeat, 2);
  Layout out;
  EXPECT_EQ(make_concat({big, make_shifted(make_block(1), -1)}, &out), GDDT_ERR_UNSUPPORTED);
  EXPECT_EQ(make_repeat(make_block(std::int64_t{1} << 40), std::int64_t{1} << 30, 1, &out),
            GDDT_ERR_UNSUPPORTED);
}

TEST(Layout, SpanAndDescribe) {
  Layout l = repeated(make_block(4), 3, 8);  // true [0, 20)
  EXPECT_EQ(l.span_lb(4), 0);
  EXPECT_EQ(l.span_ub(4), 20 + 3 * 20);
  set_bounds(&l, 0, -32);
  EXPECT_EQ(l.span_lb(4), -96);
  EXPECT_EQ(l.span_ub(4), 20);
  EXPECT_NE(l.describe().find("strided"), std::string::npos);
  set_bounds(&l, 0, 6);
  EXPECT_EQ(l.alignment, 2u);
}

// ---- the walker -------------------------------------------------------------------------

TEST(ForEachRun, WindowsOfHandMadeLayouts) {
  std::mt19937 rng(1);
  std::vector<Layout> layouts = {
      layout_of({piece(0, 16)}),
      layout_of({piece(0, 4, {{3, 8}, {2, -100}})}),
      layout_of({piece(8, 4), piece(0, 2, {{3, 16}})}, {{2, -100}, {3, 7}}),
      layout_of({piece(0, 3, {{4, 0}})}),
  };
  for (Layout& l : layouts) {
    ASSERT_EQ(canonicalize(&l), GDDT_OK);
    for (std::int64_t extent : {std::int64_t{0}, std::int64_t{-40}, std::int64_t{123}}) {
      set_bounds(&l, 0, extent);
      for (std::int64_t count : {1, 3}) expect_windows_match(l, count, &rng);
    }
  }
}

// Random builder trees, each checked against a model typemap built from the same steps.
struct Modelled {
  Layout layout;
  Bytes bytes;
};

Modelled random_layout(std::mt19937* rng, int depth) {
  auto pick = [rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(*rng); };
  if (depth == 0 || pick(0, 4) == 0) {
    int bytes = pick(0, 3) == 0 ? 0 : pick(1, 6);
    Modelled leaf{make_block(bytes), {}};
    for (int b = 0; b < bytes; ++b) leaf.bytes.push_back(b);
    return leaf;
  }
  switch (pick(0, 2)) {
    case 0: {
      Modelled inner = random_layout(rng, depth - 1);
      int count = pick(0, 4);
      int extent = static_cast<int>(inner.layout.extent);
      int stride = pick(0, 2) == 0 ? extent : pick(-2 * extent - 3, 2 * extent + 3);
      Modelled out;
      EXPECT_EQ(make_repeat(inner.layout, count, stride, &out.layout), GDDT_OK);
      for (int i = 0; i < count; ++i) {
        for (std::int64_t b : inner.bytes) out.bytes.push_back(b + i * stride);
      }
      return out;
    }
    case 1: {
      Modelled inner = random_layout(rng, depth - 1);
      int delta = pick(-20, 20);
      Modelled out{make_shifted(inner.layout, delta), {}};
      for (std::int64_t b : inner.bytes) out.bytes.push_back(b + delta);
      return out;
    }
    default: {
      std::vector<Layout> parts;
      Modelled out;
      const bool progression = pick(0, 1) == 0;
      Modelled first = random_layout(rng, depth - 1);
      int step = pick(-30, 30);
      for (int i = 0, n = pick(1, 4); i < n; ++i) {
        Modelled part = progression ? Modelled{make_shifted(first.layout, i * step), {}}
                                    : random_layout(rng, depth - 1);
        if (progression) {
          for (std::int64_t b : first.bytes) part.bytes.push_back(b + i * step);
        }
        parts.push_back(part.layout);
        out.bytes.insert(out.bytes.end(), part.bytes.begin(), part.bytes.end());
      }
      EXPECT_EQ(make_concat(parts, &out.layout), GDDT_OK);
      return out;
    }
  }
}

TEST(ForEachRun, RandomBuilderTrees) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 3000; ++trial) {
    Modelled m = random_layout(&rng, 4);
    SCOPED_TRACE(trial);
    expect_canonical(m.layout);
    ASSERT_EQ(reference_bytes(m.layout), m.bytes) << m.layout.describe();
    if (m.layout.size > 0 && m.layout.size < 5000) expect_windows_match(m.layout, 2, &rng, 3);
    if (::testing::Test::HasFailure()) break;
  }
}

// A layout read back from its bytes describes the same typemap (what a peer process reads out of
// this one's buffer), and bytes that are not a whole layout are refused.
TEST(LayoutWire, RoundTripOfRandomBuilderTrees) {
  std::mt19937 rng(2026);
  for (int trial = 0; trial < 500; ++trial) {
    Modelled m = random_layout(&rng, 4);
    SCOPED_TRACE(trial);
    set_bounds(&m.layout, m.layout.lb - 8, m.layout.extent + 24);
    std::vector<char> wire;
    ASSERT_TRUE(encode_layout(m.layout, kMaxPieces, &wire));
    Layout back;
    ASSERT_EQ(decode_layout(wire.data(), wire.size(), &back), GDDT_OK);
    EXPECT_EQ(back.describe(), m.layout.describe());
    EXPECT_EQ(back.pieces, m.layout.pieces);
    EXPECT_EQ(back.piece_begin, m.layout.piece_begin);
    EXPECT_EQ(back.lb, m.layout.lb);
    EXPECT_EQ(back.extent, m.layout.extent);
    EXPECT_EQ(back.alignment, m.layout.alignment);
    EXPECT_EQ(reference_bytes(back, 3), reference_bytes(m.layout, 3));
    EXPECT_NE(decode_layout(wire.data(), wire.size() - 1, &back), GDDT_OK);
    if (!m.layout.pieces.empty()) {
      std::vector<char> capped;
      EXPECT_FALSE(encode_layout(m.layout, m.layout.pieces.size() - 1, &capped));
      EXPECT_TRUE(capped.empty());
    }
    if (::testing::Test::HasFailure()) break;
  }
}

}  // namespace
}  // namespace gddt::type
