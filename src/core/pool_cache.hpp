// The policy inside each pool of pool.hpp, apart from where the memory comes from, so it
// can be tested without a GPU: buffers are cached by power-of-two size class, the bytes
// allocated in total (cached plus leased) stay under a limit, room is made by freeing the
// cached buffers returned longest ago, and a request shrinks towards its minimum when the
// limit or the allocator says no.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_set>

#include "core/status.hpp"

namespace gddt::pool {

// Where a SizeClassCache gets memory: the CUDA allocators in the library, a fake in tests.
// allocate() answers GDDT_ERR_NO_MEMORY when memory ran out (the cache then asks for
// less); any other error is passed to the caller.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual Status allocate(std::size_t bytes, void** ptr) = 0;
  virtual void release(void* ptr, std::size_t bytes) = 0;
};

// The largest power of two <= bytes, and the smallest >= bytes (0 when it would overflow);
// both need bytes > 0.
std::size_t floor_class(std::size_t bytes);
std::size_t ceil_class(std::size_t bytes);

class SizeClassCache {
 public:
  SizeClassCache(Allocator* allocator, std::uint64_t limit_bytes);
  ~SizeClassCache();  // frees the cached buffers; leased ones must have been given back
  SizeClassCache(const SizeClassCache&) = delete;
  SizeClassCache& operator=(const SizeClassCache&) = delete;

  // Hands out a buffer of the largest class <= want_bytes that the limit and the allocator
  // allow, but no smaller than min_bytes; when no class lies in [min_bytes, want_bytes] the
  // class just above min_bytes. *size is the usable part, at most want_bytes and at least
  // min_bytes. On running out of memory the cache is emptied and the allocation retried
  // once before smaller classes are tried.
  Status acquire(std::size_t want_bytes, std::size_t min_bytes, void** ptr, std::size_t* size);

  // Takes back a buffer from acquire() with the size acquire() reported.
  void give_back(void* ptr, std::size_t size);

  // Frees the cached buffers; buffers leased now are freed when given back.
  void trim();

  // Pairs two caches whose allocators draw on one memory (a GPU's two device pools): where the
  // allocator runs out, each frees the other's cached buffers too before it asks for less, unless
  // the other is busy this moment (never waiting for it: both may run out at once).
  static void share_memory(SizeClassCache* a, SizeClassCache* b);

  std::uint64_t allocated_bytes() const;
  std::uint64_t cached_bytes() const;

 private:
  // A free buffer and when it came back (the count of give_backs then).
  struct Cached {
    void* buffer = nullptr;
    std::uint64_t returned = 0;
  };

  void* take_cached(std::size_t size_class);
  bool make_room(std::size_t size_class);
  void free_oldest_cached();
  void free_cached();
  void free_cached_unless_busy();

  Allocator* allocator_;
  SizeClassCache* sharing_ = nullptr;  // share_memory
  const std::uint64_t limit_bytes_;
  mutable std::mutex mutex_;
  std::map<std::size_t, std::deque<Cached>> cached_;  // size class -> free buffers, oldest first
  std::uint64_t returns_ = 0;
  std::unordered_set<void*> leased_;
  std::unordered_set<void*> free_on_return_;  // leased when trim() ran
  std::uint64_t allocated_bytes_ = 0;
  std::uint64_t cached_bytes_ = 0;
};

// Carves buffers of up to half a slab out of slabs of `slab_bytes` from `backing`, so that a
// pool's many buffers are a few allocations: a CUDA-aware MPI registers device memory, and
// maps it into its peers, once per allocation (measured through UCX: starting a 1 MiB device
// send took 15.6 us from buffers that were allocations of their own, 2 us from one slab).
// Space is handed out in address order and a slab goes back to `backing` when its last buffer
// does; SizeClassCache keeps returned buffers for reuse, so that happens when it trims. Slabs
// stop being opened once they total `most_slab_bytes` (buffers then come from `backing`
// directly), which bounds what holes left by buffers freed early can cost. With `least_direct`,
// no buffer from `backing` is smaller: one below it that no slab can hold is refused
// (GDDT_ERR_NO_MEMORY) rather than made that large, which the caller's limit would not count.
// Not thread-safe: SizeClassCache calls it under its lock.
class SlabAllocator final : public Allocator {
 public:
  SlabAllocator(Allocator* backing, std::size_t slab_bytes, std::uint64_t most_slab_bytes,
                std::size_t least_direct = 0);
  ~SlabAllocator() override;  // gives back the slabs still open
  SlabAllocator(const SlabAllocator&) = delete;
  SlabAllocator& operator=(const SlabAllocator&) = delete;
  Status allocate(std::size_t bytes, void** ptr) override;
  void release(void* ptr, std::size_t bytes) override;
  std::size_t slabs() const { return slabs_.size(); }

 private:
  struct Slab {
    char* base = nullptr;
    std::size_t used = 0;
    std::size_t live = 0;  // buffers handed out and not released
  };
  Allocator* backing_;
  const std::size_t slab_bytes_;
  const std::uint64_t most_slab_bytes_;
  const std::size_t least_direct_;
  std::map<std::uintptr_t, Slab> slabs_;  // by base address
  Slab* current_ = nullptr;                // the slab new buffers come from
};

}  // namespace gddt::pool
