// Memory-type classification with a cache of known allocation ranges in front of the
// driver query. A cache miss always asks the driver: buffers allocated before gddt loaded
// are classified correctly.
#pragma once

#include <cstddef>

#include "core/status.hpp"

namespace gddt::memory {

struct Kind {
  gddt_memory_type_t type = GDDT_MEMORY_HOST;
  int device = -1;

  bool host_accessible() const { return type == GDDT_MEMORY_HOST || type == GDDT_MEMORY_PINNED || type == GDDT_MEMORY_MANAGED; }
  bool device_accessible() const { return type != GDDT_MEMORY_HOST; }
  bool is_device() const { return type == GDDT_MEMORY_DEVICE || type == GDDT_MEMORY_MANAGED; }
};

// Classifies the byte at `ptr`. Without a usable GPU every address is host and this costs
// a branch.
Status classify(const void* ptr, Kind* kind);

// Forgets cached ranges overlapping [ptr, ptr+bytes) (bytes 0: the range holding ptr); for
// callers that know memory was freed.
void invalidate(const void* ptr, std::size_t bytes);

// Cache statistics for gddt-info and tests.
struct Stats {
  unsigned long long hits = 0, misses = 0, entries = 0;
};
Stats stats();

}  // namespace gddt::memory
