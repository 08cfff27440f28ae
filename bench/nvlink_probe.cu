// How fast can bytes cross NVLink between two GPUs of one process, without MPI: the copy engine
// (cudaMemcpyPeerAsync, queued on either GPU) against kernels on the receiving GPU that read the
// other's memory (words of 4 and 16 bytes, and the scatter of a 4-byte vector's unpack) and kernels
// on the sending GPU that write into the other's. The bound under any typed transfer between two
// GPUs (performance.md, issue 44's targets 2 and 3). One copy is the fastest of 20, events around
// it (launch latency included); a window is 32 queued back to back.
#include <cuda_runtime.h>

#include <cstdio>

namespace {

#define PROBE_CHECK(call)                                                          \
  do {                                                                             \
    const cudaError_t error = (call);                                              \
    if (error != cudaSuccess) {                                                    \
      std::printf("%s: %s\n", #call, cudaGetErrorString(error));                  \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

constexpr int kBlocksPerSm = 4;
constexpr int kThreads = 256;

// Copies n words, U loads in flight per thread before any store, word i to word kSpread * i: 1 a copy,
// 2 the unpack of a vector of 4-byte blocks at a stride of 8 bytes.
template <typename T, int U, int kSpread = 1>
__global__ void copy_words(const T* __restrict__ from, T* __restrict__ to, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t base = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; base < n; base += stride * U) {
    T value[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (base + u * stride < n) value[u] = from[base + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (base + u * stride < n) to[kSpread * (base + u * stride)] = value[u];
  }
}

template <typename Work>
int measure(cudaStream_t stream, size_t bytes, const char* name, Work work) {
  cudaEvent_t start, stop;
  PROBE_CHECK(cudaEventCreate(&start));
  PROBE_CHECK(cudaEventCreate(&stop));
  for (int warm = 0; warm < 5; ++warm) work();
  PROBE_CHECK(cudaStreamSynchronize(stream));
  float best = 1e30f, ms = 0;
  for (int run = 0; run < 20; ++run) {
    cudaEventRecord(start, stream);
    work();
    cudaEventRecord(stop, stream);
    PROBE_CHECK(cudaEventSynchronize(stop));
    cudaEventElapsedTime(&ms, start, stop);
    best = ms < best ? ms : best;
  }
  constexpr int kWindow = 32;
  cudaEventRecord(start, stream);
  for (int run = 0; run < kWindow; ++run) work();
  cudaEventRecord(stop, stream);
  PROBE_CHECK(cudaEventSynchronize(stop));
  PROBE_CHECK(cudaGetLastError());
  cudaEventElapsedTime(&ms, start, stop);
  std::printf("%5zu KiB  %-52s one %7.2f us  window %6.1f GB/s\n", bytes >> 10, name, best * 1e3,
              kWindow * static_cast<double>(bytes) / (ms * 1e-3) / 1e9);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return 0;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 2) {
    std::printf("nvlink_probe: needs two GPUs, found %d\n", devices);
    return 0;
  }
  int access = 0;
  PROBE_CHECK(cudaDeviceCanAccessPeer(&access, 1, 0));
  if (!access) {
    std::printf("nvlink_probe: GPU 1 cannot access GPU 0\n");
    return 0;
  }
  PROBE_CHECK(cudaSetDevice(0));
  PROBE_CHECK(cudaDeviceEnablePeerAccess(1, 0));
  PROBE_CHECK(cudaSetDevice(1));
  PROBE_CHECK(cudaDeviceEnablePeerAccess(0, 0));
  cudaDeviceProp properties;
  PROBE_CHECK(cudaGetDeviceProperties(&properties, 1));
  const int grid = properties.multiProcessorCount * kBlocksPerSm;
  for (const size_t bytes : {size_t{1} << 20, size_t{4} << 20}) {
    char *sent = nullptr, *received = nullptr, *typed = nullptr;
    PROBE_CHECK(cudaSetDevice(0));
    PROBE_CHECK(cudaMalloc(&sent, bytes));
    cudaStream_t on_sender;
    PROBE_CHECK(cudaStreamCreate(&on_sender));
    PROBE_CHECK(cudaSetDevice(1));
    PROBE_CHECK(cudaMalloc(&received, bytes));
    PROBE_CHECK(cudaMalloc(&typed, 2 * bytes));
    cudaStream_t on_receiver;
    PROBE_CHECK(cudaStreamCreate(&on_receiver));
    const size_t words = bytes / 4, quads = bytes / 16;
    int failed = 0;
    failed |= measure(on_receiver, bytes, "copy engine, queued on the receiving GPU",
                      [&] { cudaMemcpyPeerAsync(received, 1, sent, 0, bytes, on_receiver); });
    failed |= measure(on_receiver, bytes, "receiving GPU's kernel reads, 4-byte words", [&] {
      copy_words<unsigned, 8><<<grid, kThreads, 0, on_receiver>>>((const unsigned*)sent, (unsigned*)received, words);
    });
    failed |= measure(on_receiver, bytes, "receiving GPU's kernel reads, 16-byte words", [&] {
      copy_words<uint4, 4><<<grid, kThreads, 0, on_receiver>>>((const uint4*)sent, (uint4*)received, quads);
    });
    failed |= measure(on_receiver, bytes, "receiving GPU's vector unpack reading across", [&] {
      copy_words<unsigned, 8, 2><<<grid, kThreads, 0, on_receiver>>>((const unsigned*)sent, (unsigned*)typed, words);
    });
    failed |= measure(on_receiver, bytes, "receiving GPU's vector unpack of its own bytes", [&] {
      copy_words<unsigned, 8, 2><<<grid, kThreads, 0, on_receiver>>>((const unsigned*)received, (unsigned*)typed, words);
    });
    PROBE_CHECK(cudaSetDevice(0));
    failed |= measure(on_sender, bytes, "copy engine, queued on the sending GPU",
                      [&] { cudaMemcpyPeerAsync(received, 1, sent, 0, bytes, on_sender); });
    failed |= measure(on_sender, bytes, "sending GPU's kernel writes, 16-byte words", [&] {
      copy_words<uint4, 4><<<grid, kThreads, 0, on_sender>>>((const uint4*)sent, (uint4*)received, quads);
    });
    if (failed) return 1;
    cudaStreamDestroy(on_sender);
    cudaFree(sent);
    PROBE_CHECK(cudaSetDevice(1));
    cudaStreamDestroy(on_receiver);
    cudaFree(received);
    cudaFree(typed);
  }
  return 0;
}
