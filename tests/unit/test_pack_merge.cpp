// The merge of two copies of one memory (pack/merge.hpp) that one-sided windows over device memory
// rely on: only the bytes of `from` that differ from the snapshot reach `to`, every other byte of
// `to` keeps what another writer put there, and the snapshot takes `from`'s bytes. At every
// alignment and length around the 8-byte words, on the host and, where a GPU is usable, by the
// CUDA kernel (device snapshot, mapped host memory on one side as a window's public copy is).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/gpu.hpp"
#include "pack/merge.hpp"

namespace {

using Bytes = std::vector<unsigned char>;

struct Case {
  Bytes from, snapshot, to;  // as the merge finds them
};

// A copy that changed some bytes since the snapshot (single bytes, and whole words now and then),
// and a target where another writer changed other bytes.
Case make_case(std::size_t bytes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Case c;
  c.snapshot.resize(bytes);
  for (auto& b : c.snapshot) b = static_cast<unsigned char>(rng());
  c.from = c.to = c.snapshot;
  for (std::size_t i = 0; i < bytes; ++i) {
    if (rng() % 5 == 0) c.from[i] = static_cast<unsigned char>(c.from[i] + 1 + rng() % 255);
    if (rng() % 7 == 0) c.to[i] = static_cast<unsigned char>(c.to[i] ^ 0x5a);
  }
  for (std::size_t word = 0; word + 8 <= bytes; word += 8)
    if (rng() % 4 == 0)
      for (std::size_t i = word; i < word + 8; ++i) c.from[i] = static_cast<unsigned char>(c.snapshot[i] + 1);
  return c;
}

// What the merge must leave: `to` with from's changed bytes, the snapshot equal to `from`.
Case expected(const Case& c) {
  Case e = c;
  for (std::size_t i = 0; i < c.from.size(); ++i)
    if (c.from[i] != c.snapshot[i]) e.to[i] = c.from[i];
  e.snapshot = c.from;
  return e;
}

TEST(PackMerge, HostMovesOnlyChangedBytes) {
  for (std::size_t bytes : {0u, 1u, 7u, 8u, 9u, 64u, 1000u, 4099u}) {
    for (std::size_t offset : {0u, 1u, 3u}) {
      Case c = make_case(bytes + offset, static_cast<std::uint32_t>(bytes * 7 + offset));
      const Case want = expected(c);
      gddt::pack::merge_changed_host(c.from.data() + offset, c.snapshot.data() + offset, c.to.data() + offset, bytes);
      for (std::size_t i = 0; i < offset; ++i) c.to[i] = want.to[i], c.snapshot[i] = want.snapshot[i];  // not merged
      EXPECT_EQ(c.to, want.to) << bytes << " bytes at offset " << offset;
      EXPECT_EQ(c.snapshot, want.snapshot) << bytes << " bytes at offset " << offset;
    }
  }
}

TEST(PackMerge, GpuKernelMatchesHost) {
  namespace gpu = gddt::gpu;
  if (!gpu::available()) GTEST_SKIP() << "no usable GPU";
  for (std::size_t bytes : {1u, 9u, 4096u, 1000003u}) {
    for (std::size_t offset : {0u, 5u}) {
      const Case c = make_case(bytes + offset, static_cast<std::uint32_t>(bytes + offset));
      const Case want = expected(c);
      const std::size_t size = bytes + offset;
      void *from = nullptr, *snapshot = nullptr, *to_host = nullptr, *to_device = nullptr;
      ASSERT_EQ(gpu::device_alloc(0, size, &from), GDDT_OK);
      ASSERT_EQ(gpu::device_alloc(0, size, &snapshot), GDDT_OK);
      ASSERT_EQ(gpu::mapped_alloc(size, &to_host, &to_device), GDDT_OK);
      gpu::Stream stream = nullptr;
      ASSERT_EQ(gpu::library_stream(0, &stream), GDDT_OK);
      ASSERT_EQ(gpu::memcpy_async(from, c.from.data(), size, stream), GDDT_OK);
      ASSERT_EQ(gpu::memcpy_async(snapshot, c.snapshot.data(), size, stream), GDDT_OK);
      std::copy(c.to.begin(), c.to.end(), static_cast<unsigned char*>(to_host));
      ASSERT_EQ(gddt::pack::merge_changed_device(static_cast<char*>(from) + offset, static_cast<char*>(snapshot) + offset,
                                                 static_cast<char*>(to_device) + offset, static_cast<std::int64_t>(bytes),
                                                 stream),
                GDDT_OK);
      Bytes got_snapshot(size);
      ASSERT_EQ(gpu::memcpy_async(got_snapshot.data(), snapshot, size, stream), GDDT_OK);
      ASSERT_EQ(gpu::stream_synchronize(stream), GDDT_OK);
      Bytes got_to(static_cast<unsigned char*>(to_host), static_cast<unsigned char*>(to_host) + size);
      for (std::size_t i = 0; i < offset; ++i) got_to[i] = want.to[i], got_snapshot[i] = want.snapshot[i];
      EXPECT_EQ(got_to, want.to) << bytes << " bytes at offset " << offset;
      EXPECT_EQ(got_snapshot, want.snapshot) << bytes << " bytes at offset " << offset;
      gpu::mapped_free(to_host);
      gpu::device_free(0, snapshot);
      gpu::device_free(0, from);
    }
  }
}

}  // namespace
