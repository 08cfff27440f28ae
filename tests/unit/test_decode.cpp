// Decoding MPI datatypes: every constructor and nested combinations, each checked byte for
// byte against the library's own MPI_Pack (through PMPI_Pack, never gddt's), plus the sizes,
// bounds and canonical shapes; and the analysis cache.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <random>
#include <vector>

#include "type/datatype.hpp"
#include "typemap_reference.hpp"

namespace gddt::type {
namespace {

using testing::expect_canonical;

// A derived datatype, committed through the library, freed at scope exit.
class Type {
 public:
  explicit Type(MPI_Datatype handle) : handle_(handle) { PMPI_Type_commit(&handle_); }
  ~Type() { PMPI_Type_free(&handle_); }
  Type(const Type&) = delete;
  Type& operator=(const Type&) = delete;
  operator MPI_Datatype() const { return handle_; }

 private:
  MPI_Datatype handle_;
};

MPI_Datatype contiguous(int count, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_contiguous(count, old, &t);
  return t;
}
MPI_Datatype vector(int count, int length, int stride, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_vector(count, length, stride, old, &t);
  return t;
}
MPI_Datatype hvector(int count, int length, MPI_Aint stride, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_hvector(count, length, stride, old, &t);
  return t;
}
MPI_Datatype indexed(std::vector<int> lengths, std::vector<int> displacements, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_indexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(), old, &t);
  return t;
}
MPI_Datatype hindexed(std::vector<int> lengths, std::vector<MPI_Aint> displacements, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(),
                           old, &t);
  return t;
}
MPI_Datatype indexed_block(int length, std::vector<int> displacements, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_indexed_block(static_cast<int>(displacements.size()), length,
                                displacements.data(), old, &t);
  return t;
}
MPI_Datatype hindexed_block(int length, std::vector<MPI_Aint> displacements, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_hindexed_block(static_cast<int>(displacements.size()), length,
                                 displacements.data(), old, &t);
  return t;
}
MPI_Datatype structure(std::vector<int> lengths, std::vector<MPI_Aint> displacements,
                       std::vector<MPI_Datatype> types) {
  MPI_Datatype t;
  MPI_Type_create_struct(static_cast<int>(lengths.size()), lengths.data(), displacements.data(),
                         types.data(), &t);
  return t;
}
MPI_Datatype subarray(std::vector<int> sizes, std::vector<int> subsizes, std::vector<int> starts,
                      int order, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_subarray(static_cast<int>(sizes.size()), sizes.data(), subsizes.data(),
                           starts.data(), order, old, &t);
  return t;
}
MPI_Datatype darray(int size, int rank, std::vector<int> gsizes, std::vector<int> distribs,
                    std::vector<int> dargs, std::vector<int> psizes, int order, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_darray(size, rank, static_cast<int>(gsizes.size()), gsizes.data(),
                         distribs.data(), dargs.data(), psizes.data(), order, old, &t);
  return t;
}
MPI_Datatype resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent) {
  MPI_Datatype t;
  MPI_Type_create_resized(old, lb, extent, &t);
  return t;
}
MPI_Datatype dup(MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_dup(old, &t);
  return t;
}

// Typed bytes the library reads: random, so a wrong offset shows as wrong bytes.
struct TypedBuffer {
  TypedBuffer(const Layout& layout, int count) {
    const std::int64_t lo = count > 0 ? std::min<std::int64_t>(layout.span_lb(count), 0) : 0;
    const std::int64_t hi = count > 0 ? std::max<std::int64_t>(layout.span_ub(count), 1) : 1;
    bytes.resize(static_cast<std::size_t>(hi - lo));
    std::mt19937 rng(static_cast<unsigned>(hi - lo));
    for (unsigned char& b : bytes) b = static_cast<unsigned char>(rng());
    base = bytes.data() - lo;
  }
  std::vector<unsigned char> bytes;
  const unsigned char* base;
};

std::vector<unsigned char> pack_with_layout(const Layout& layout, int count,
                                            const unsigned char* base, std::int64_t offset,
                                            std::int64_t length) {
  std::vector<unsigned char> packed(static_cast<std::size_t>(length));
  for_each_run(layout, count, offset, length,
               [&](std::int64_t typed, std::int64_t at, std::int64_t bytes) {
                 std::memcpy(packed.data() + at, base + typed, static_cast<std::size_t>(bytes));
               });
  return packed;
}

// Decodes `datatype` and checks it against the library: size, bounds, and the packed bytes
// of `count` elements, whole and in random windows.
Layout expect_matches_mpi(MPI_Datatype datatype, int count = 3) {
  Layout layout;
  EXPECT_EQ(decode(datatype, &layout), GDDT_OK);
  SCOPED_TRACE(layout.describe());
  expect_canonical(layout);
  MPI_Count size, lb, extent;
  PMPI_Type_size_x(datatype, &size);
  PMPI_Type_get_extent_x(datatype, &lb, &extent);
  EXPECT_EQ(layout.size, size);
  EXPECT_EQ(layout.lb, lb);
  EXPECT_EQ(layout.extent, extent);

  TypedBuffer typed(layout, count);
  int capacity = 0, position = 0;
  PMPI_Pack_size(count, datatype, MPI_COMM_WORLD, &capacity);
  std::vector<unsigned char> expected(static_cast<std::size_t>(capacity) + 1);
  PMPI_Pack(typed.base, count, datatype, expected.data(), capacity, &position, MPI_COMM_WORLD);
  expected.resize(static_cast<std::size_t>(position));
  const std::int64_t total = layout.size * count;
  EXPECT_EQ(position, total);
  EXPECT_EQ(pack_with_layout(layout, count, typed.base, 0, total), expected);

  std::mt19937 rng(static_cast<unsigned>(total));
  for (int trial = 0; trial < 4 && total > 0; ++trial) {
    std::int64_t offset = std::uniform_int_distribution<std::int64_t>(0, total - 1)(rng);
    std::int64_t length = std::uniform_int_distribution<std::int64_t>(1, total - offset)(rng);
    std::vector<unsigned char> window(expected.begin() + offset, expected.begin() + offset + length);
    EXPECT_EQ(pack_with_layout(layout, count, typed.base, offset, length), window)
        << "window " << offset << "+" << length;
  }
  return layout;
}

// For a type whose one element the library packs wrongly (a library fault gddt does not copy):
// gddt's bounds must still be the library's, and `count` elements must pack like `count`
// elements of `equivalent`, the same typemap built so that the library packs it right, with
// the same bounds.
void expect_packs_like(MPI_Datatype datatype, MPI_Datatype equivalent, int count = 3) {
  MPI_Count lb, extent, equivalent_lb, equivalent_extent;
  PMPI_Type_get_extent_x(datatype, &lb, &extent);
  PMPI_Type_get_extent_x(equivalent, &equivalent_lb, &equivalent_extent);
  ASSERT_EQ(equivalent_lb, lb) << "the test's equivalent type is wrong";
  ASSERT_EQ(equivalent_extent, extent) << "the test's equivalent type is wrong";

  Layout layout;
  ASSERT_EQ(decode(datatype, &layout), GDDT_OK);
  SCOPED_TRACE(layout.describe());
  expect_canonical(layout);
  EXPECT_EQ(layout.lb, lb);
  EXPECT_EQ(layout.extent, extent);

  TypedBuffer typed(layout, count);
  int capacity = 0, position = 0;
  PMPI_Pack_size(count, equivalent, MPI_COMM_WORLD, &capacity);
  std::vector<unsigned char> expected(static_cast<std::size_t>(capacity) + 1);
  PMPI_Pack(typed.base, count, equivalent, expected.data(), capacity, &position, MPI_COMM_WORLD);
  expected.resize(static_cast<std::size_t>(position));
  EXPECT_EQ(pack_with_layout(layout, count, typed.base, 0, layout.size * count), expected);
}

// ---- named types ------------------------------------------------------------------------

TEST(Decode, NamedTypes) {
  for (MPI_Datatype named : {MPI_CHAR, MPI_BYTE, MPI_SHORT, MPI_INT, MPI_LONG_LONG, MPI_FLOAT,
                             MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_C_DOUBLE_COMPLEX}) {
    Layout l = expect_matches_mpi(named);
    EXPECT_EQ(l.shape, Shape::kContiguous);
  }
}

TEST(Decode, PairTypes) {
  for (MPI_Datatype pair : {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
                            MPI_LONG_DOUBLE_INT}) {
    expect_matches_mpi(pair);
  }
  EXPECT_EQ(expect_matches_mpi(MPI_SHORT_INT).shape, Shape::kBlockList);
}

TEST(Decode, NullIsInvalid) {
  Layout l;
  EXPECT_EQ(decode(MPI_DATATYPE_NULL, &l), GDDT_ERR_INVALID_TYPE);
}

// ---- one constructor at a time -------------------------------------------------------

TEST(Decode, Contiguous) {
  Type t(contiguous(5, MPI_INT));
  EXPECT_EQ(expect_matches_mpi(t).shape, Shape::kContiguous);
  Type none(contiguous(0, MPI_INT));
  EXPECT_EQ(expect_matches_mpi(none).shape, Shape::kEmpty);
}

TEST(Decode, Vector) {
  Type strided(vector(4, 1, 2, MPI_INT));
  Layout l = expect_matches_mpi(strided);
  EXPECT_EQ(l.shape, Shape::kStrided);
  EXPECT_EQ(l.pieces[0].ndims, 1);
  Type dense(vector(4, 2, 2, MPI_INT));
  EXPECT_EQ(expect_matches_mpi(dense).shape, Shape::kContiguous);
  Type backwards(vector(3, 2, -5, MPI_DOUBLE));
  EXPECT_EQ(expect_matches_mpi(backwards).shape, Shape::kStrided);
  Type empty(vector(0, 2, 3, MPI_INT));
  EXPECT_EQ(expect_matches_mpi(empty).shape, Shape::kEmpty);
}

TEST(Decode, Hvector) {
  Type t(hvector(3, 2, -40, MPI_DOUBLE));
  Layout l = expect_matches_mpi(t);
  EXPECT_EQ(l.shape, Shape::kStrided);
  EXPECT_LT(l.true_lb, 0);
  Type odd(hvector(5, 1, 7, MPI_SHORT));
  EXPECT_EQ(expect_matches_mpi(odd).alignment, 1u);
}

TEST(Decode, Indexed) {
  Type t(indexed({3, 1, 2}, {0, 5, 9}, MPI_INT));
  EXPECT_EQ(expect_matches_mpi(t).shape, Shape::kBlockList);
  Type regular(indexed({2, 2, 2, 2}, {0, 3, 6, 9}, MPI_INT));
  EXPECT_EQ(expect_matches_mpi(regular).shape, Shape::kStrided);
  Type with_empty(indexed({2, 0, 2}, {4, 0, 0}, MPI_INT));
  expect_matches_mpi(with_empty);
}

TEST(Decode, HindexedIrregularIsBlockList) {
  Type t(hindexed({1, 2, 1}, {0, 13, 40}, MPI_DOUBLE));
  EXPECT_EQ(expect_matches_mpi(t).shape, Shape::kBlockList);
}

TEST(Decode, IndexedBlock) {
  Type t(indexed_block(2, {0, 4, 8, 12}, MPI_INT));
  EXPECT_EQ(expect_matches_mpi(t).shape, Shape::kStrided);
  Type irregular(indexed_block(3, {7, 0, 20}, MPI_SHORT));
  EXPECT_EQ(expect_matches_mpi(irregular).shape, Shape::kBlockList);
}

TEST(Decode, HindexedBlockKeepsTypemapOrder) {
  Type t(hindexed_block(1, {24, 0, 8}, MPI_DOUBLE));
  Layout l = expect_matches_mpi(t);
  ASSERT_EQ(l.pieces.size(), 2u);
  EXPECT_EQ(l.pieces[0].offset, 24);
}

TEST(Decode, Struct) {
  Type gaps(structure({1, 1, 3}, {0, 8, 16}, {MPI_INT, MPI_DOUBLE, MPI_CHAR}));
  Layout l = expect_matches_mpi(gaps);
  EXPECT_EQ(l.shape, Shape::kBlockList);
  EXPECT_EQ(l.extent, 24);
  Type with_empty_field(structure({2, 0, 1}, {0, 100, 8}, {MPI_INT, MPI_DOUBLE, MPI_INT}));
  EXPECT_EQ(expect_matches_mpi(with_empty_field).shape, Shape::kContiguous);
}

TEST(Decode, Subarray) {
  // The x face of the interior of a 3-D array with one ghost layer: two strided dimensions.
  Type face(subarray({6, 7, 8}, {4, 5, 1}, {1, 1, 0}, MPI_ORDER_C, MPI_FLOAT));
  Layout l = expect_matches_mpi(face);
  EXPECT_EQ(l.shape, Shape::kStrided);
  EXPECT_EQ(l.pieces[0].ndims, 2);
  EXPECT_EQ(l.extent, 6 * 7 * 8 * 4);
  Type fortran(subarray({6, 7, 8}, {2, 5, 3}, {4, 1, 2}, MPI_ORDER_FORTRAN, MPI_DOUBLE));
  EXPECT_EQ(expect_matches_mpi(fortran).shape, Shape::kStrided);
  Type whole(subarray({3, 4}, {3, 4}, {0, 0}, MPI_ORDER_C, MPI_INT));
  EXPECT_EQ(expect_matches_mpi(whole).shape, Shape::kContiguous);
}

TEST(Decode, DarrayEveryRank) {
  const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE;
  const int D = MPI_DISTRIBUTE_DFLT_DARG;
  struct Case {
    std::vector<int> gsizes, distribs, dargs, psizes;
  };
  const std::vector<Case> cases = {
      {{8, 10}, {B, B}, {D, D}, {2, 2}},
      {{7, 10}, {B, C}, {D, D}, {2, 3}},
      {{9, 11}, {C, C}, {2, 3}, {2, 2}},
      {{5, 6, 7}, {C, N, B}, {D, D, 3}, {3, 1, 3}},
      {{13}, {C}, {4}, {3}},
      {{10, 4}, {B, N}, {4, D}, {3, 1}},
  };
  for (const Case& c : cases) {
    int procs = 1;
    for (int p : c.psizes) procs *= p;
    for (int order : {MPI_ORDER_C, MPI_ORDER_FORTRAN}) {
      for (int rank = 0; rank < procs; ++rank) {
        SCOPED_TRACE(::testing::Message() << "gsizes[0]=" << c.gsizes[0] << " rank " << rank
                                          << (order == MPI_ORDER_C ? " C" : " Fortran"));
        Type t(darray(procs, rank, c.gsizes, c.distribs, c.dargs, c.psizes, order, MPI_INT));
        expect_matches_mpi(t, 2);
      }
    }
  }
}

TEST(Decode, Resized) {
  Type overlapping(resized(MPI_INT, 0, 2));
  Type three(contiguous(3, overlapping));
  Layout l = expect_matches_mpi(three);
  EXPECT_EQ(l.size, 12);
  Type gapped(vector(3, 1, 4, MPI_INT));
  Type shifted(resized(gapped, -8, 64));
  expect_matches_mpi(shifted);
}

TEST(Decode, Dup) {
  Type original(vector(4, 1, 3, MPI_DOUBLE));
  Type t(dup(original));
  EXPECT_EQ(expect_matches_mpi(t).shape, Shape::kStrided);
}

// ---- nested combinations -------------------------------------------------------------------

TEST(Decode, VectorOfStructRepeatsTheGroup) {
  Type s(structure({1, 1}, {0, 8}, {MPI_INT, MPI_DOUBLE}));
  Type v(vector(5, 1, 3, s));
  Layout l = expect_matches_mpi(v);
  EXPECT_EQ(l.pieces.size(), 2u);
  EXPECT_EQ(l.nrepeat, 1);
}

TEST(Decode, IndexedBlockOfStructIsOneRepeat) {
  Type s(structure({1, 1}, {0, 8}, {MPI_SHORT, MPI_DOUBLE}));
  Type ib(indexed_block(1, {0, 2, 4, 6, 8}, s));
  Layout l = expect_matches_mpi(ib);
  EXPECT_EQ(l.pieces.size(), 2u);
  EXPECT_EQ(l.nrepeat, 1);
}

TEST(Decode, NestedCombinations) {
  Type s(structure({1, 2}, {4, 16}, {MPI_CHAR, MPI_FLOAT}));
  Type face(subarray({4, 5}, {2, 3}, {1, 1}, MPI_ORDER_C, MPI_DOUBLE));
  Type v(vector(2, 2, 5, MPI_INT));
  Type resized_struct(resized(s, -4, 40));
  Type dist(darray(3, 1, {7, 5}, {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
                   {2, MPI_DISTRIBUTE_DFLT_DARG}, {3, 1}, MPI_ORDER_C, MPI_SHORT));

  // Open MPI bounds this struct by the subarray's markers alone (extent 160), MPICH 4.0 by the
  // plain members too (extent 1024): gddt follows either.
  Type struct_of_mixed(structure({1, 2, 1}, {0, 400, 1000}, {face, v, s}));
  expect_matches_mpi(struct_of_mixed);
  Type hvector_of_resized(hvector(3, 2, 100, resized_struct));
  expect_matches_mpi(hvector_of_resized);
  Type contiguous_of_darray(contiguous(2, dist));
  expect_matches_mpi(contiguous_of_darray);
  Type subarray_of_struct(subarray({3, 4}, {2, 2}, {1, 2}, MPI_ORDER_FORTRAN, s));
  expect_matches_mpi(subarray_of_struct);
  Type hindexed_of_vector(hindexed({1, 2, 1}, {0, 77, -300}, v));
  expect_matches_mpi(hindexed_of_vector);
  Type indexed_of_subarray(indexed({1, 1}, {0, 3}, face));
  expect_matches_mpi(indexed_of_subarray);
  Type dup_of_struct(dup(struct_of_mixed));
  expect_matches_mpi(dup_of_struct);
}

TEST(Decode, DeepNesting) {
  MPI_Datatype t = MPI_INT;
  std::vector<MPI_Datatype> built;
  for (int level = 0; level < 11; ++level) {
    MPI_Datatype next = vector(2, 1, level % 2 ? 3 : 2, t);
    built.push_back(next);
    t = next;
  }
  PMPI_Type_commit(&t);
  expect_matches_mpi(t, 2);
  for (MPI_Datatype& b : built) PMPI_Type_free(&b);
}

TEST(Decode, ManyIrregularBlocks) {
  std::mt19937 rng(5);
  std::vector<int> lengths(20000);
  std::vector<MPI_Aint> displacements(lengths.size());
  MPI_Aint at = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    lengths[i] = 1 + static_cast<int>(rng() % 3);
    displacements[i] = at;
    at += 4 * lengths[i] + 4 * static_cast<MPI_Aint>(1 + rng() % 5);
  }
  Type t(hindexed(lengths, displacements, MPI_INT));
  EXPECT_EQ(expect_matches_mpi(t, 1).shape, Shape::kBlockList);
}

#if MPI_VERSION >= 4
// Types built by MPI-4's large-count constructors, which the library describes only through
// the _c queries (MPICH 4 aborts on the int ones), each decoded and packed like the library
// packs it; nested too, and one whose count does not fit an int is left to the library.
TEST(Decode, LargeCountConstructors) {
  const MPI_Count two = 2, three = 3;
  std::vector<MPI_Datatype> made(12, MPI_DATATYPE_NULL);
  MPI_Type_contiguous_c(5, MPI_INT, &made[0]);
  MPI_Type_vector_c(3, 2, -4, MPI_INT, &made[1]);
  MPI_Type_create_hvector_c(3, 2, 40, MPI_SHORT, &made[2]);
  {
    const MPI_Count lengths[] = {1, 2}, displacements[] = {5, -2};
    MPI_Type_indexed_c(2, lengths, displacements, MPI_INT, &made[3]);
  }
  {
    const MPI_Count lengths[] = {1, 2}, displacements[] = {0, 20};
    MPI_Type_create_hindexed_c(2, lengths, displacements, MPI_DOUBLE, &made[4]);
  }
  {
    const MPI_Count displacements[] = {0, 5, 9};
    MPI_Type_create_indexed_block_c(3, two, displacements, MPI_INT, &made[5]);
  }
  {
    const MPI_Count displacements[] = {0, 50, 90};
    MPI_Type_create_hindexed_block_c(3, two, displacements, MPI_INT, &made[6]);
  }
  {
    const MPI_Count lengths[] = {1, 2}, displacements[] = {0, 8};
    MPI_Datatype types[] = {MPI_INT, made[1]};
    MPI_Type_create_struct_c(2, lengths, displacements, types, &made[7]);
  }
  {
    const MPI_Count sizes[] = {4, 5}, subsizes[] = {2, 3}, starts[] = {1, 2};
    MPI_Type_create_subarray_c(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &made[8]);
  }
  {
    const MPI_Count sizes[] = {8, 6};
    int distributions[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int arguments[] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, processes[] = {1, 1};
    MPI_Type_create_darray_c(1, 0, 2, sizes, distributions, arguments, processes, MPI_ORDER_C, MPI_INT, &made[9]);
  }
  MPI_Type_create_resized_c(made[3], -4, 36, &made[10]);
  MPI_Type_vector_c(three, 1, 3, made[7], &made[11]);
  for (MPI_Datatype& handle : made) {
    PMPI_Type_commit(&handle);
    expect_matches_mpi(handle);
  }
  MPI_Datatype beyond_int = MPI_DATATYPE_NULL;
  MPI_Type_contiguous_c(MPI_Count{1} << 32, MPI_BYTE, &beyond_int);
  PMPI_Type_commit(&beyond_int);
  Layout layout;
  EXPECT_EQ(decode(beyond_int, &layout), GDDT_ERR_UNSUPPORTED);
  PMPI_Type_free(&beyond_int);
  for (MPI_Datatype& handle : made) PMPI_Type_free(&handle);
}
#endif

// ---- bounds: the library's, of every type and every type inside it ------------------------
// Where a library's bounds depart from the standard's rules, they are still what it packs by
// and what its users index by: gddt takes them (each check below compares with the library).

TEST(DecodeBounds, EmptyMembersOfAStruct) {
  // The reproducer of an independent fuzzer: both Open MPI and MPICH report lb 0, extent 24
  // (the empty member at 0 counts), where the standard's rules give lb 3.
  Type nothing(contiguous(0, MPI_CHAR));
  Type pair(contiguous(1, MPI_DOUBLE_INT));
  Type reproducer(structure({1, 1}, {0, 3}, {nothing, pair}));
  Layout l = expect_matches_mpi(reproducer, 4);
  MPI_Count lb, extent;
  PMPI_Type_get_extent_x(reproducer, &lb, &extent);
  EXPECT_EQ(l.lb, lb);
  EXPECT_EQ(l.extent, extent);
  for (int first = 0; first <= 16; first += 2) {
    for (int second = 0; second <= 24; second += 3) {
      Type both(structure({1, 1}, {first, second}, {nothing, pair}));
      expect_matches_mpi(both, 4);
    }
  }
}

TEST(DecodeBounds, ZeroCountEntries) {
  Type unused_field(structure({1, 0}, {0, 100}, {MPI_INT, MPI_DOUBLE}));
  expect_matches_mpi(unused_field);
  Type empty_block(indexed({2, 0}, {0, 7}, MPI_INT));
  expect_matches_mpi(empty_block);
  Type dist(darray(3, 0, {4}, {MPI_DISTRIBUTE_BLOCK}, {2}, {3}, MPI_ORDER_C, MPI_FLOAT));
  Type mixed(structure({1, 2, 0, 0}, {0, 16, 28, 32}, {MPI_LONG_DOUBLE, MPI_CHAR, MPI_FLOAT_INT, dist}));
  expect_matches_mpi(mixed, 2);
}

TEST(DecodeBounds, EmptyTypemaps) {
  Type none(contiguous(0, MPI_INT));
  expect_matches_mpi(none);
  Type shifted_int(resized(MPI_INT, 4, 8));
  Type no_copies(contiguous(0, shifted_int));
  expect_matches_mpi(no_copies);
  Type empty_resized(resized(none, 4, 8));
  expect_matches_mpi(empty_resized);
  Type three(contiguous(3, empty_resized));
  expect_matches_mpi(three);
}

TEST(DecodeBounds, MarkersBesidePlainEntries) {
  Type shifted_int(resized(MPI_INT, 4, 8));
  Type marker_first(structure({1, 1}, {0, 100}, {shifted_int, MPI_INT}));
  expect_matches_mpi(marker_first, 2);
  Type marker_last(structure({1, 1}, {0, 100}, {MPI_DOUBLE, shifted_int}));
  expect_matches_mpi(marker_last, 2);
  const int D = MPI_DISTRIBUTE_DFLT_DARG;
  Type dist(darray(2, 1, {4}, {MPI_DISTRIBUTE_BLOCK}, {D}, {2}, MPI_ORDER_C, MPI_INT));
  Type one(structure({1}, {28}, {dist}));
  expect_matches_mpi(one, 2);
  Type with_double(structure({1, 1}, {0, 8}, {MPI_DOUBLE, dist}));
  expect_matches_mpi(with_double, 2);
}

TEST(DecodeBounds, Padding) {
  Type odd_stride(hvector(2, 1, 9, MPI_DOUBLE));
  expect_matches_mpi(odd_stride);
  Type padded(structure({1, 1}, {0, 8}, {MPI_DOUBLE, MPI_CHAR}));
  expect_matches_mpi(padded);
  Type unordered(hindexed_block(1, {-8, -19, -24, -18}, MPI_2INT));
  expect_matches_mpi(unordered);
}

TEST(DecodeBounds, NegativeStrides) {
  // Open MPI 4.1 packs an hvector of stride -1 byte as if it were contiguous, reading outside
  // the type; gddt packs its typemap, stepping by the library's extent.
  Type back(hvector(2, 1, -1, MPI_CHAR));
  MPI_Aint lb, extent;
  PMPI_Type_get_extent(back, &lb, &extent);
  Type back_as_hindexed(resized(hindexed({1, 1}, {0, -1}, MPI_CHAR), lb, extent));
  expect_packs_like(back, back_as_hindexed);

  Type inner(hvector(4, 3, -1, MPI_BYTE));
  PMPI_Type_get_extent(inner, &lb, &extent);
  Type inner_as_hindexed(resized(hindexed({3, 3, 3, 3}, {0, -1, -2, -3}, MPI_BYTE), lb, extent));
  expect_packs_like(inner, inner_as_hindexed);
  Type outer(hvector(4, 2, 5, inner));
  Type outer_as_hvector(hvector(4, 2, 5, inner_as_hindexed));
  expect_packs_like(outer, outer_as_hvector, 2);
  Type minus_two(hvector(3, 2, -2, MPI_INT));
  expect_matches_mpi(minus_two);
}

TEST(DecodeBounds, ImplausibleBoundsAreRefused) {
  // Bounds 2^44 bytes from every byte of the type, as an earlier fuzzer recorded from Open MPI
  // 4.1 for darrays below a struct: gddt refuses the type rather than step by such an extent;
  // memory it does not serve still goes to the library.
  Type far(resized(MPI_INT, MPI_Aint{1} << 44, 8));
  Layout layout;
  EXPECT_EQ(decode(far, &layout), GDDT_ERR_UNSUPPORTED);
  Type near(resized(MPI_INT, -(MPI_Aint{1} << 20), MPI_Aint{1} << 21));
  expect_matches_mpi(near, 1);
}

// ---- the cache ----------------------------------------------------------------------------

TEST(Cache, CommitLookupFree) {
  MPI_Datatype t = vector(3, 1, 2, MPI_INT);
  EXPECT_FALSE(is_known_committed(t));
  PMPI_Type_commit(&t);
  // Committing analyses nothing: the first lookup does, the second finds it.
  const CacheStats before = cache_stats();
  on_commit(t);
  EXPECT_TRUE(is_known_committed(t));
  EXPECT_FALSE(is_freed(t));
  EXPECT_EQ(cache_stats().entries, before.entries);
  EXPECT_EQ(cache_stats().misses, before.misses);
  LayoutPtr first, second;
  ASSERT_EQ(lookup(t, &first), GDDT_OK);
  EXPECT_EQ(cache_stats().misses, before.misses + 1);
  EXPECT_EQ(cache_stats().entries, before.entries + 1);
  ASSERT_EQ(lookup(t, &second), GDDT_OK);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first->size, 12);
  EXPECT_EQ(cache_stats().hits, before.hits + 1);

  // Freed and committed again (as when a new type reuses the handle): analysed afresh.
  on_free(t);
  EXPECT_TRUE(is_freed(t));
  EXPECT_FALSE(is_known_committed(t));
  LayoutPtr stale;
  EXPECT_EQ(lookup(t, &stale), GDDT_ERR_INVALID_TYPE);
  on_commit(t);
  EXPECT_FALSE(is_freed(t));
  LayoutPtr fresh;
  ASSERT_EQ(lookup(t, &fresh), GDDT_OK);
  EXPECT_NE(fresh, first);
  EXPECT_EQ(fresh->size, 12);

  on_free(t);
  PMPI_Type_free(&t);
  MPI_Datatype reused = contiguous(7, MPI_DOUBLE);
  PMPI_Type_commit(&reused);
  on_commit(reused);
  LayoutPtr now;
  ASSERT_EQ(lookup(reused, &now), GDDT_OK);
  EXPECT_EQ(now->size, 56);  // whether or not the library handed back the same handle
  on_free(reused);
  PMPI_Type_free(&reused);
}

// A reference MPI_Type_get_contents returned and the program freed leaves the type alive under
// its handle (MPICH returns the type's own handle there): freed only with the last reference.
TEST(Cache, FreedOnlyWithTheLastReference) {
  MPI_Datatype t = vector(2, 1, 3, MPI_DOUBLE);
  PMPI_Type_commit(&t);
  on_commit(t);
  on_reference(t);
  on_reference(t);
  on_free(t);
  on_free(t);
  EXPECT_FALSE(is_freed(t));
  EXPECT_TRUE(is_known_committed(t));
  LayoutPtr layout;
  ASSERT_EQ(lookup(t, &layout), GDDT_OK);
  EXPECT_EQ(layout->size, 16);
  on_free(t);
  EXPECT_TRUE(is_freed(t));
  EXPECT_EQ(lookup(t, &layout), GDDT_ERR_INVALID_TYPE);
  PMPI_Type_free(&t);
}

// A constructor that returns a handle gddt saw freed made a new type: neither freed nor
// committed, and nothing analysed under it survives.
TEST(Cache, MadeForgetsTheFreedType) {
  MPI_Datatype t = vector(2, 1, 3, MPI_DOUBLE);
  PMPI_Type_commit(&t);
  on_commit(t);
  LayoutPtr layout;
  ASSERT_EQ(lookup(t, &layout), GDDT_OK);
  on_free(t);
  ASSERT_TRUE(is_freed(t));
  on_made(t);  // as if the library had handed the handle to a new type
  EXPECT_FALSE(is_freed(t));
  EXPECT_FALSE(is_known_committed(t));
  const CacheStats before = cache_stats();
  on_commit(t);
  ASSERT_EQ(lookup(t, &layout), GDDT_OK);
  EXPECT_EQ(cache_stats().misses, before.misses + 1);  // analysed afresh
  on_free(t);
  PMPI_Type_free(&t);
}

TEST(Cache, NamedAndUncommittedTypes) {
  clear_cache();  // forget handles earlier tests freed: the library may hand them out again
  EXPECT_TRUE(is_known_committed(MPI_DOUBLE));
  EXPECT_FALSE(is_known_committed(MPI_DATATYPE_NULL));
  LayoutPtr l;
  EXPECT_EQ(lookup(MPI_DATATYPE_NULL, &l), GDDT_ERR_INVALID_TYPE);
  const CacheStats before = cache_stats();
  ASSERT_EQ(lookup(MPI_DOUBLE, &l), GDDT_OK);
  EXPECT_EQ(l->size, 8);
  EXPECT_GE(cache_stats().misses + cache_stats().hits, before.misses + before.hits + 1);

  // A type used before gddt saw it committed is analysed lazily.
  Type late(hvector(2, 1, 24, MPI_DOUBLE));
  ASSERT_EQ(lookup(late, &l), GDDT_OK);
  EXPECT_EQ(l->shape, Shape::kStrided);
  on_free(late);
}

TEST(Cache, ClearDropsEverything) {
  LayoutPtr l;
  ASSERT_EQ(lookup(MPI_INT, &l), GDDT_OK);
  EXPECT_GT(cache_stats().entries, 0u);
  clear_cache();
  EXPECT_EQ(cache_stats().entries, 0u);
  EXPECT_EQ(l->size, 4);  // layouts handed out stay valid
}

}  // namespace
}  // namespace gddt::type
