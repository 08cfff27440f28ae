// The checks of a decoded type against the library's own MPI_Pack (decode_helpers.hpp).
#include "decode_helpers.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <random>
#include <vector>

#include "type/datatype.hpp"
#include "typemap_reference.hpp"

namespace gddt::type::testing {
namespace {

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

}  // namespace

Layout expect_matches_mpi(MPI_Datatype datatype, int count) {
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

void expect_packs_like(MPI_Datatype datatype, MPI_Datatype equivalent, int count) {
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

}  // namespace gddt::type::testing
