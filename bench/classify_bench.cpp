// Cost of memory::classify. On pageable host memory (the answer every host-only MPI call
// needs) it is one branch without a GPU, and a driver query with one, since host answers
// are never cached. On device memory it is a cache hit once the range is known.
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/gpu.hpp"
#include "core/memory.hpp"

namespace {

// Classifies addresses spread over [base, base + 1 MiB) and prints ns/call.
gddt_memory_type_t time_classify(const char* label, const char* base, int calls) {
  gddt::memory::Kind kind;
  // The first call reads the settings, probes CUDA and fills the cache; keep it out.
  gddt::memory::classify(base, &kind);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) gddt::memory::classify(base + (i & 0xfffff), &kind);
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  std::printf("memory::classify(%s), GPU %s: %.2f ns/call over %d calls\n", label,
              gddt::gpu::available() ? "available" : "unavailable", elapsed.count() / calls, calls);
  return kind.type;
}

}  // namespace

int main() {
  std::vector<char> host(1 << 20);
  const bool gpu = gddt::gpu::available();
  // A driver query costs about a hundred times a branch.
  if (time_classify("host pointer", host.data(), gpu ? 200'000 : 10'000'000) != GDDT_MEMORY_HOST) return 1;
  if (!gpu) return 0;
  void* device = nullptr;
  if (gddt::gpu::device_alloc(0, host.size(), &device) != GDDT_OK) return 1;
  gddt_memory_type_t type = time_classify("device pointer", static_cast<const char*>(device), 10'000'000);
  gddt::memory::invalidate(device, host.size());
  gddt::gpu::device_free(0, device);
  return type == GDDT_MEMORY_DEVICE ? 0 : 1;
}
