// The pool policy (size classes, limit, shrinking on failure, trim) against a fake
// allocator, and the public pools' behaviour without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <thread>
#include <vector>

#include "core/gpu.hpp"
#include "core/pool.hpp"
#include "core/pool_cache.hpp"

namespace gddt::pool {
namespace {

// malloc with a capacity, standing in for a GPU's memory.
class FakeAllocator final : public Allocator {
 public:
  explicit FakeAllocator(std::size_t capacity = ~std::size_t{0}) : capacity_(capacity) {}
  ~FakeAllocator() override { EXPECT_EQ(in_use_, 0u) << "buffers leaked"; }

  Status allocate(std::size_t bytes, void** ptr) override {
    ++allocations;
    if (bytes > capacity_ - in_use_) return GDDT_ERR_NO_MEMORY;
    *ptr = std::malloc(bytes);
    in_use_ += bytes;
    return GDDT_OK;
  }
  void release(void* ptr, std::size_t bytes) override {
    std::free(ptr);
    in_use_ -= bytes;
  }

  std::size_t in_use() const { return in_use_; }
  int allocations = 0;

 private:
  std::size_t capacity_;
  std::size_t in_use_ = 0;
};

struct Buffer {
  void* ptr = nullptr;
  std::size_t size = 0;
};

Buffer take(SizeClassCache& cache, std::size_t want, std::size_t min, Status expected = GDDT_OK) {
  Buffer buffer;
  EXPECT_EQ(cache.acquire(want, min, &buffer.ptr, &buffer.size), expected) << want << " " << min;
  return buffer;
}

TEST(PoolSizeClass, PowersOfTwo) {
  EXPECT_EQ(floor_class(1), 1u);
  EXPECT_EQ(floor_class(1000), 512u);
  EXPECT_EQ(floor_class(1024), 1024u);
  EXPECT_EQ(ceil_class(1), 1u);
  EXPECT_EQ(ceil_class(1000), 1024u);
  EXPECT_EQ(ceil_class(1025), 2048u);
  EXPECT_EQ(ceil_class(~std::size_t{0}), 0u);
}

TEST(PoolCache, HandsOutTheLargestClassWithinWant) {
  FakeAllocator allocator;
  SizeClassCache cache(&allocator, 1 << 20);
  Buffer buffer = take(cache, 5000, 1);
  EXPECT_EQ(buffer.size, 4096u);
  cache.give_back(buffer.ptr, buffer.size);
}

TEST(PoolCache, RoundsUpWhenNoClassLiesBetweenMinAndWant) {
  FakeAllocator allocator;
  SizeClassCache cache(&allocator, 1 << 20);
  Buffer buffer = take(cache, 3000, 3000);
  EXPECT_EQ(buffer.size, 3000u);
  EXPECT_EQ(cache.allocated_bytes(), 4096u);
  cache.give_back(buffer.ptr, buffer.size);
  EXPECT_EQ(cache.cached_bytes(), 4096u);
}

TEST(PoolCache, ReusesCachedBuffers) {
  FakeAllocator allocator;
  SizeClassCache cache(&allocator, 1 << 20);
  Buffer first = take(cache, 8192, 8192);
  cache.give_back(first.ptr, first.size);
  Buffer second = take(cache, 8192, 8192);
  EXPECT_EQ(second.ptr, first.ptr);
  EXPECT_EQ(allocator.allocations, 1);
  cache.give_back(second.ptr, second.size);
}

TEST(PoolCache, ShrinksToTheLimitAndFailsOnlyBelowMin) {
  FakeAllocator allocator;
  SizeClassCache cache(&allocator, 8192);
  Buffer big = take(cache, 1 << 20, 1024);
  EXPECT_EQ(big.size, 8192u);
  take(cache, 4096, 1024, GDDT_ERR_NO_MEMORY);
  take(cache, 16384, 16384, GDDT_ERR_NO_MEMORY);
  cache.give_back(big.ptr, big.size);
  EXPECT_LE(cache.allocated_bytes(), 8192u);
}

TEST(PoolCache, EvictsCachedBuffersToMakeRoom) {
  FakeAllocator allocator;
  SizeClassCache cache(&allocator, 8192);
  Buffer a = take(cache, 4096, 4096);
  Buffer b = take(cache, 4096, 4096);
  cache.give_back(a.ptr, a.size);
  cache.give_back(b.ptr, b.size);
  Buffer whole = take(cache, 8192, 8192);
  EXPECT_EQ(whole.size, 8192u);
  EXPECT_EQ(cache.allocated_bytes(), 8192u);
  EXPECT_EQ(cache.cached_bytes(), 0u);
  cache.give_back(whole.ptr, whole.size);
}

TEST(PoolCache, EvictsTheBuffersReturnedLongestAgoFirst) {
  FakeAllocator allocator;
  SizeClassCache cache(&allocator, 12288);
  Buffer old_small = take(cache, 4096, 4096);
  Buffer recent_large = take(cache, 8192, 8192);
  cache.give_back(old_small.ptr, old_small.size);
  cache.give_back(recent_large.ptr, recent_large.size);
  // A 2 KiB buffer needs room: the 4 KiB one, returned before the 8 KiB, goes.
  Buffer small = take(cache, 2048, 2048);
  EXPECT_EQ(cache.allocated_bytes(), 8192u + 2048u);
  Buffer large = take(cache, 8192, 8192);
  EXPECT_EQ(large.ptr, recent_large.ptr);
  EXPECT_EQ(allocator.allocations, 3);
  cache.give_back(small.ptr, small.size);
  cache.give_back(large.ptr, large.size);
}

// A window of many mid-sized buffers fills the pool; then the program alternates between two
// larger sizes, one message at a time. Once the window's buffers are gone, the two stay cached.
TEST(PoolCache, AlternatingLargeSizesStopAllocatingAfterAWindow) {
  FakeAllocator allocator;
  const std::size_t unit = 1024;
  SizeClassCache cache(&allocator, 256 * unit);
  std::vector<Buffer> window;
  for (int i = 0; i < 32; ++i) window.push_back(take(cache, 8 * unit, 8 * unit));
  for (const Buffer& buffer : window) cache.give_back(buffer.ptr, buffer.size);
  const int after_window = allocator.allocations;
  for (int i = 0; i < 20; ++i) {
    Buffer receive = take(cache, 32 * unit, 32 * unit);
    cache.give_back(receive.ptr, receive.size);
    Buffer send = take(cache, 16 * unit, 16 * unit);
    cache.give_back(send.ptr, send.size);
  }
  EXPECT_EQ(allocator.allocations - after_window, 2);
  EXPECT_LE(cache.allocated_bytes(), 256 * unit);
}

TEST(PoolCache, TrimsAndRetriesOnceWhenTheAllocatorFails) {
  FakeAllocator allocator(8192);
  SizeClassCache cache(&allocator, 1 << 20);
  Buffer small = take(cache, 4096, 4096);
  cache.give_back(small.ptr, small.size);
  Buffer large = take(cache, 8192, 8192);  // fits only once the cached 4 KiB is freed
  EXPECT_EQ(large.size, 8192u);
  EXPECT_EQ(allocator.allocations, 3);
  cache.give_back(large.ptr, large.size);
}

TEST(PoolCache, FreesTheCacheSharingItsMemoryWhenTheAllocatorFails) {
  for (const bool shared : {false, true}) {
    FakeAllocator memory(8192);  // one GPU's memory under its two device pools
    SizeClassCache scratch(&memory, 1 << 20), exported(&memory, 1 << 20);
    if (shared) SizeClassCache::share_memory(&scratch, &exported);
    Buffer idle = take(exported, 4096, 4096);
    exported.give_back(idle.ptr, idle.size);
    Buffer large = take(scratch, 8192, 8192, shared ? GDDT_OK : GDDT_ERR_NO_MEMORY);
    EXPECT_EQ(exported.cached_bytes(), shared ? 0u : 4096u);
    if (shared) scratch.give_back(large.ptr, large.size);
  }
}

TEST(PoolCache, TriesSmallerClassesWhenTheAllocatorFails) {
  FakeAllocator allocator(5000);
  SizeClassCache cache(&allocator, 1 << 20);
  Buffer buffer = take(cache, 16384, 1024);
  EXPECT_EQ(buffer.size, 4096u);
  take(cache, 2048, 2048, GDDT_ERR_NO_MEMORY);
  cache.give_back(buffer.ptr, buffer.size);
}

TEST(PoolCache, RejectsMinAboveWantAndAllowsEmptyRequests) {
  FakeAllocator allocator;
  SizeClassCache cache(&allocator, 1 << 20);
  take(cache, 10, 20, GDDT_ERR_INVALID_ARG);
  Buffer empty = take(cache, 0, 0);
  EXPECT_EQ(empty.ptr, nullptr);
  EXPECT_EQ(empty.size, 0u);
  EXPECT_EQ(allocator.allocations, 0);
}

TEST(PoolCache, TrimFreesCachedNowAndLeasedOnReturn) {
  FakeAllocator allocator;
  SizeClassCache cache(&allocator, 1 << 20);
  Buffer cached = take(cache, 4096, 4096);
  Buffer leased = take(cache, 8192, 8192);
  cache.give_back(cached.ptr, cached.size);
  cache.trim();
  EXPECT_EQ(allocator.in_use(), 8192u);
  cache.give_back(leased.ptr, leased.size);
  EXPECT_EQ(allocator.in_use(), 0u);
  EXPECT_EQ(cache.allocated_bytes(), 0u);
  EXPECT_EQ(cache.cached_bytes(), 0u);
}

TEST(PoolCache, ConcurrentUseStaysWithinTheLimit) {
  FakeAllocator allocator;
  const std::size_t limit = 64 * 1024;
  SizeClassCache cache(&allocator, limit);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 2000; ++i) {
        void* ptr = nullptr;
        std::size_t size = 0;
        std::size_t want = std::size_t{1024} << ((i + t) % 6);
        if (cache.acquire(want, 1024, &ptr, &size) == GDDT_OK) cache.give_back(ptr, size);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(cache.allocated_bytes(), limit);
  EXPECT_EQ(allocator.in_use(), cache.allocated_bytes());
}

std::uintptr_t address(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr); }

TEST(PoolSlab, SmallBuffersShareOneAllocation) {
  FakeAllocator backing;
  SlabAllocator slabs(&backing, 4096, 1 << 20);
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  ASSERT_EQ(slabs.allocate(1000, &a), GDDT_OK);
  ASSERT_EQ(slabs.allocate(1000, &b), GDDT_OK);
  ASSERT_EQ(slabs.allocate(2, &c), GDDT_OK);
  EXPECT_EQ(backing.allocations, 1);
  EXPECT_EQ(backing.in_use(), 4096u);
  EXPECT_EQ(address(b) - address(a), 1024u);  // 1000 bytes rounded up to 256-byte multiples
  EXPECT_EQ(address(c) - address(b), 1024u);
  slabs.release(a, 1000);
  slabs.release(c, 2);
  EXPECT_EQ(backing.in_use(), 4096u) << "a slab stays while a buffer in it lives";
  slabs.release(b, 1000);
  EXPECT_EQ(backing.in_use(), 0u) << "the last buffer gives the slab back";
  EXPECT_EQ(slabs.slabs(), 0u);
}

TEST(PoolSlab, FullSlabsLargeBuffersAndTheCapGoToTheBacking) {
  FakeAllocator backing;
  SlabAllocator slabs(&backing, 4096, 8192);
  std::vector<void*> buffers(5);
  for (void*& buffer : buffers) ASSERT_EQ(slabs.allocate(2048, &buffer), GDDT_OK);
  // Two buffers fill a slab; the cap allows two slabs; the fifth is an allocation of its own.
  EXPECT_EQ(slabs.slabs(), 2u);
  EXPECT_EQ(backing.allocations, 3);
  EXPECT_EQ(backing.in_use(), 2 * 4096u + 2048u);
  void* large = nullptr;
  ASSERT_EQ(slabs.allocate(4096, &large), GDDT_OK);  // above half a slab
  EXPECT_EQ(backing.in_use(), 3 * 4096u + 2048u);
  slabs.release(large, 4096);
  for (void* buffer : buffers) slabs.release(buffer, 2048);
  EXPECT_EQ(backing.in_use(), 0u);
}

TEST(PoolSlab, FallsBackToTheBufferAloneWhenNoSlabFits) {
  FakeAllocator backing(3000);
  SlabAllocator slabs(&backing, 4096, 1 << 20);
  void* buffer = nullptr;
  ASSERT_EQ(slabs.allocate(1500, &buffer), GDDT_OK);
  EXPECT_EQ(slabs.slabs(), 0u);
  EXPECT_EQ(backing.in_use(), 1500u);
  void* more = nullptr;
  EXPECT_EQ(slabs.allocate(1600, &more), GDDT_ERR_NO_MEMORY);
  slabs.release(buffer, 1500);
  EXPECT_EQ(backing.in_use(), 0u);
}

TEST(PoolSlab, NoBufferFromTheBackingIsBelowTheLeastAllocation) {
  FakeAllocator backing;
  SlabAllocator slabs(&backing, 4096, 4096, 3000);
  std::vector<void*> in_slab(2);
  for (void*& buffer : in_slab) ASSERT_EQ(slabs.allocate(2048, &buffer), GDDT_OK);
  EXPECT_EQ(slabs.slabs(), 1u);
  void* small = nullptr;
  EXPECT_EQ(slabs.allocate(100, &small), GDDT_ERR_NO_MEMORY);  // the slab is full, the cap allows no second
  void* large = nullptr;
  ASSERT_EQ(slabs.allocate(2100, &large), GDDT_OK);  // above half a slab: an allocation of 3000
  EXPECT_EQ(backing.in_use(), 4096u + 3000u);
  slabs.release(large, 2100);
  EXPECT_EQ(backing.in_use(), 4096u);
  for (void* buffer : in_slab) slabs.release(buffer, 2048);
  EXPECT_EQ(backing.in_use(), 0u);
}

TEST(PoolSlab, UnderTheSizeClassCache) {
  FakeAllocator backing;
  {
    SlabAllocator slabs(&backing, 1 << 16, 1 << 20);
    SizeClassCache cache(&slabs, 1 << 20);
    std::vector<Buffer> leased;
    for (std::size_t want : {1000u, 4096u, 100u, 30000u, 70000u, 5000u}) leased.push_back(take(cache, want, 1));
    EXPECT_EQ(slabs.slabs(), 1u);
    EXPECT_EQ(backing.allocations, 2) << "one slab, and the 64 KiB class of 70000 bytes on its own";
    for (const Buffer& buffer : leased) cache.give_back(buffer.ptr, buffer.size);
    cache.trim();
    EXPECT_EQ(backing.in_use(), 0u);
  }
}

// As the library builds a GPU's two device pools: each on slabs of its own over one memory. The
// other pool's idle buffer goes back to the memory only with its whole slab.
TEST(PoolSlab, PairedPoolsFreeEachOthersSlabsWhenTheMemoryRunsOut) {
  for (const bool shared : {false, true}) {
    FakeAllocator memory(8192);
    {
      SlabAllocator scratch_slabs(&memory, 4096, 1 << 20), exported_slabs(&memory, 4096, 1 << 20);
      SizeClassCache scratch(&scratch_slabs, 1 << 20), exported(&exported_slabs, 1 << 20);
      if (shared) SizeClassCache::share_memory(&scratch, &exported);
      Buffer idle = take(exported, 1024, 1024);
      exported.give_back(idle.ptr, idle.size);
      EXPECT_EQ(memory.in_use(), 4096u) << "the idle buffer keeps its slab";
      Buffer large = take(scratch, 8192, 8192, shared ? GDDT_OK : GDDT_ERR_NO_MEMORY);
      EXPECT_EQ(exported_slabs.slabs(), shared ? 0u : 1u);
      if (shared) scratch.give_back(large.ptr, large.size);
      scratch.trim();
      exported.trim();
    }
    EXPECT_EQ(memory.in_use(), 0u);
  }
}

TEST(PoolLease, NeedsAGpu) {
  if (gpu::available()) GTEST_SKIP() << "a GPU is present";
  Lease lease;
  EXPECT_EQ(acquire(Where::kPinned, 0, 4096, 1024, &lease), GDDT_ERR_NO_DEVICE);
  EXPECT_EQ(acquire(Where::kDevice, 0, 4096, 1024, &lease), GDDT_ERR_NO_DEVICE);
  EXPECT_FALSE(lease);
  Lease moved(std::move(lease));
  EXPECT_FALSE(moved);
  trim();
}

}  // namespace
}  // namespace gddt::pool
