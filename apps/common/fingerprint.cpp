#include "fingerprint.hpp"

#include <cstring>

#include "device.hpp"
#include "hd.hpp"

namespace apps {
namespace {

// SplitMix64's finalizer: a word that changes changes its mix in every bit.
APPS_HD std::uint64_t mix(std::uint64_t index, std::uint32_t word) {
  std::uint64_t z = (index << 32 | word) + 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

#ifdef __CUDACC__
__global__ void fingerprint_kernel(const std::uint32_t* words, long long n, unsigned long long* sum) {
  std::uint64_t local = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    local += mix(static_cast<std::uint64_t>(i), words[i]);
  for (int lane = 16; lane > 0; lane /= 2) local += __shfl_down_sync(0xffffffffu, local, lane);
  if (threadIdx.x % 32 == 0) atomicAdd(sum, static_cast<unsigned long long>(local));
}
#endif

}  // namespace

std::uint64_t fingerprint(const void* data, std::size_t bytes) {
  const long long n = static_cast<long long>(bytes / 4);
  std::uint64_t sum = 0;
#ifdef __CUDACC__
  if (on_gpu()) {
    Buffer device_sum(MemoryKind::kDevice, sizeof sum);
    device_sum.fill(0);
    fingerprint_kernel<<<1024, 256>>>(static_cast<const std::uint32_t*>(data), n,
                                      reinterpret_cast<unsigned long long*>(device_sum.data()));
    synchronize();
    device_sum.download(&sum, sizeof sum);
    return sum;
  }
#endif
  for (long long i = 0; i < n; ++i) {
    std::uint32_t word;  // the bytes of a float or double: copied, not read through another type
    std::memcpy(&word, static_cast<const char*>(data) + 4 * i, sizeof word);
    sum += mix(static_cast<std::uint64_t>(i), word);
  }
  return sum;
}

}  // namespace apps
