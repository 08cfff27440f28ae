// Memory classification: a range cache in front of cudaPointerGetAttributes.
//
// What is cached: ranges of device, managed and pinned allocations, as the driver reports
// them (base and size); and pages the driver called pageable host memory (or any page, before
// the process has a CUDA context), each only for as long as the address space is unchanged
// (address_space.hpp): host memory can turn into device memory only after a new mapping, and
// every mapping the CUDA driver makes passes through gddt's mmap or, where UCX is loaded, its
// memory events. That is checked once per process (a device allocation must be seen mapping
// memory). Where it holds, the device ranges are checked the same way: one learnt before the
// latest mapping change is asked about again, so memory freed with cudaFree and reused by
// malloc is not taken for device memory. (Host memory registered with cudaHostRegister maps
// nothing and stays "host": right for every use, only slower than pinned memory could be.)
//
// Where the driver's mappings are not seen, nothing is cached: after cudaFree the driver may
// hand the same addresses to a new allocation of another kind (managed memory freed, device
// memory allocated in its place), and a cached range would send the CPU to device memory.
// Every classification then asks the driver.
#include "core/memory.hpp"

#include <atomic>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "core/address_space.hpp"
#include "core/config.hpp"
#include "core/gpu.hpp"

namespace gddt::memory {

HostPageTable host_page_table;

namespace {

struct Range {
  std::uintptr_t end;  // one past the last byte
  Kind kind;
  std::uint64_t epoch;  // address_space::epoch() when the driver described it
};

// Whether the CUDA driver's mappings are seen: the memory cache is on, UCX (where loaded) took the
// handler, and a device allocation moves the epoch.
bool mappings_seen() {
  if (!config::settings().memory_cache) return false;
  if (!address_space::sees_every_mapping()) {
    GDDT_LOG(kInfo, "UCX refused a memory event handler: memory classifications are not cached");
    return false;
  }
  const std::uint64_t before = address_space::epoch();
  void* probe = nullptr;
  // On the device the program uses: a context on another GPU would cost every rank memory there.
  const int device = gpu::current_device();
  if (is_error(gpu::device_alloc(device, std::size_t{64} << 20, &probe))) return false;
  gpu::device_free(device, probe);
  const bool seen = address_space::epoch() != before;
  GDDT_LOG(kInfo, "CUDA driver mappings %s: memory classifications %s cached", seen ? "seen" : "not seen",
           seen ? "are" : "are not");
  return seen;
}

// Whether answers may be cached, settled once a context exists.
bool answers_cacheable() {
  static const bool cacheable = [] {
    const bool seen = mappings_seen();
    // Host pages learnt before the context stood on the word of an epoch not to be trusted.
    if (!seen) address_space::forget_answers();
    return seen;
  }();
  return cacheable;
}

class RangeCache {
 public:
  // A range learnt at another epoch than `epoch` does not answer: the allocation may have
  // been freed and its addresses mapped again since (when the driver's mappings are seen).
  bool find(std::uintptr_t address, std::uint64_t epoch, Kind* kind) const {
    // With nothing cached (the common case for host-only traffic) skip the lock.
    if (entries_.load(std::memory_order_acquire) == 0) return false;
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto after = ranges_.upper_bound(address);
    if (after == ranges_.begin()) return false;
    const auto& [base, range] = *std::prev(after);
    if (address >= range.end || range.epoch != epoch) return false;
    *kind = range.kind;
    return true;
  }

  void insert(std::uintptr_t base, std::size_t size, Kind kind, std::uint64_t epoch) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    erase_overlapping(base, base + size);
    ranges_.emplace(base, Range{base + size, kind, epoch});
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

// No device, managed or pinned memory exists before the process has a CUDA context, and
// asking the runtime about a pointer could create one: hundreds of MiB on a GPU for each rank
// of a program that never uses CUDA. Creating a context maps memory, so where gddt sees the
// mappings a "none yet" answer holds for the address-space epoch it was found in (`epoch`, read
// before asking).
bool cuda_memory_possible(std::uint64_t epoch) {
  static std::atomic<std::uint64_t> none_at_epoch{~std::uint64_t{0}};
  if (none_at_epoch.load(std::memory_order_relaxed) == epoch) return false;
  if (gpu::context_exists()) return true;
  if (address_space::sees_every_mapping()) none_at_epoch.store(epoch, std::memory_order_relaxed);
  return false;
}

RangeCache& cache() {
  static RangeCache instance;
  return instance;
}

std::atomic<int> seen_device{-1};
std::atomic<unsigned long long> hit_count{0};
std::atomic<unsigned long long> miss_count{0};

}  // namespace

Status classify(const void* ptr, Kind* kind) {
  *kind = Kind{};
  if (!gpu::available() || known_host(ptr)) return GDDT_OK;
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  const std::uint64_t seen_at = address_space::epoch();
  if (!cuda_memory_possible(seen_at)) {
    // So the address is host memory until a context is made, which maps memory: the page goes
    // into the table the interposer's fast path reads, or every call of a program that never
    // makes one (host-only traffic with gddt preloaded) would come this long way.
    if (config::settings().memory_cache && address_space::sees_every_mapping())
      host_page_table.insert(address, seen_at);
    return GDDT_OK;
  }
  // Asked first: its one-time check maps memory, which moves the epoch.
  const bool caching = answers_cacheable();
  const std::uint64_t epoch = address_space::epoch();
  if (caching && cache().find(address, epoch, kind)) {
    hit_count.fetch_add(1, std::memory_order_relaxed);
    return GDDT_OK;
  }
  miss_count.fetch_add(1, std::memory_order_relaxed);
  gpu::PointerInfo info;
  GDDT_CHECK(gpu::query_pointer(ptr, &info));
  *kind = Kind{info.type, info.device};
  note_device_memory(*kind);
  if (info.type == GDDT_MEMORY_HOST) {
    if (caching) host_page_table.insert(address, epoch);
  } else if (caching && info.size != 0) {
    cache().insert(info.base, info.size, *kind, epoch);
  }
  return GDDT_OK;
}

int device_memory_seen() { return seen_device.load(std::memory_order_relaxed); }

void note_device_memory(const Kind& kind) {
  if (!kind.is_device()) return;
  const int device = kind.device >= 0 ? kind.device : gpu::current_device();
  if (device >= 0 && seen_device.load(std::memory_order_relaxed) != device)
    seen_device.store(device, std::memory_order_relaxed);
}

void settle_caching() {
  if (gpu::available() && cuda_memory_possible(address_space::epoch())) answers_cacheable();
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
    case GDDT_MEMORY_OPENCL: return "opencl";
  }
  return "unknown";
}
