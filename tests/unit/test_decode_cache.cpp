// The cache of datatype analyses: entries made at commit and lookup, dropped with the last
// reference to a type, with a made type, or all at once.
#include <gtest/gtest.h>
#include <mpi.h>

#include "decode_helpers.hpp"
#include "type/datatype.hpp"

namespace gddt::type::testing {
namespace {

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

}  // namespace gddt::type::testing
