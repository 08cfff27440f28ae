// Memory classification: a range cache in front of cudaPointerGetAttributes.
//
// What is cached: ranges of device, managed and pinned allocations, as the driver reports
// them (base and size). Pageable host answers are not cached: any host address may later
// become registered or CUDA memory, and a cached "host" would then send device memory to
// the host backend. So a miss always asks the driver.
//
// Stale ranges: after cudaFree the driver may hand the same addresses to a new allocation
// on another device or of another kind, and a cached range would then answer wrongly. A
// hit could be re-validated with CU_POINTER_ATTRIBUTE_BUFFER_ID, but that is a driver
// call costing about as much as the query the cache saves, so hits are trusted. Memory
// gddt frees itself is invalidated here (pool.cpp); applications that free and reallocate
// buffers they pass to MPI between calls can set GDDT_MEMORY_CACHE=0.
#include "core/memory.hpp"

#include <atomic>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "core/config.hpp"
#include "core/gpu.hpp"

namespace gddt::memory {
namespace {

struct Range {
  std::uintptr_t end;  // one past the last byte
  Kind kind;
};

class RangeCache {
 public:
  bool find(std::uintptr_t address, Kind* kind) const {
    // With nothing cached (the common case for host-only traffic) skip the lock.
    if (entries_.load(std::memory_order_acquire) == 0) return false;
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto after = ranges_.upper_bound(address);
    if (after == ranges_.begin()) return false;
    const auto& [base, range] = *std::prev(after);
    if (address >= range.end) return false;
    *kind = range.kind;
    return true;
  }

  void insert(std::uintptr_t base, std::size_t size, Kind kind) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    erase_overlapping(base, base + size);
    ranges_.emplace(base, Range{base + size, kind});
    entries_.store(ranges_.size(), std::memory_order_release);
  }

  void erase(std::uintptr_t begin, std::uintptr_t end) {
    if (entries_.load(std::memory_order_acquire) == 0) return;
    std::unique_lock<std::shared_mutex> lock(mutex_);
    erase_overlapping(begin, end);
    entries_.store(ranges_.size(), std::memory_order_release);
  }

  unsigned long long size() const { return entries_.load(std::memory_order_relaxed); }

 private:
  // Ranges never overlap each other, so only the one starting before `begin` can reach in
  // from the left; every range starting inside [begin, end) overlaps.
  void erase_overlapping(std::uintptr_t begin, std::uintptr_t end) {
    auto first = ranges_.lower_bound(begin);
    if (first != ranges_.begin() && std::prev(first)->second.end > begin) --first;
    ranges_.erase(first, ranges_.lower_bound(end));
  }

  mutable std::shared_mutex mutex_;
  std::map<std::uintptr_t, Range> ranges_;  // keyed by base address
  std::atomic<std::size_t> entries_{0};
};

RangeCache& cache() {
  static RangeCache instance;
  return instance;
}

std::atomic<unsigned long long> hit_count{0};
std::atomic<unsigned long long> miss_count{0};

}  // namespace

Status classify(const void* ptr, Kind* kind) {
  if (!gpu::available()) {
    *kind = Kind{};
    return GDDT_OK;
  }
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  const bool caching = config::settings().memory_cache;
  if (caching && cache().find(address, kind)) {
    hit_count.fetch_add(1, std::memory_order_relaxed);
    return GDDT_OK;
  }
  miss_count.fetch_add(1, std::memory_order_relaxed);
  gpu::PointerInfo info;
  GDDT_CHECK(gpu::query_pointer(ptr, &info));
  *kind = Kind{info.type, info.device};
  if (caching && info.type != GDDT_MEMORY_HOST && info.size != 0) cache().insert(info.base, info.size, *kind);
  return GDDT_OK;
}

void invalidate(const void* ptr, std::size_t bytes) {
  const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
  cache().erase(begin, begin + (bytes == 0 ? 1 : bytes));
}

Stats stats() {
  return Stats{hit_count.load(std::memory_order_relaxed), miss_count.load(std::memory_order_relaxed), cache().size()};
}

}  // namespace gddt::memory

extern "C" gddt_status_t gddt_memory_classify(const void* ptr, gddt_memory_type_t* type, int* device) {
  if (type == nullptr || device == nullptr) return GDDT_ERR_INVALID_ARG;
  gddt::memory::Kind kind;
  GDDT_CHECK(gddt::memory::classify(ptr, &kind));
  *type = kind.type;
  *device = kind.device;
  return GDDT_OK;
}

extern "C" const char* gddt_memory_type_name(gddt_memory_type_t type) {
  switch (type) {
    case GDDT_MEMORY_HOST: return "host";
    case GDDT_MEMORY_PINNED: return "pinned";
    case GDDT_MEMORY_DEVICE: return "device";
    case GDDT_MEMORY_MANAGED: return "managed";
  }
  return "unknown";
}
