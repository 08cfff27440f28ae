// From MPI datatype handles to canonical layouts: decoding through
// MPI_Type_get_envelope/contents, and the thread-safe cache of analyses keyed by handle.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>

#include "type/layout.hpp"

namespace gddt::type {

using LayoutPtr = std::shared_ptr<const Layout>;

// Decodes `datatype` (named or derived, committed or not) into a canonical layout whose size
// is the library's and whose lb/extent are the MPI standard's: the library's own where they
// differ from the standard's only by the epsilon padding it may choose, the standard's where
// the library gets them wrong (bounds.hpp). GDDT_ERR_INVALID_TYPE for MPI_DATATYPE_NULL,
// GDDT_ERR_UNSUPPORTED for constructors gddt cannot express (the caller forwards to MPI).
Status decode(MPI_Datatype datatype, Layout* out);

// The cached analysis of `datatype`, decoding it on first use (types committed before gddt
// was loaded are analysed lazily this way). Thread-safe.
Status lookup(MPI_Datatype datatype, LayoutPtr* out);

// Called by the interposed MPI_Type_commit after the library committed the type: records it
// as committed and drops any entry left from an earlier type with the same handle. The
// analysis waits for the first lookup.
void on_commit(MPI_Datatype datatype);

// Called by the interposed MPI_Type_free before the library frees the type: evicts it and
// remembers the handle as freed until it is committed again, unless the program still holds
// another reference to it (on_reference).
void on_free(MPI_Datatype datatype);

// Called for a datatype a constructor just made: whatever the cache knew of its handle belonged
// to a type freed before, which the library may have made the handle of this one.
void on_made(MPI_Datatype datatype);

// Called for each derived datatype MPI_Type_get_contents returned: a reference the program
// must free, which leaves the type alive under the same handle where the library returns it.
void on_reference(MPI_Datatype datatype);

// The hot-path lookup: one shared lock. True when gddt knows `datatype` is committed (or
// freed: *status GDDT_ERR_INVALID_TYPE) and has its analysis; false when it must be asked
// about first (never seen committed, or not analysed yet).
bool find_committed(MPI_Datatype datatype, Status* status, LayoutPtr* out);

// Open MPI handles are pointers, MPICH handles ints: either fits the bits of a uint64.
inline std::uint64_t key_of(MPI_Datatype datatype) {
  static_assert(sizeof(MPI_Datatype) <= sizeof(std::uint64_t), "handle wider than 64 bits");
  std::uint64_t key = 0;
  std::memcpy(&key, &datatype, sizeof datatype);
  return key;
}

// The named datatypes seen so far whose element is one contiguous block at offset 0 and whose
// extent is its size (MPI_INT, MPI_BYTE, ...). Open addressing over a fixed table, lock-free;
// entries are only ever added (named types are few and never freed, so no answer goes stale).
class PlainNamedTable {
 public:
  bool contains(std::uint64_t key) const {
    const std::size_t first = home(key);
    for (std::size_t i = 0; i < kSlots; ++i) {
      const std::uint64_t slot = slots_[(first + i) % kSlots].load(std::memory_order_acquire);
      if (slot == key + 1) return true;
      if (slot == 0) return false;
    }
    return false;
  }
  // Only the key's first slot: no loop, so the inline hot path of the shims needs no register
  // beyond the scratch ones. False for a key that another took the slot of (rare: the slots
  // far outnumber the named types a program uses); the caller then asks contains().
  bool in_first_slot(std::uint64_t key) const { return slots_[home(key)].load(std::memory_order_acquire) == key + 1; }
  // The size of the key's type where it sits in its first slot; 0 otherwise (or not written yet).
  std::uint64_t size_in_first_slot(std::uint64_t key) const {
    const std::size_t first = home(key);
    return slots_[first].load(std::memory_order_acquire) == key + 1 ? sizes_[first].load(std::memory_order_acquire) : 0;
  }
  void insert(std::uint64_t key, std::uint64_t size) {
    const std::size_t first = home(key);
    for (std::size_t i = 0; i < kSlots; ++i) {
      std::uint64_t expected = 0;
      const std::size_t at = (first + i) % kSlots;
      if (slots_[at].compare_exchange_strong(expected, key + 1)) sizes_[at].store(size, std::memory_order_release);
      if (expected == 0 || expected == key + 1) return;
    }
  }

 private:
  static constexpr std::size_t kSlots = 1024;
  // The key's first slot, from its bits mixed (Fibonacci hashing): Open MPI's named types are
  // 512-byte objects side by side, so their addresses modulo 256 are all one slot, and every
  // named type a program used lengthened the probe of the next.
  static std::size_t home(std::uint64_t key) { return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 54); }
  static_assert(kSlots == 1024, "home() takes the top 10 bits of the mixed key");
  std::atomic<std::uint64_t> slots_[kSlots] = {};
  std::atomic<std::uint64_t> sizes_[kSlots] = {};
};
extern PlainNamedTable plain_named_table;

// True for a plain named datatype already seen: one load, no lock, for the hot path of host
// traffic.
inline bool is_plain_named(MPI_Datatype datatype) { return plain_named_table.contains(key_of(datatype)); }
// The same, for the shims' inline test: true only when the type sits in its first slot.
inline bool is_plain_named_quick(MPI_Datatype datatype) { return plain_named_table.in_first_slot(key_of(datatype)); }
// Its size, the same way (0 where the quick test would say false).
inline std::uint64_t plain_named_size_quick(MPI_Datatype datatype) {
  return plain_named_table.size_in_first_slot(key_of(datatype));
}


// True when `datatype` was freed through MPI_Type_free and not committed since.
bool is_freed(MPI_Datatype datatype);

// True when gddt saw `datatype` committed (or it is a named type).
bool is_known_committed(MPI_Datatype datatype);

// Drops every entry (MPI_Finalize).
void clear_cache();

struct CacheStats {
  unsigned long long hits = 0, misses = 0, entries = 0;
};
CacheStats cache_stats();

}  // namespace gddt::type
