// Memory-type classification with a cache of known allocation ranges in front of the
// driver query. A cache miss always asks the driver: buffers allocated before gddt loaded
// are classified correctly.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/address_space.hpp"
#include "core/status.hpp"

namespace gddt::memory {

struct Kind {
  gddt_memory_type_t type = GDDT_MEMORY_HOST;
  int device = -1;

  bool host_accessible() const { return type == GDDT_MEMORY_HOST || type == GDDT_MEMORY_PINNED || type == GDDT_MEMORY_MANAGED; }
  // By the CUDA backend's kernels.
  bool device_accessible() const {
    return type == GDDT_MEMORY_PINNED || type == GDDT_MEMORY_DEVICE || type == GDDT_MEMORY_MANAGED;
  }
  bool is_device() const { return type == GDDT_MEMORY_DEVICE || type == GDDT_MEMORY_MANAGED; }
};

// Memory of kind GDDT_MEMORY_OPENCL, which no address names: a cl_mem is a handle. The datatype's
// byte 0 (the `buf` of an MPI call) is `offset` bytes into `buffer`; `queue` (a cl_command_queue of
// the buffer's context) orders the moves. A backend's `typed` pointer points to this description
// instead of the data. The classification door (mpi/classify.hpp) finds it by the datatype.
struct OpenclBuffer {
  void* buffer = nullptr;
  void* queue = nullptr;
  std::int64_t offset = 0;
};

// Pages classify() found to be host memory, direct-mapped and lock-free, each valid for the
// address-space epoch it was found in. A slot is one word, (page << 28) | epoch mod 2^28, so
// a reader never sees half an entry; user-space page numbers fit in 35 bits on x86-64 and
// aarch64.
class HostPageTable {
 public:
  bool contains(std::uintptr_t address) const {
    const std::uintptr_t page = address >> kPageShift;
    return slots_[page % kSlots].load(std::memory_order_relaxed) == key(page, address_space::epoch());
  }
  void insert(std::uintptr_t address, std::uint64_t epoch) {
    const std::uintptr_t page = address >> kPageShift;
    slots_[page % kSlots].store(key(page, epoch), std::memory_order_relaxed);
  }

 private:
  static constexpr int kPageShift = 12;
  static constexpr std::size_t kSlots = 4096;
  static std::uint64_t key(std::uintptr_t page, std::uint64_t epoch) {
    return (static_cast<std::uint64_t>(page) << 28) | (epoch & ((std::uint64_t{1} << 28) - 1));
  }
  std::atomic<std::uint64_t> slots_[kSlots] = {};
};
extern HostPageTable host_page_table;

// True when `ptr` is known to be host memory without asking anything: cheap enough for the
// interposer's hot path, which calls classify() when this says no.
inline bool known_host(const void* ptr) { return host_page_table.contains(reinterpret_cast<std::uintptr_t>(ptr)); }

// Classifies the byte at `ptr`. Without a usable GPU every address is host and this costs
// a branch.
Status classify(const void* ptr, Kind* kind);

// The GPU of the latest device or managed memory classify() found (or note_device_memory was
// told of), -1 before the first: from then on gddt readies each committed datatype for that GPU
// at MPI_Type_commit (mpi/classify.hpp), which a program that never moves device data does not
// pay for, on the GPU its data is on (a thread that never chose a device would name GPU 0).
int device_memory_seen();
void note_device_memory(const Kind& kind);

// Makes classify()'s one-time check of the driver's mappings now. The check frees device
// memory, which waits for every kernel running on the device: a kernel that waits on gddt's
// host side (the device API) must not be running when it happens.
void settle_caching();

// Forgets cached ranges overlapping [ptr, ptr+bytes) (bytes 0: the range holding ptr); for
// callers that know memory was freed.
void invalidate(const void* ptr, std::size_t bytes);

// Cache statistics for gddt-info and tests.
struct Stats {
  unsigned long long hits = 0, misses = 0, entries = 0;
};
Stats stats();

}  // namespace gddt::memory
