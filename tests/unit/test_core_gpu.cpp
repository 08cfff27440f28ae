// The core layer against a real GPU: pointer queries, the memory-type range cache, the
// pools, streams. Skipped where no GPU is usable.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/gpu.hpp"
#include "core/memory.hpp"
#include "core/pool.hpp"

namespace gddt {
namespace {

class CoreGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu::available()) GTEST_SKIP() << "no usable GPU";
  }
};

// Each test runs in a process of its own (gtest_discover_tests), which has no CUDA context
// before this one makes it: host pages are then known without asking the driver, and the
// interposer's fast path finds them, as it does in a program that never makes a context.
TEST_F(CoreGpuTest, HostPagesAreKnownBeforeAnyContextAndForgottenWhenOneIsMade) {
  if (gpu::context_exists()) GTEST_SKIP() << "a CUDA context exists before the test";
  std::vector<char> pageable(64);
  memory::Kind kind;
  EXPECT_FALSE(memory::known_host(pageable.data()));
  ASSERT_EQ(memory::classify(pageable.data(), &kind), GDDT_OK);
  EXPECT_EQ(kind.type, GDDT_MEMORY_HOST);
  EXPECT_TRUE(memory::known_host(pageable.data()));
  EXPECT_FALSE(gpu::context_exists());
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // makes the primary context, which maps memory
  EXPECT_FALSE(memory::known_host(pageable.data()));
}

TEST_F(CoreGpuTest, QueryPointerReportsTypeDeviceAndRange) {
  char* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 1 << 20), cudaSuccess);
  gpu::PointerInfo info;
  ASSERT_EQ(gpu::query_pointer(device + 1000, &info), GDDT_OK);
  EXPECT_EQ(info.type, GDDT_MEMORY_DEVICE);
  EXPECT_EQ(info.device, 0);
  EXPECT_LE(info.base, reinterpret_cast<std::uintptr_t>(device));
  EXPECT_GE(info.base + info.size, reinterpret_cast<std::uintptr_t>(device) + (1 << 20));
  ASSERT_EQ(cudaFree(device), cudaSuccess);

  std::vector<char> pageable(4096);
  ASSERT_EQ(gpu::query_pointer(pageable.data(), &info), GDDT_OK);
  EXPECT_EQ(info.type, GDDT_MEMORY_HOST);
  EXPECT_EQ(info.size, 0u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(CoreGpuTest, ClassifiesEveryKindAndCachesAllocationRanges) {
  char* device = nullptr;
  char* pinned = nullptr;
  char* managed = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&managed, 1 << 20), cudaSuccess);
  const struct {
    char* base;
    gddt_memory_type_t type;
  } cases[] = {{device, GDDT_MEMORY_DEVICE}, {pinned, GDDT_MEMORY_PINNED}, {managed, GDDT_MEMORY_MANAGED}};
  for (const auto& c : cases) {
    memory::Kind kind;
    ASSERT_EQ(memory::classify(c.base, &kind), GDDT_OK);
    EXPECT_EQ(kind.type, c.type) << gddt_memory_type_name(c.type);
    const memory::Stats before = memory::stats();
    ASSERT_EQ(memory::classify(c.base + (1 << 19), &kind), GDDT_OK);
    EXPECT_EQ(kind.type, c.type) << gddt_memory_type_name(c.type);
    EXPECT_EQ(memory::stats().hits, before.hits + 1) << gddt_memory_type_name(c.type) << " range not cached";
  }
  const unsigned long long entries = memory::stats().entries;
  memory::invalidate(device, 1 << 20);
  EXPECT_EQ(memory::stats().entries, entries - 1);
  ASSERT_EQ(cudaFree(device), cudaSuccess);
  ASSERT_EQ(cudaFreeHost(pinned), cudaSuccess);
  ASSERT_EQ(cudaFree(managed), cudaSuccess);
  memory::invalidate(pinned, 1 << 20);
  memory::invalidate(managed, 1 << 20);
}

TEST_F(CoreGpuTest, PoolsHandOutAndReuseDeviceAndPinnedMemory) {
  for (pool::Where where : {pool::Where::kDevice, pool::Where::kPinned, pool::Where::kShared}) {
    void* first = nullptr;
    {
      pool::Lease lease;
      ASSERT_EQ(pool::acquire(where, 0, 3 << 20, 1 << 20, &lease), GDDT_OK);
      EXPECT_EQ(lease.size(), 2u << 20);
      memory::Kind kind;
      ASSERT_EQ(memory::classify(lease.data(), &kind), GDDT_OK);
      EXPECT_EQ(kind.type, where == pool::Where::kPinned ? GDDT_MEMORY_PINNED : GDDT_MEMORY_DEVICE);
      first = lease.data();
    }
    pool::Lease again;
    ASSERT_EQ(pool::acquire(where, 0, 2 << 20, 2 << 20, &again), GDDT_OK);
    EXPECT_EQ(again.data(), first);
  }
  pool::trim();
}

// Scratch that other processes map through CUDA IPC never shares an allocation (a slab) with
// scratch the MPI library is handed: a process maps an allocation once.
TEST_F(CoreGpuTest, SharedScratchLiesInAllocationsOfItsOwn) {
  pool::Lease library;
  pool::Lease shared;
  ASSERT_EQ(pool::acquire(pool::Where::kDevice, 0, 64 << 10, 64 << 10, &library), GDDT_OK);
  ASSERT_EQ(pool::acquire(pool::Where::kShared, 0, 64 << 10, 64 << 10, &shared), GDDT_OK);
  std::uint64_t library_id = 0;
  std::uint64_t shared_id = 0;
  ASSERT_EQ(gpu::buffer_id(library.data(), &library_id), GDDT_OK);
  ASSERT_EQ(gpu::buffer_id(shared.data(), &shared_id), GDDT_OK);
  EXPECT_NE(library_id, shared_id);
  library.release();
  shared.release();
  pool::trim();
}

TEST_F(CoreGpuTest, LibraryStreamIsCreatedOnceAndCopies) {
  gpu::Stream stream = nullptr;
  gpu::Stream same = nullptr;
  ASSERT_EQ(gpu::library_stream(0, &stream), GDDT_OK);
  ASSERT_EQ(gpu::library_stream(0, &same), GDDT_OK);
  EXPECT_EQ(stream, same);
  EXPECT_EQ(gpu::library_stream(gpu::device_count(), &same), GDDT_ERR_INVALID_ARG);

  std::vector<char> source(4096, 'x');
  std::vector<char> back(4096, 0);
  void* device = nullptr;
  ASSERT_EQ(gpu::device_alloc(0, source.size(), &device), GDDT_OK);
  ASSERT_EQ(gpu::memcpy_async(device, source.data(), source.size(), stream), GDDT_OK);
  ASSERT_EQ(gpu::memcpy_async(back.data(), device, back.size(), stream), GDDT_OK);
  ASSERT_EQ(gpu::stream_synchronize(stream), GDDT_OK);
  EXPECT_EQ(std::memcmp(source.data(), back.data(), source.size()), 0);
  gpu::device_free(0, device);
}

TEST_F(CoreGpuTest, DeviceGuardRestoresTheCurrentDevice) {
  const int last = gpu::device_count() - 1;
  {
    gpu::DeviceGuard guard(last);
    int current = -1;
    ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
    EXPECT_EQ(current, last);
  }
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);
  EXPECT_FALSE(gpu::can_access_peer(0, 0));
  EXPECT_FALSE(gpu::device_name(0).empty());
  EXPECT_GT(gpu::driver_version(), 0);
}

TEST_F(CoreGpuTest, AllocationFailureIsNoMemoryNotAnError) {
  void* huge = nullptr;
  EXPECT_EQ(gpu::device_alloc(0, std::size_t{1} << 50, &huge), GDDT_ERR_NO_MEMORY);
  EXPECT_EQ(gpu::check_last_error("after a failed allocation"), GDDT_OK);
}

}  // namespace
}  // namespace gddt
