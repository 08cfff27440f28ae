// Resident jobs ordered through flags in device memory (pack::Backend::post_now, the peer
// protocol's eager path), on one GPU: a pack that sets a flag and an unpack that waits for it move
// random layouts byte for byte as the host walk does, with the packed bytes and the receiving
// buffer's holes poisoned; an unpack whose flag never comes gives up, writes nothing and leaves
// the ring working; the launched wait (queue_flag_wait) returns only once the flag is set.
// Exits 77 (skipped) without a usable GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "memory_buffer.hpp"
#include "pack/engine.hpp"
#include "random_cases.hpp"

namespace gddt {
namespace {

using gddt_test::Buffer;
using gddt_test::MemoryKind;

const pack::Backend& cuda() { return pack::backend_at(pack::kCudaSlot); }

constexpr unsigned char kPoison = 0xa5;
constexpr unsigned char kPackedPoison = 0x5a;

class ResidentFlags : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaMalloc(&flags_, kFlags * sizeof(std::uint64_t)), cudaSuccess);
    ASSERT_EQ(cudaMemset(flags_, 0, kFlags * sizeof(std::uint64_t)), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  void TearDown() override { cudaFree(flags_); }
  std::uint64_t flag_value(int i) {
    std::uint64_t value = 0;
    EXPECT_EQ(cudaMemcpy(&value, flags_ + i, sizeof value, cudaMemcpyDeviceToHost), cudaSuccess);
    return value;
  }
  static constexpr int kFlags = 16;
  std::uint64_t* flags_ = nullptr;
};

TEST_F(ResidentFlags, FlaggedPackThenUnpackMatchTheHostWalk) {
  testing::LayoutGenerator gen(testing::test_seed() + 31);
  constexpr int kCases = 300;
  constexpr std::int64_t kMostPacked = 16 << 10, kMostSpan = 1 << 20;
  // Allocated once: cudaFree would wait for the resident kernel to idle out.
  Buffer from(MemoryKind::kDevice, kMostSpan), to(MemoryKind::kDevice, kMostSpan),
      packed(MemoryKind::kDevice, kMostPacked);
  int served = 0, tried = 0;
  for (int i = 0; i < kCases; ++i) {
    const testing::Case c = testing::random_case(i, &gen, kMostPacked, kMostSpan);
    const type::Layout& layout = c.made.layout;
    // A layout larger than the packed buffer comes one element a case.
    if (testing::overlaps(layout, c.count) || c.total() == 0 || c.total() > kMostPacked) continue;
    const testing::Span span = testing::typed_span(layout, c.count);
    const pack::Window w{&layout, c.count, 0, c.total()};
    ASSERT_LE(span.bytes, kMostSpan);
    std::vector<char> source(static_cast<std::size_t>(span.bytes));
    testing::fill_random(&source, &gen.rng());
    from.upload(source.data(), source.size());
    to.fill(kPoison);
    packed.fill(kPackedPoison);
    ASSERT_EQ(cudaStreamSynchronize(cudaStreamLegacy), cudaSuccess);
    const char* from_typed = reinterpret_cast<const char*>(from.data()) - span.lb;
    char* to_typed = reinterpret_cast<char*>(to.data()) - span.lb;
    const pack::DeviceFlag flag{flags_ + i % kFlags, static_cast<std::uint64_t>(i) + 1};
    pack::Posted pack_job, unpack_job;
    bool pack_served = false, unpack_served = false;
    ++tried;
    for (int attempt = 0; attempt < 2 && !pack_served; ++attempt) {
      ASSERT_EQ(cuda().post_now(false, w, from_typed, packed.data(), {}, flag, pack::Ordering::kCheckLegacyStream,
                                &pack_job, &pack_served),
                GDDT_OK);
      if (pack_served) break;
      // An idle kernel declines; a window moved the ordinary way starts it (its bytes must not count).
      bool moved = false;
      ASSERT_EQ(cuda().pack_now(w, from_typed, packed.data(), pack::Ordering::kCheckLegacyStream, {}, &moved),
                GDDT_OK);
      packed.fill(kPackedPoison);
    }
    if (!pack_served) continue;  // a window too scattered for the kernel
    ASSERT_EQ(cuda().post_now(true, w, to_typed, packed.data(), flag, {}, pack::Ordering::kCheckLegacyStream,
                              &unpack_job, &unpack_served),
              GDDT_OK);
    bool moved = false;
    if (unpack_served) {
      ASSERT_EQ(cuda().wait_posted(unpack_job, {}, &moved), GDDT_OK);
      EXPECT_TRUE(moved) << "the unpack gave up waiting for a pack posted before it: " << c.describe();
    }
    ASSERT_EQ(cuda().wait_posted(pack_job, {}, &moved), GDDT_OK);
    EXPECT_TRUE(moved);
    EXPECT_EQ(flag_value(i % kFlags), flag.value) << "the pack did not set its flag";
    if (!unpack_served) continue;
    ++served;
    std::vector<char> expected_packed(static_cast<std::size_t>(w.length));
    testing::reference_move<true>(w, source.data() - span.lb, expected_packed.data());
    std::vector<char> expected(source.size(), static_cast<char>(kPoison));
    testing::reference_move<false>(w, expected.data() - span.lb, expected_packed.data());
    std::vector<char> got(expected.size());
    to.download(got.data(), got.size());
    ASSERT_EQ(std::memcmp(got.data(), expected.data(), expected.size()), 0) << c.describe();
  }
  std::printf("%d of %d windows packed and unpacked through flags\n", served, tried);
  EXPECT_GE(served * 10, tried * 8) << "the resident kernel declined most windows";
}

// A vector of `blocks` 4-byte blocks every 8 bytes, a typed buffer of kPoison and packed bytes of
// kPackedPoison: unpacked, the blocks hold the one and the gaps the other (expect_unpacked).
struct PoisonedVector {
  explicit PoisonedVector(std::int64_t blocks)
      : to(MemoryKind::kDevice, static_cast<std::size_t>(blocks * 8)),
        packed(MemoryKind::kDevice, static_cast<std::size_t>(blocks * 4)) {
    EXPECT_EQ(type::make_repeat(type::make_block(4), blocks, 8, &layout), GDDT_OK);
    to.fill(kPoison);
    packed.fill(kPackedPoison);
  }
  pack::Window window() const { return pack::Window{&layout, 1, 0, layout.size}; }
  void expect_unpacked() const {
    const std::vector<unsigned char> got = to.download();
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], i % 8 < 4 ? kPackedPoison : kPoison) << i;
  }
  type::Layout layout;
  Buffer to, packed;
};

TEST_F(ResidentFlags, AnUnpackWhoseFlagNeverComesGivesUpAndTheLaunchedWaitTakesOver) {
  PoisonedVector small(512);
  const pack::Window w = small.window();
  Buffer& to = small.to;
  Buffer& packed = small.packed;
  // A first window starts the kernel, so that the next one is posted to it.
  bool served = false;
  for (int tries = 0; tries < 100 && !served; ++tries) {
    ASSERT_EQ(cuda().pack_now(w, to.data(), packed.data(), pack::Ordering::kCheckLegacyStream, {}, &served), GDDT_OK);
  }
  packed.fill(kPackedPoison);
  pack::Posted job;
  for (int tries = 0; tries < 100 && job.ticket == 0; ++tries) {
    ASSERT_EQ(cuda().post_now(true, w, to.data(), packed.data(), {flags_, 7}, {}, pack::Ordering::kCheckLegacyStream,
                              &job, &served),
              GDDT_OK);
  }
  ASSERT_NE(job.ticket, 0u) << "the resident kernel took no job";
  const auto start = std::chrono::steady_clock::now();
  bool moved = true;
  ASSERT_EQ(cuda().wait_posted(job, {}, &moved), GDDT_OK);
  const double waited_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  std::printf("the unpack gave up after %.0f us\n", waited_us);
  EXPECT_FALSE(moved);
  EXPECT_GE(waited_us, 90.0);
  for (unsigned char byte : to.download()) ASSERT_EQ(byte, kPoison) << "an unpack that gave up wrote";
  // The ring goes on with the next jobs: one the whole cluster moves (32 KiB), then one block's.
  PoisonedVector wide(8192);
  ASSERT_EQ(cuda().unpack_now(wide.window(), wide.to.data(), wide.packed.data(), pack::Ordering::kCheckLegacyStream,
                              {}, &served),
            GDDT_OK);
  wide.expect_unpacked();
  ASSERT_EQ(cuda().unpack_now(w, to.data(), packed.data(), pack::Ordering::kCheckLegacyStream, {}, &served), GDDT_OK);
  EXPECT_TRUE(served);
  small.expect_unpacked();

  cudaStream_t waiting = nullptr, setting = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&waiting, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&setting, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cuda().queue_flag_wait({flags_ + 1, 3}, waiting), GDDT_OK);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(cudaStreamQuery(waiting), cudaErrorNotReady) << "the launched wait returned before its flag";
  static const std::uint64_t three = 3;
  ASSERT_EQ(cudaMemcpyAsync(flags_ + 1, &three, sizeof three, cudaMemcpyHostToDevice, setting), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(waiting), cudaSuccess);
  cudaStreamDestroy(waiting);
  cudaStreamDestroy(setting);
}

}  // namespace
}  // namespace gddt

int main(int argc, char** argv) {
  setenv("GDDT_RESIDENT", "on", 1);  // other tests may use the GPU at the same time
  // Long enough that the kernel still runs when the next case is ready.
  setenv("GDDT_RESIDENT_IDLE_US", "20000", 1);
  if (!gddt::gpu::available()) {
    std::printf("no usable CUDA device: skipped\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  gddt::pack::backend_at(gddt::pack::kCudaSlot).stop();
  return failed;
}
