// The size-class policy (pool_cache.hpp) and the pools of pool.hpp built on it: one pinned
// host pool, sized by GDDT_POOL_PINNED_MAX, and two device pools per GPU (gddt's scratch and the
// scratch peers map through CUDA IPC), sized by GDDT_POOL_DEVICE_MAX and half of it.
#include "core/pool.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <memory>
#include <vector>

#include "core/config.hpp"
#include "core/counters.hpp"
#include "core/gpu.hpp"
#include "core/memory.hpp"
#include "core/pool_cache.hpp"

namespace gddt::pool {

std::size_t floor_class(std::size_t bytes) {
  std::size_t size_class = 1;
  while (size_class <= bytes / 2) size_class *= 2;
  return size_class;
}

std::size_t ceil_class(std::size_t bytes) {
  const std::size_t largest = std::size_t{1} << (std::numeric_limits<std::size_t>::digits - 1);
  if (bytes > largest) return 0;
  std::size_t size_class = 1;
  while (size_class < bytes) size_class *= 2;
  return size_class;
}

SizeClassCache::SizeClassCache(Allocator* allocator, std::uint64_t limit_bytes)
    : allocator_(allocator), limit_bytes_(limit_bytes) {}

SizeClassCache::~SizeClassCache() { free_cached(); }

Status SizeClassCache::acquire(std::size_t want_bytes, std::size_t min_bytes, void** ptr, std::size_t* size) {
  *ptr = nullptr;
  *size = 0;
  if (min_bytes > want_bytes) return GDDT_ERR_INVALID_ARG;
  if (want_bytes == 0) return GDDT_OK;
  const std::size_t lowest = ceil_class(std::max<std::size_t>(min_bytes, 1));
  if (lowest == 0) return GDDT_ERR_NO_MEMORY;
  std::lock_guard<std::mutex> lock(mutex_);
  bool retried = false;
  for (std::size_t size_class = std::max(floor_class(want_bytes), lowest); size_class >= lowest; size_class /= 2) {
    void* buffer = take_cached(size_class);
    if (buffer == nullptr && make_room(size_class)) {
      Status status = allocator_->allocate(size_class, &buffer);
      if (status == GDDT_ERR_NO_MEMORY && !retried) {
        // Cached buffers of other classes, or of the cache sharing the memory, may be what the
        // allocator is missing.
        retried = true;
        free_cached();
        if (sharing_ != nullptr) sharing_->free_cached_unless_busy();
        status = allocator_->allocate(size_class, &buffer);
      }
      if (status == GDDT_ERR_NO_MEMORY) continue;
      GDDT_CHECK(status);
      allocated_bytes_ += size_class;
    }
    if (buffer == nullptr) continue;
    leased_.insert(buffer);
    *ptr = buffer;
    *size = std::min(size_class, want_bytes);
    return GDDT_OK;
  }
  return GDDT_ERR_NO_MEMORY;
}

void SizeClassCache::give_back(void* ptr, std::size_t size) {
  if (ptr == nullptr) return;
  // acquire() reports more than half of the class, so rounding up finds the class again.
  const std::size_t size_class = ceil_class(size);
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_on_return_.erase(ptr) != 0) {
    allocator_->release(ptr, size_class);
    allocated_bytes_ -= size_class;
    return;
  }
  leased_.erase(ptr);
  cached_[size_class].push_back(Cached{ptr, ++returns_});
  cached_bytes_ += size_class;
}

void SizeClassCache::share_memory(SizeClassCache* a, SizeClassCache* b) {
  a->sharing_ = b;
  b->sharing_ = a;
}

void SizeClassCache::free_cached_unless_busy() {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (lock.owns_lock()) free_cached();
}

void SizeClassCache::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  free_cached();
  free_on_return_.insert(leased_.begin(), leased_.end());
  leased_.clear();
}

std::uint64_t SizeClassCache::allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return allocated_bytes_;
}

std::uint64_t SizeClassCache::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}

// The most recently returned buffer of the class: the one likeliest still in the caches.
void* SizeClassCache::take_cached(std::size_t size_class) {
  auto found = cached_.find(size_class);
  if (found == cached_.end() || found->second.empty()) return nullptr;
  void* buffer = found->second.back().buffer;
  found->second.pop_back();
  cached_bytes_ -= size_class;
  return buffer;
}

// Frees cached buffers until a new buffer of `size_class` fits the limit; false when even an
// empty cache would not make it fit. Those returned longest ago go first: freeing the largest
// first freed the very buffers a program alternating between two large sizes was about to take
// again, so that each of its messages allocated and pinned anew (16 MiB ping-pongs after windows
// of 4 MiB ones on two H100s: 22.9 ms a message against 2.5 ms with the limit out of reach).
bool SizeClassCache::make_room(std::size_t size_class) {
  if (allocated_bytes_ - cached_bytes_ + size_class > limit_bytes_) return false;
  while (allocated_bytes_ + size_class > limit_bytes_) free_oldest_cached();
  return true;
}

void SizeClassCache::free_oldest_cached() {
  auto oldest = cached_.end();
  for (auto entry = cached_.begin(); entry != cached_.end(); ++entry)
    if (!entry->second.empty() &&
        (oldest == cached_.end() || entry->second.front().returned < oldest->second.front().returned))
      oldest = entry;
  if (oldest == cached_.end()) return;
  allocator_->release(oldest->second.front().buffer, oldest->first);
  oldest->second.pop_front();
  allocated_bytes_ -= oldest->first;
  cached_bytes_ -= oldest->first;
}

void SizeClassCache::free_cached() {
  for (auto& [size_class, buffers] : cached_) {
    for (const Cached& cached : buffers) allocator_->release(cached.buffer, size_class);
    allocated_bytes_ -= size_class * buffers.size();
  }
  cached_.clear();
  cached_bytes_ = 0;
}

namespace {

// Buffers start at multiples of this within a slab, as cudaMalloc's own allocations do.
constexpr std::size_t kSlabAlignment = 256;

}  // namespace

SlabAllocator::SlabAllocator(Allocator* backing, std::size_t slab_bytes, std::uint64_t most_slab_bytes,
                             std::size_t least_direct)
    : backing_(backing), slab_bytes_(slab_bytes), most_slab_bytes_(most_slab_bytes), least_direct_(least_direct) {}

SlabAllocator::~SlabAllocator() {
  for (auto& [base, slab] : slabs_) backing_->release(slab.base, slab_bytes_);
}

Status SlabAllocator::allocate(std::size_t bytes, void** ptr) {
  if (bytes > slab_bytes_ / 2) return backing_->allocate(std::max(bytes, least_direct_), ptr);
  const std::size_t span = (bytes + kSlabAlignment - 1) / kSlabAlignment * kSlabAlignment;
  if (current_ == nullptr || current_->used + span > slab_bytes_) {
    current_ = nullptr;
    void* base = nullptr;
    const bool room = (slabs_.size() + 1) * std::uint64_t{slab_bytes_} <= most_slab_bytes_;
    // A slab may not fit where the buffer alone does.
    if (!room || backing_->allocate(slab_bytes_, &base) != GDDT_OK)
      return bytes < least_direct_ ? GDDT_ERR_NO_MEMORY : backing_->allocate(bytes, ptr);
    current_ = &slabs_[reinterpret_cast<std::uintptr_t>(base)];
    current_->base = static_cast<char*>(base);
  }
  *ptr = current_->base + current_->used;
  current_->used += span;
  ++current_->live;
  return GDDT_OK;
}

void SlabAllocator::release(void* ptr, std::size_t bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  auto it = slabs_.upper_bound(address);
  if (it == slabs_.begin() || address >= std::prev(it)->first + slab_bytes_) {
    backing_->release(ptr, std::max(bytes, least_direct_));
    return;
  }
  --it;
  if (--it->second.live != 0) return;
  if (&it->second == current_) current_ = nullptr;
  backing_->release(it->second.base, slab_bytes_);
  slabs_.erase(it);
}

namespace {

// Freed ranges leave the memory-type cache first, so a later allocation at the same
// addresses is classified afresh.
class DeviceAllocator final : public Allocator {
 public:
  explicit DeviceAllocator(int device) : device_(device) {}
  Status allocate(std::size_t bytes, void** ptr) override { return gpu::device_alloc(device_, bytes, ptr); }
  void release(void* ptr, std::size_t bytes) override {
    memory::invalidate(ptr, bytes);
    gpu::device_free(device_, ptr);
  }

 private:
  int device_;
};

class PinnedAllocator final : public Allocator {
 public:
  Status allocate(std::size_t bytes, void** ptr) override {
    counters::add(counters::Counter::kPinnedPoolAllocations, 1);
    return gpu::pinned_alloc(bytes, ptr);
  }
  void release(void* ptr, std::size_t bytes) override {
    memory::invalidate(ptr, bytes);
    gpu::pinned_free(ptr);
  }
};

// Device scratch comes from slabs of this size (see SlabAllocator).
constexpr std::size_t kDeviceSlabBytes = 64 << 20;

// The least allocation of the kShared pool: CUDA carves smaller ones out of shared 2 MiB blocks,
// which CUDA IPC opens as one, and a receiver can open a block once. A block holding both scratch
// gddt maps and memory a CUDA-aware library maps itself was opened twice, and UCX aborted
// ("resource already mapped"; p2p_storm with 8 MiB pools through the bundle, two H200s, run XU).
// Its slabs divide its limit (up to rounding to 2 MiB), at most kDeviceSlabBytes each, so that a
// limit that is no multiple of that, or smaller, still fills with slabs.
constexpr std::size_t kSharedLeastAllocation = 2 << 20;

std::size_t shared_slab_bytes() {
  const std::uint64_t most = shared_most();
  const std::uint64_t slabs = std::max<std::uint64_t>(1, (most + kDeviceSlabBytes - 1) / kDeviceSlabBytes);
  const std::uint64_t each = most / slabs / kSharedLeastAllocation * kSharedLeastAllocation;
  return static_cast<std::size_t>(std::max<std::uint64_t>(each, kSharedLeastAllocation));
}

struct Pools {
  PinnedAllocator pinned_allocator;
  SizeClassCache pinned{&pinned_allocator, config::settings().pool_pinned_max};
  std::vector<std::unique_ptr<DeviceAllocator>> device_allocators;
  std::vector<std::unique_ptr<SlabAllocator>> device_slabs;
  std::vector<std::unique_ptr<SizeClassCache>> devices;
  std::vector<std::unique_ptr<SlabAllocator>> shared_slabs;
  std::vector<std::unique_ptr<SizeClassCache>> shared;

  Pools() {
    const std::uint64_t most = config::settings().pool_device_max;
    for (int device = 0; device < gpu::device_count(); ++device) {
      device_allocators.push_back(std::make_unique<DeviceAllocator>(device));
      Allocator* backing = device_allocators.back().get();
      device_slabs.push_back(std::make_unique<SlabAllocator>(backing, kDeviceSlabBytes, most));
      devices.push_back(std::make_unique<SizeClassCache>(device_slabs.back().get(), most));
      shared_slabs.push_back(
          std::make_unique<SlabAllocator>(backing, shared_slab_bytes(), shared_most(), kSharedLeastAllocation));
      shared.push_back(std::make_unique<SizeClassCache>(shared_slabs.back().get(), shared_most()));
      SizeClassCache::share_memory(devices.back().get(), shared.back().get());
    }
  }
};

// Never destroyed: freeing CUDA memory from a static destructor can run after the driver
// has shut down.
Pools& pools() {
  static Pools* instance = new Pools();
  return *instance;
}

SizeClassCache* pool_for(Where where, int device) {
  if (where == Where::kPinned) return &pools().pinned;
  if (device < 0 || device >= gpu::device_count()) return nullptr;
  const auto index = static_cast<std::size_t>(device);
  return where == Where::kShared ? pools().shared[index].get() : pools().devices[index].get();
}

}  // namespace

Lease::Lease(Lease&& other) noexcept
    : data_(other.data_), size_(other.size_), where_(other.where_), device_(other.device_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    size_ = other.size_;
    where_ = other.where_;
    device_ = other.device_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

void Lease::release() {
  if (data_ == nullptr) return;
  pool_for(where_, device_)->give_back(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

Status acquire(Where where, int device, std::size_t want_bytes, std::size_t min_bytes, Lease* lease) {
  lease->release();
  if (!gpu::available()) return GDDT_ERR_NO_DEVICE;
  SizeClassCache* pool = pool_for(where, device);
  if (pool == nullptr) return GDDT_ERR_INVALID_ARG;
  GDDT_CHECK(pool->acquire(want_bytes, min_bytes, &lease->data_, &lease->size_));
  lease->where_ = where;
  lease->device_ = device;
  return GDDT_OK;
}

std::uint64_t shared_most() { return config::settings().pool_device_max / 2; }

void trim() {
  if (!gpu::available()) return;
  pools().pinned.trim();
  for (auto& pool : pools().devices) pool->trim();
  for (auto& pool : pools().shared) pool->trim();
}

}  // namespace gddt::pool
