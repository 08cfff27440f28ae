// The layout kernels walk (gddt_device_type_create's copy of gddt's canonical
// layout, and the walker of gddt/gddt_device_core.h) against the MPI library's
// own MPI_Pack and MPI_Unpack over random nested datatypes: packed bytes equal,
// output past them untouched, unpacking writes the typed bytes and leaves the
// gaps alone. Host memory, so it runs where no GPU is.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/gpu.hpp"
#include "fuzz_random.hpp"
#include "fuzz_reference.hpp"
#include "gddt/gddt_device_core.h"

namespace {

using gddt_test::fuzz::Rng;

TEST(DeviceWalker, MatchesMpiPackOnRandomTypes) {
  if (gddt::gpu::available()) GTEST_SKIP() << "layouts live in device memory where a GPU is usable";
  gddt_test::fuzz::TypeLimits limits;
  limits.max_depth = 3;
  limits.max_span = 64 * 1024;
  constexpr int kTypes = 300;
  std::string version;
  const gddt_test::fuzz::MpiLibrary library = gddt_test::fuzz::detect_mpi_library(&version);
  int checked = 0;
  for (int index = 0; index < kTypes; ++index) {
    Rng rng(gddt_test::fuzz::type_seed(20261126, index));
    const gddt_test::fuzz::TypeNode node = gddt_test::fuzz::random_type(&rng, limits, 0);
    // The library's own pack engine has known bugs (fuzz_reference.hpp): no
    // reference there.
    if (gddt_test::fuzz::reference_unusable(library, node) != nullptr ||
        gddt_test::fuzz::reference_fault_explanation(library, node) != nullptr)
      continue;
    MPI_Datatype type;
    gddt_test::fuzz::LibraryBoundsMap bounds;
    if (gddt_test::fuzz::build_datatype(node, 0, &type, &bounds) != MPI_SUCCESS) continue;
    gddt_test::fuzz::Typemap map;
    const bool unpack_usable =
        gddt_test::fuzz::expand_typemap(node, gddt_test::fuzz::padding_rule(library), limits.max_runs, &map, &bounds) &&
        gddt_test::fuzz::reference_unpack_unusable(library, map) == nullptr;
    MPI_Type_commit(&type);
    SCOPED_TRACE(gddt_test::fuzz::describe(node));
    const int count = static_cast<int>(rng.between(1, 3));
    MPI_Aint lb, extent, true_lb, true_extent;
    int size = 0;
    MPI_Type_get_extent(type, &lb, &extent);
    MPI_Type_get_true_extent(type, &true_lb, &true_extent);
    MPI_Type_size(type, &size);
    // Every element's bytes, for any sign of the extent.
    const MPI_Aint low = true_lb + std::min<MPI_Aint>(0, (count - 1) * extent);
    const MPI_Aint high = true_lb + true_extent + std::max<MPI_Aint>(0, (count - 1) * extent);
    if (size == 0) {  // no bytes (the library's true bounds of an empty type are arbitrary)
      if (node.constructor != gddt_test::fuzz::Constructor::kNamed) MPI_Type_free(&type);
      continue;
    }
    gddt_device_type_t device{};
    ASSERT_EQ(gddt_device_type_create(type, &device), MPI_SUCCESS);
    std::vector<unsigned char> typed(static_cast<std::size_t>(high - low) + 32);
    for (std::size_t i = 0; i < typed.size(); ++i) typed[i] = static_cast<unsigned char>(rng.next());
    unsigned char *origin = typed.data() + 16 - low;

    int pack_size = 0, position = 0;
    MPI_Pack_size(count, type, MPI_COMM_WORLD, &pack_size);
    std::vector<unsigned char> reference(pack_size + 16, 0xEE);
    ASSERT_EQ(MPI_Pack(origin, count, type, reference.data(), pack_size, &position, MPI_COMM_WORLD), MPI_SUCCESS);
    const int bytes = position;

    // Pack by one lane and by three (a warp's turns), into poisoned output.
    for (int lanes : {1, 3}) {
      std::vector<unsigned char> packed(pack_size + 16, 0xEE);
      for (int lane = 0; lane < lanes; ++lane)
        gddt::device::move_window(*device.layout, origin, packed.data(), bytes, true, lane, lanes);
      ASSERT_EQ(std::memcmp(packed.data(), reference.data(), packed.size()), 0) << lanes << " lane(s)";
    }

    // Unpack into poisoned buffers: the library's and the walker's must agree
    // byte for byte.
    if (unpack_usable) {
      std::vector<unsigned char> mine(typed.size(), 0xEE), theirs(typed.size(), 0xEE);
      position = 0;
      ASSERT_EQ(MPI_Unpack(reference.data(), bytes, &position, theirs.data() + 16 - low, count, type, MPI_COMM_WORLD),
                MPI_SUCCESS);
      for (int lanes : {1, 3}) {
        std::fill(mine.begin(), mine.end(), 0xEE);
        for (int lane = 0; lane < lanes; ++lane)
          gddt::device::move_window(*device.layout, mine.data() + 16 - low, reference.data(), bytes, false, lane,
                                    lanes);
        ASSERT_EQ(mine, theirs) << lanes << " lane(s)";
      }
    }

    ASSERT_EQ(gddt_device_type_free(&device), MPI_SUCCESS);
    EXPECT_EQ(device.layout, nullptr);
    if (node.constructor != gddt_test::fuzz::Constructor::kNamed) MPI_Type_free(&type);
    ++checked;
  }
  EXPECT_GT(checked, kTypes / 2);
}

// An element over 4 GiB makes the walker divide in 64 bits (smaller ones take 32-bit divisions,
// which the test above covers): one piece of 8-byte blocks, 16 of them 24 bytes apart, repeated
// 2^30 times in place (stride 0), so that packed byte p sits at p % 8 + (p / 8 % 16) * 24.
TEST(DeviceWalker, ElementsOver4GiBDivideIn64Bits) {
  gddt_device_layout_t l{};
  l.npieces = 1;
  l.width = 8;
  l.pieces[0].block = 8;
  l.pieces[0].ndims = 2;
  l.pieces[0].dims[0] = {16, 24};
  l.pieces[0].dims[1] = {int64_t{1} << 30, 0};
  l.size = l.group_bytes = l.extent = 8 * 16 * (int64_t{1} << 30);
  ASSERT_GT(l.size, int64_t{UINT32_MAX});
  std::vector<unsigned char> typed(16 * 24);
  for (std::size_t i = 0; i < typed.size(); ++i) typed[i] = static_cast<unsigned char>(i * 13 + 5);
  auto expected_at = [](int64_t p) { return p % 8 + (p / 8 % 16) * 24; };
  const int64_t bytes = 32 * 1024 + 5;  // whole rounds, a leftover word and a partial one
  for (int lanes : {1, 3}) {
    std::vector<unsigned char> packed(static_cast<std::size_t>(bytes) + 16, 0xEE);
    for (int lane = 0; lane < lanes; ++lane)
      gddt::device::move_window(l, typed.data(), packed.data(), bytes, true, lane, lanes);
    for (int64_t p = 0; p < bytes; ++p)
      ASSERT_EQ(packed[static_cast<std::size_t>(p)], typed[static_cast<std::size_t>(expected_at(p))])
          << lanes << " lane(s), packed byte " << p;
    for (std::size_t p = static_cast<std::size_t>(bytes); p < packed.size(); ++p) ASSERT_EQ(packed[p], 0xEE);
  }
  // Unpacking one pass over the 16 blocks writes each typed byte once; the gaps stay poisoned.
  std::vector<unsigned char> source(128), out(typed.size(), 0xEE);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i + 1);
  for (int lane = 0; lane < 3; ++lane) gddt::device::move_window(l, out.data(), source.data(), 128, false, lane, 3);
  for (std::size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(out[i], i % 24 < 8 ? source[i / 24 * 8 + i % 24] : 0xEE) << "typed byte " << i;
}

}  // namespace
