// The standard's bounds on their own (bounds.hpp): combining placed children, markers,
// empty typemaps, the epsilon, and when the library's bounds are kept or replaced. Decoding
// real datatypes against both libraries is in test_decode.cpp.
#include <gtest/gtest.h>

#include "type/bounds.hpp"

namespace gddt::type {
namespace {

TypeBounds plain(std::int64_t lb, std::int64_t ub, std::uint32_t alignment = 1) {
  TypeBounds b;
  b.lb = lb;
  b.ub = ub;
  b.occupied = true;
  b.alignment = alignment;
  return b;
}

TEST(Bounds, RepeatSpanCoversNegativeSteps) {
  std::int64_t low, high;
  ASSERT_EQ(repeat_span(4, 5, &low, &high), GDDT_OK);
  EXPECT_EQ(low, 0);
  EXPECT_EQ(high, 15);
  ASSERT_EQ(repeat_span(4, -1, &low, &high), GDDT_OK);
  EXPECT_EQ(low, -3);
  EXPECT_EQ(high, 0);
  ASSERT_EQ(repeat_span(1, -100, &low, &high), GDDT_OK);
  EXPECT_EQ(low, 0);
  EXPECT_EQ(high, 0);
  EXPECT_EQ(repeat_span(3, INT64_MAX, &low, &high), GDDT_ERR_UNSUPPORTED);
}

TEST(Bounds, PlacedCopiesSpanTheirChildBounds) {
  // hvector(4, 3, -1 B, MPI_BYTE): copies at i * -1 + j, i < 4, j < 3.
  BoundsBuilder builder;
  ASSERT_EQ(builder.place(plain(0, 1), -3, 2), GDDT_OK);
  TypeBounds b = builder.finish();
  EXPECT_EQ(b.lb, -3);
  EXPECT_EQ(b.extent(), 6);
  EXPECT_TRUE(b.occupied);
  EXPECT_FALSE(b.marked);
}

TEST(Bounds, EmptyTypemapIsZeroAndAddsNothing) {
  const TypeBounds empty = BoundsBuilder().finish();
  EXPECT_FALSE(empty.occupied);
  EXPECT_EQ(empty.lb, 0);
  EXPECT_EQ(empty.ub, 0);
  BoundsBuilder builder;
  ASSERT_EQ(builder.place(plain(0, 4), 100, 100), GDDT_OK);
  ASSERT_EQ(builder.place(empty, -1000, 1000), GDDT_OK);
  const TypeBounds b = builder.finish();
  EXPECT_EQ(b.lb, 100);
  EXPECT_EQ(b.ub, 104);
}

TEST(Bounds, MarkersAloneBoundATypemapThatHasThem) {
  // struct {resized(MPI_INT, 4, 8) @0, MPI_INT @100}: MPI-4.0 5.1.7 takes lb and ub from the
  // markers only (MPICH 4.0 reports ub 104).
  const TypeBounds resized = resized_bounds(plain(0, 4, 4), 4, 8);
  BoundsBuilder builder;
  ASSERT_EQ(builder.place(resized, 0, 0), GDDT_OK);
  ASSERT_EQ(builder.place(plain(0, 4, 4), 100, 100), GDDT_OK);
  const TypeBounds b = builder.finish();
  EXPECT_TRUE(b.marked);
  EXPECT_EQ(b.lb, 4);
  EXPECT_EQ(b.ub, 12);
  EXPECT_EQ(b.max_padding, 0);

  // A resized empty typemap still has its markers.
  BoundsBuilder copies;
  ASSERT_EQ(copies.place(resized_bounds(TypeBounds{}, 4, 8), 0, 16), GDDT_OK);
  EXPECT_EQ(copies.finish().lb, 4);
  EXPECT_EQ(copies.finish().ub, 28);
}

TEST(Bounds, EpsilonRoundsUnmarkedExtentsToTheAlignment) {
  EXPECT_EQ(with_epsilon(plain(0, 25, 16)).ub, 32);
  EXPECT_EQ(with_epsilon(plain(-3, 3, 16)).ub, 13);
  EXPECT_EQ(with_epsilon(plain(0, 32, 16)).ub, 32);
  EXPECT_EQ(with_epsilon(resized_bounds(plain(0, 8, 8), 0, 9)).ub, 9);
  EXPECT_EQ(with_epsilon(TypeBounds{}).ub, 0);
}

TEST(Bounds, LibraryPaddingIsKept) {
  // hvector(2, 1, 9 B, MPI_DOUBLE): entries end at 17; Open MPI pads to 24, MPICH does not.
  BoundsBuilder builder;
  ASSERT_EQ(builder.place(plain(0, 8, 8), 0, 9), GDDT_OK);
  const TypeBounds standard = builder.finish();
  EXPECT_EQ(standard.max_padding, 7);
  bool replaced = true;
  EXPECT_EQ(reconcile(standard, 0, 24, &replaced).ub, 24);
  EXPECT_FALSE(replaced);
  EXPECT_EQ(reconcile(standard, 0, 17, &replaced).ub, 17);
  EXPECT_FALSE(replaced);
  EXPECT_TRUE(reconcile(standard, 0, 17, &replaced).library_agrees);
}

TEST(Bounds, PaddingAfterEveryBlockIsKept) {
  // hindexed_block(1, {-8, -19, -24, -18} B, MPI_2INT): Open MPI pads after each block it
  // adds and reports extent 28 where one epsilon would give 24.
  BoundsBuilder builder;
  for (std::int64_t at : {-8, -19, -24, -18}) ASSERT_EQ(builder.place(plain(0, 8, 4), at, at), GDDT_OK);
  const TypeBounds standard = builder.finish();
  EXPECT_EQ(standard.lb, -24);
  EXPECT_EQ(standard.extent(), 24);
  bool replaced = true;
  EXPECT_EQ(reconcile(standard, -24, 28, &replaced).extent(), 28);
  EXPECT_FALSE(replaced);
}

TEST(Bounds, LibraryMistakesAreReplaced) {
  bool replaced = false;
  // hvector(2, 1, -1 B, MPI_CHAR): Open MPI 4.1 reports lb 0.
  BoundsBuilder negative;
  ASSERT_EQ(negative.place(plain(0, 1), -1, 0), GDDT_OK);
  TypeBounds b = reconcile(negative.finish(), 0, 2, &replaced);
  EXPECT_TRUE(replaced);
  EXPECT_FALSE(b.library_agrees);
  EXPECT_EQ(b.lb, -1);
  EXPECT_EQ(b.extent(), 2);

  // More than padding.
  BoundsBuilder wide;
  ASSERT_EQ(wide.place(plain(0, 8, 8), 0, 9), GDDT_OK);
  b = reconcile(wide.finish(), 0, 32, &replaced);
  EXPECT_TRUE(replaced);
  EXPECT_EQ(b.extent(), 17);

  // Markers leave the library nothing to choose.
  const TypeBounds marked = resized_bounds(plain(0, 4, 4), 0, 9);
  b = reconcile(marked, 0, 12, &replaced);
  EXPECT_TRUE(replaced);
  EXPECT_EQ(b.extent(), 9);

  // Once a child's bounds were replaced, the library's padding of its parent rests on the
  // wrong extent: struct {MPI_LONG_DOUBLE @0, 2 x hvector(4, 3, -1 B, MPI_CHAR) @16}, where
  // Open MPI reports 48 from its hvector extent of 12 instead of 6.
  BoundsBuilder hvector;
  ASSERT_EQ(hvector.place(plain(0, 1), -3, 2), GDDT_OK);
  const TypeBounds wrong_child = reconcile(hvector.finish(), 0, 12, &replaced);
  ASSERT_TRUE(replaced);
  BoundsBuilder parent;
  ASSERT_EQ(parent.place(plain(0, 16, 16), 0, 0), GDDT_OK);
  ASSERT_EQ(parent.place(wrong_child, 16, 22), GDDT_OK);
  const TypeBounds standard = parent.finish();
  EXPECT_EQ(standard.extent(), 25);
  EXPECT_EQ(standard.max_padding, 0);
  b = reconcile(standard, 0, 48, &replaced);
  EXPECT_TRUE(replaced);
  EXPECT_EQ(with_epsilon(b).extent(), 32);
}

TEST(Bounds, ReplacedBoundsArePaddedTheLibrarysWay) {
  // struct {2 x hvector(2, 2, -1 B, MPI_C_DOUBLE_COMPLEX) @67, 2 x hindexed_block(3, {-24, -5}
  // B, MPI_DOUBLE) @49, 2 x MPI_LONG_INT @-64}, whose hvector Open MPI 4.1 gets wrong (lb 0,
  // extent 64): the children's bounds as padded by Open MPI, [-1, 39) and [-24, 24).
  BoundsBuilder builder;
  ASSERT_EQ(builder.place(plain(-1, 39, 8), 67, 107), GDDT_OK);
  ASSERT_EQ(builder.place(plain(-24, 24, 8), 49, 97), GDDT_OK);
  ASSERT_EQ(builder.place(plain(0, 16, 8), -64, -48), GDDT_OK);
  const TypeBounds standard = builder.finish();
  EXPECT_EQ(standard.lb, -64);
  EXPECT_EQ(standard.extent(), 210);
  // One epsilon at the end (MPICH's structs): 216. Open MPI rounds the extent so far up after
  // every block: [25, 146) becomes [25, 153) after the second block, so 224.
  EXPECT_EQ(with_epsilon(standard).extent(), 216);
  EXPECT_EQ(with_epsilon_after_every_block(standard).extent(), 224);
  // Padded once: a dup of the type, whose bounds are replaced too, keeps them.
  const TypeBounds padded = with_epsilon_after_every_block(standard);
  EXPECT_EQ(with_epsilon_after_every_block(padded).extent(), 224);
  // Markers leave nothing to pad.
  const TypeBounds marked = resized_bounds(standard, 0, 9);
  EXPECT_EQ(with_epsilon_after_every_block(marked).extent(), 9);
}

TEST(Bounds, NamedTypesAreAlignedLikeTheirCTypes) {
  EXPECT_EQ(library_bounds(MPI_CHAR, 0, 1).alignment, 1u);
  EXPECT_EQ(library_bounds(MPI_DOUBLE, 0, 8).alignment, 8u);
  EXPECT_EQ(library_bounds(MPI_LONG_DOUBLE, 0, sizeof(long double)).alignment, alignof(long double));
  EXPECT_EQ(library_bounds(MPI_C_DOUBLE_COMPLEX, 0, 16).alignment, alignof(double));
  EXPECT_EQ(library_bounds(MPI_FLOAT_INT, 0, 8).alignment, 4u);
  EXPECT_EQ(library_bounds(MPI_SHORT_INT, 0, 8).alignment, 4u);
  const TypeBounds b = library_bounds(MPI_INT, 0, 4);
  EXPECT_TRUE(b.occupied);
  EXPECT_FALSE(b.marked);
  EXPECT_TRUE(b.library_agrees);
}

}  // namespace
}  // namespace gddt::type
