// The piece tables of block-list layouts (pack/cuda/piece_tables.cu) on a GPU: a table's upload is
// queued on the stream of its first use, with no host wait, in memory of the device pool that the
// table of a freed layout held before. A use on another stream, or by the resident kernel, before
// that upload has landed must still read the new table, never the stale one: each case packs and
// unpacks byte for byte as the host walk does, poisoned packed bytes and typed holes included.
// Exits 77 (skipped) without a usable GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/gpu.hpp"
#include "memory_buffer.hpp"
#include "pack/engine.hpp"
#include "random_cases.hpp"

namespace gddt {
namespace {

using gddt_test::Buffer;
using gddt_test::MemoryKind;

const pack::Backend& cuda() { return pack::backend_at(pack::kCudaSlot); }

constexpr unsigned char kPackedPoison = 0x5a;

// Blocks of 8 to 64 bytes with gaps, `pieces` of them, in an order of their own: two lists of one
// seed share nothing but the size of their tables.
type::Layout scattered_list(std::uint64_t seed, int pieces) {
  std::mt19937_64 rng(seed);
  std::vector<type::Layout> blocks;
  std::int64_t at = 0;
  for (int i = 0; i < pieces; ++i) {
    const std::int64_t bytes = 8 * (1 + static_cast<std::int64_t>(rng() % 8));
    blocks.push_back(type::make_shifted(type::make_block(bytes), at));
    at += bytes + 8 * (1 + static_cast<std::int64_t>(rng() % 4));
  }
  type::Layout list;
  EXPECT_EQ(type::make_concat(blocks, &list), GDDT_OK);
  return list;
}

// A device stream kept busy for a while, so that what is queued on it next waits.
void keep_busy(cudaStream_t stream, Buffer* ballast) {
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(cudaMemsetAsync(ballast->data(), i, ballast->size(), stream), cudaSuccess);
}

class PieceTables : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaStreamCreateWithFlags(&first_, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&second_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    cudaStreamDestroy(first_);
    cudaStreamDestroy(second_);
  }

  // Packs then unpacks `count` elements of `list` on `stream` (the resident kernel where
  // `resident`), checked against the host walk.
  void check(const type::Layout& list, std::int64_t count, cudaStream_t stream, bool resident, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const testing::Span span = testing::typed_span(list, count);
    const std::int64_t stream_bytes = list.size * count;
    const pack::Window w{&list, count, 0, stream_bytes};
    std::vector<char> typed_host(static_cast<std::size_t>(span.bytes)), packed_host(static_cast<std::size_t>(stream_bytes));
    testing::fill_random(&typed_host, &rng);
    testing::fill_random(&packed_host, &rng);
    Buffer typed(MemoryKind::kDevice, typed_host.size()), packed(MemoryKind::kDevice, packed_host.size() + 64);
    typed.upload(typed_host.data(), typed_host.size());
    packed.fill(kPackedPoison);
    bool served = false;
    if (resident) {
      ASSERT_EQ(cuda().pack_now(w, typed.data(), packed.data(), pack::Ordering::kLegacyStreamIdle, {}, &served), GDDT_OK);
    }
    if (!served) ASSERT_EQ(cuda().pack(w, typed.data(), packed.data(), stream), GDDT_OK);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    std::vector<char> got(packed.size()), expected(packed.size(), static_cast<char>(kPackedPoison));
    packed.download(got.data(), got.size());
    testing::reference_move<true>(w, typed_host.data(), expected.data());
    EXPECT_TRUE(got == expected) << "pack, " << (resident ? "resident kernel" : "stream");

    packed.upload(packed_host.data(), packed_host.size());
    // kLegacyStreamIdle is the caller's word that nothing is pending on the legacy default stream,
    // which the resident kernel is not ordered after; a cudaMemcpy from pageable memory may return
    // before its DMA lands (seen with six of these tests sharing a GPU).
    ASSERT_EQ(cudaStreamSynchronize(cudaStreamLegacy), cudaSuccess);
    served = false;
    if (resident) {
      ASSERT_EQ(cuda().unpack_now(w, typed.data(), packed.data(), pack::Ordering::kLegacyStreamIdle, {}, &served),
                GDDT_OK);
    }
    if (!served) ASSERT_EQ(cuda().unpack(w, typed.data(), packed.data(), stream), GDDT_OK);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    std::vector<char> unpacked(typed_host.size()), expected_typed = typed_host;
    typed.download(unpacked.data(), unpacked.size());
    testing::reference_move<false>(w, expected_typed.data(), packed_host.data());
    EXPECT_TRUE(unpacked == expected_typed) << "unpack, " << (resident ? "resident kernel" : "stream");
  }

  void rounds(bool resident, int pieces, std::int64_t count);

  cudaStream_t first_ = nullptr, second_ = nullptr;
};

// Rounds of: a stale table freed into the pool, then a fresh layout whose upload waits behind
// ballast on the first stream while the second stream (or the resident kernel) uses its table.
void PieceTables::rounds(bool resident, int pieces, std::int64_t count) {
  Buffer ballast(MemoryKind::kDevice, std::size_t{1} << 30);
  const std::uint64_t seed = resident ? 3000 : 1000;
  for (int round = 0; round < 20; ++round) {
    {
      const type::Layout stale = scattered_list(seed + round, pieces);
      check(stale, count, second_, resident, round);  // its table goes back to the pool with it
    }
    const type::Layout fresh = scattered_list(seed + 1000 + round, pieces);
    Buffer typed(MemoryKind::kDevice, static_cast<std::size_t>(testing::typed_span(fresh, count).bytes)),
        packed(MemoryKind::kDevice, static_cast<std::size_t>(fresh.size * count));
    keep_busy(first_, &ballast);
    ASSERT_EQ(cuda().pack(pack::Window{&fresh, count, 0, fresh.size * count}, typed.data(), packed.data(), first_),
              GDDT_OK);
    check(fresh, count, second_, resident, seed + round);
    ASSERT_EQ(cudaStreamSynchronize(first_), cudaSuccess);
  }
}

TEST_F(PieceTables, AnotherStreamWaitsForTheUploadOfTheFirst) { rounds(false, 700, 3); }

TEST_F(PieceTables, TheResidentKernelWaitsForTheUpload) { rounds(true, 300, 2); }

}  // namespace
}  // namespace gddt

int main(int argc, char** argv) {
  setenv("GDDT_RESIDENT", "on", 1);  // other tests may use the GPU at the same time
  if (!gddt::gpu::available()) {
    std::printf("no usable CUDA device: skipped\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  gddt::pack::backend_at(gddt::pack::kCudaSlot).stop();
  return failed;
}
