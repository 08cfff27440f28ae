// How soon can the host learn that a small kernel finished? The floor under every
// non-contiguous message's latency (one pack completion on the sender, one unpack completion
// on the receiver). Also what a kernel that keeps running (as gddt's resident kernel does) costs
// per job: the host raises a mapped flag, the kernel moves 4 KiB and raises another.
// Medians of 2000 host-timed repetitions (50-200 for 4 MiB moves), microseconds, on GPU 0.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

__global__ void empty_kernel() {}

// Copies n 16-byte words; with `flag`, the last block to finish writes `value` there.
__global__ void copy_then_flag(const int4* src, int4* dst, int n, unsigned* flag, unsigned value) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) dst[i] = src[i];
  if (flag == nullptr) return;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    if (atomicAdd(flag + 1, 1u) + 1 == gridDim.x) *reinterpret_cast<volatile unsigned*>(flag) = value;
  }
}

__device__ unsigned long long load_relaxed_system(const unsigned long long* at) {
  unsigned long long value;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(at) : "memory");
  return value;
}

// Serves `jobs` jobs: waits for ask[0] to reach each job's number, copies `bytes` from `src`
// to `dst` with the whole block, fences at system scope from one thread and answers in ask[8].
__global__ void serve_jobs(unsigned long long* ask, const char* src, char* dst, int bytes, int jobs) {
  for (unsigned long long job = 1; job <= static_cast<unsigned long long>(jobs); ++job) {
    if (threadIdx.x == 0) {
      while (load_relaxed_system(ask) < job) {
      }
    }
    __syncthreads();
    for (int i = static_cast<int>(threadIdx.x) * 16; i < bytes; i += static_cast<int>(blockDim.x) * 16) {
      *reinterpret_cast<int4*>(dst + i) = __ldcv(reinterpret_cast<const int4*>(src + i));
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence_system();
      *reinterpret_cast<volatile unsigned long long*>(ask + 8) = job;
    }
  }
}

// Every other float of `n` pairs: a 4-byte vector's typed-to-typed move (the direct plane's read).
__global__ void every_other_float(const float* src, float* dst, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) dst[2 * i] = src[2 * i];
}

template <typename Step>
double median_us(Step step, int repetitions = 2000) {
  std::vector<double> times;
  for (int i = 0; i < repetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    step(i);
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

bool check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "completion_probe: %s: %s\n", what, cudaGetErrorString(error));
  return false;
}

}  // namespace

int main() {
  cudaStream_t stream;
  cudaEvent_t event;
  int4 *device_words, *mapped_words, *host_words;
  unsigned *flag, *device_flag;
  if (!check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate") ||
      !check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate") ||
      !check(cudaMalloc(&device_words, 1 << 20), "cudaMalloc") ||
      !check(cudaHostAlloc(&host_words, 1 << 20, cudaHostAllocMapped), "cudaHostAlloc") ||
      !check(cudaHostGetDevicePointer(&mapped_words, host_words, 0), "cudaHostGetDevicePointer") ||
      !check(cudaHostAlloc(&flag, 64, cudaHostAllocMapped), "cudaHostAlloc") ||
      !check(cudaHostGetDevicePointer(&device_flag, flag, 0), "cudaHostGetDevicePointer")) {
    return 1;
  }
  for (int i = 0; i < 100; ++i) {
    empty_kernel<<<1, 32, 0, stream>>>();
    cudaStreamSynchronize(stream);
  }
  std::printf("empty launch + cudaStreamSynchronize       %6.2f\n", median_us([&](int) {
                empty_kernel<<<1, 32, 0, stream>>>();
                cudaStreamSynchronize(stream);
              }));
  std::printf("empty launch alone (host time)             %6.2f\n",
              median_us([&](int) { empty_kernel<<<1, 32, 0, stream>>>(); }));
  cudaStreamSynchronize(stream);
  std::printf("empty launch + spin on cudaStreamQuery     %6.2f\n", median_us([&](int) {
                empty_kernel<<<1, 32, 0, stream>>>();
                while (cudaStreamQuery(stream) == cudaErrorNotReady) {
                }
              }));
  std::printf("empty launch + event + spin on query       %6.2f\n", median_us([&](int) {
                empty_kernel<<<1, 32, 0, stream>>>();
                cudaEventRecord(event, stream);
                while (cudaEventQuery(event) == cudaErrorNotReady) {
                }
              }));
  for (int words : {256, 4096}) {  // 4 KiB and 64 KiB
    const int blocks = std::max(1, std::min(words / 256, 132));
    std::printf("copy %2d KiB to mapped memory + sync        %6.2f\n", words / 64, median_us([&](int) {
                  copy_then_flag<<<blocks, 256, 0, stream>>>(device_words, mapped_words, words, nullptr, 0);
                  cudaStreamSynchronize(stream);
                }));
    std::printf("copy %2d KiB to mapped memory + flag spin   %6.2f\n", words / 64, median_us([&](int i) {
                  flag[1] = 0;
                  std::atomic_thread_fence(std::memory_order_seq_cst);
                  copy_then_flag<<<blocks, 256, 0, stream>>>(device_words, mapped_words, words, device_flag,
                                                             static_cast<unsigned>(i + 1));
                  while (*reinterpret_cast<volatile unsigned*>(flag) != static_cast<unsigned>(i + 1)) {
                  }
                }));
    cudaStreamSynchronize(stream);
    std::printf("cudaMemcpyAsync %2d KiB D2H + sync          %6.2f\n", words / 64, median_us([&](int) {
                  cudaMemcpyAsync(host_words, device_words, words * 16, cudaMemcpyDeviceToHost, stream);
                  cudaStreamSynchronize(stream);
                }));
  }
  std::printf("cudaStreamQuery (legacy default stream)    %6.2f\n",
              median_us([&](int) { cudaStreamQuery(cudaStreamLegacy); }));
  // The floor under a 4 MiB message of the direct plane on one GPU (issue 44.6): one kernel waited
  // for alone, against the same kernels and d2d-copy's 4 MiB copies queued 64 at a time.
  float* floats = nullptr;
  if (!check(cudaMalloc(&floats, 32 << 20), "cudaMalloc")) return 1;
  constexpr int kPairs = 1 << 20, kQueued = 64;
  // 528 blocks: four of 256 threads for each of an H100's or H200's 132 multiprocessors.
  auto strided = [&] { every_other_float<<<528, 256, 0, stream>>>(floats, floats + 2 * kPairs, kPairs); };
  std::printf("4 MiB every other float, launch + sync     %6.2f\n", median_us([&](int) {
                strided();
                cudaStreamSynchronize(stream);
              }, 200));
  std::printf("4 MiB every other float, queued (each)     %6.2f\n", median_us([&](int) {
                for (int k = 0; k < kQueued; ++k) strided();
                cudaStreamSynchronize(stream);
              }, 50) / kQueued);
  std::printf("4 MiB device copy, queued (each)           %6.2f\n", median_us([&](int) {
                for (int k = 0; k < kQueued; ++k)
                  cudaMemcpyAsync(floats + 4 * kPairs, floats, 4 << 20, cudaMemcpyDeviceToDevice, stream);
                cudaStreamSynchronize(stream);
              }, 50) / kQueued);
  unsigned long long *ask, *device_ask;
  if (!check(cudaHostAlloc(&ask, 128, cudaHostAllocMapped), "cudaHostAlloc") ||
      !check(cudaHostGetDevicePointer(&device_ask, ask, 0), "cudaHostGetDevicePointer")) {
    return 1;
  }
  struct Serving {
    const char* what;
    const char* src;
    char* dst;
    int bytes;
  };
  const auto* device_bytes = reinterpret_cast<const char*>(device_words);
  const Serving servings[] = {
      {"running kernel: flag round trip           ", device_bytes, reinterpret_cast<char*>(device_words) + 65536, 0},
      {"running kernel: 4 KiB device to pinned    ", device_bytes, reinterpret_cast<char*>(mapped_words), 4096},
      {"running kernel: 4 KiB pinned to device    ", reinterpret_cast<const char*>(mapped_words),
       reinterpret_cast<char*>(device_words) + 65536, 4096},
  };
  for (const Serving& s : servings) {
    ask[0] = ask[8] = 0;
    serve_jobs<<<1, 512, 0, stream>>>(device_ask, s.src, s.dst, s.bytes, 2000);
    if (!check(cudaGetLastError(), "serve_jobs launch")) return 1;  // nothing would answer
    const double us = median_us([&](int i) {
      const auto job = static_cast<unsigned long long>(i + 1);
      __atomic_store_n(&ask[0], job, __ATOMIC_RELEASE);
      while (__atomic_load_n(&ask[8], __ATOMIC_ACQUIRE) < job) {
      }
    });
    cudaStreamSynchronize(stream);
    std::printf("%s %6.2f\n", s.what, us);
  }
  return check(cudaGetLastError(), "a launch") ? 0 : 1;
}
