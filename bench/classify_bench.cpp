// Cost of memory::classify on pageable host memory, the answer every host-only MPI call
// needs. Without a GPU it is one branch; with one it is a cache probe plus a driver query,
// since host answers are never cached.
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/gpu.hpp"
#include "core/memory.hpp"

int main() {
  std::vector<char> buffer(1 << 20);
  gddt::memory::Kind kind;
  // The first call reads the settings and probes CUDA; keep it out of the timing.
  gddt::memory::classify(buffer.data(), &kind);
  const int calls = gddt::gpu::available() ? 200'000 : 10'000'000;  // a driver query is ~1000x a branch
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    gddt::memory::classify(buffer.data() + (i & 0xfffff), &kind);
  }
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  std::printf("memory::classify(host pointer), GPU %s: %.2f ns/call over %d calls\n",
              gddt::gpu::available() ? "available" : "unavailable", elapsed.count() / calls, calls);
  return kind.type == GDDT_MEMORY_HOST ? 0 : 1;
}
