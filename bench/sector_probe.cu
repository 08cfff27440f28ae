// What one GPU's memory allows the layouts of issue 44.6 (two ranks sharing a GPU, 4 MiB packed):
// the simplest kernels moving their 4-byte words (pack, unpack, typed to typed), against the copy
// of the packed bytes and against gddt's CUDA backend moving the same windows, whose results must
// equal the simple kernels' (each move compared). A 4-byte word lying alone in its 32-byte sector
// costs a whole sector (or more) of DRAM traffic however a kernel is written, so what the simple
// kernels reach shows what the memory allows (the vector's buffers fit the L2 cache). One move is
// the fastest of 20 with events around it (launch latency included); a window is 32 queued back to
// back on one stream, the same buffers each time (as gddt-bench does). `--once`: each move once,
// for a profiler (ncu).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "core/gpu.hpp"
#include "pack/engine.hpp"
#include "type/layout.hpp"

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;
constexpr int kWindow = 32;

// Word i of a side lies at base + (i / inner) * outer_stride + (i % inner) * stride bytes.
struct Shape {
  std::int64_t base = 0;
  std::int64_t inner = 1;
  std::int64_t stride = 4;
  std::int64_t outer_stride = 0;
};

__device__ __forceinline__ std::int64_t offset_of(const Shape& s, std::int64_t i) {
  return s.base + (i / s.inner) * s.outer_stride + (i % s.inner) * s.stride;
}

// n 4-byte words from one shape to another, eight loads in flight per thread before any store.
__global__ void __launch_bounds__(kThreads) move_words(const char* from, Shape fs, char* to, Shape ts, std::int64_t n) {
  constexpr int kUnroll = 8;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t base = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; base < n;
       base += step * kUnroll) {
    unsigned value[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = base + u * step;
      if (i < n) value[u] = *reinterpret_cast<const unsigned*>(from + offset_of(fs, i));
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = base + u * step;
      if (i < n) *reinterpret_cast<unsigned*>(to + offset_of(ts, i)) = value[u];
    }
  }
}

__global__ void __launch_bounds__(kThreads) copy_quads(const uint4* from, uint4* to, std::int64_t n) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n; i += step)
    to[i] = from[i];
}

#define PROBE_CHECK(call)                                                           \
  do {                                                                              \
    if (!(call)) {                                                                  \
      std::fprintf(stderr, "sector_probe: %s failed (%s)\n", #call,                 \
                   cudaGetErrorString(cudaGetLastError()));                         \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

struct Timing {
  double one_us;
  double window_gbps;
};

bool once = false;

// Times `work` (queues one move on `stream`) as the header says.
Timing measure(cudaStream_t stream, std::int64_t bytes, const std::function<bool()>& work) {
  if (once) {
    PROBE_CHECK(work());
    PROBE_CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
    return {0, 0};
  }
  cudaEvent_t start, stop;
  PROBE_CHECK(cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess);
  for (int warm = 0; warm < 5; ++warm) PROBE_CHECK(work());
  float best = 1e30f, ms = 0;
  for (int run = 0; run < 20; ++run) {
    cudaEventRecord(start, stream);
    PROBE_CHECK(work());
    cudaEventRecord(stop, stream);
    PROBE_CHECK(cudaEventSynchronize(stop) == cudaSuccess);
    cudaEventElapsedTime(&ms, start, stop);
    best = ms < best ? ms : best;
  }
  cudaEventRecord(start, stream);
  for (int run = 0; run < kWindow; ++run) PROBE_CHECK(work());
  cudaEventRecord(stop, stream);
  PROBE_CHECK(cudaEventSynchronize(stop) == cudaSuccess);
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return {best * 1e3, kWindow * static_cast<double>(bytes) / (ms * 1e-3) / 1e9};
}

// A layout of 4-byte words as both the simple kernel (Shape) and gddt (Layout) see it.
struct Case {
  const char* name;
  Shape shape;
  gddt::type::Layout layout;
  std::int64_t span;  // typed bytes from the buffer's start
};

const gddt::pack::Backend& cuda() { return gddt::pack::backend_at(gddt::pack::kCudaSlot); }

// Whether two device buffers hold the same `bytes`.
bool same(const char* a, const char* b, std::int64_t bytes) {
  std::vector<unsigned char> left(static_cast<std::size_t>(bytes)), right(left.size());
  PROBE_CHECK(cudaMemcpy(left.data(), a, left.size(), cudaMemcpyDeviceToHost) == cudaSuccess &&
              cudaMemcpy(right.data(), b, right.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  return left == right;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) once = once || std::strcmp(argv[i], "--once") == 0;
  setenv("GDDT_RESIDENT", "off", 0);
  if (!gddt::gpu::available()) {
    std::printf("sector_probe: no usable CUDA device: skipped\n");
    return 0;
  }
  constexpr std::int64_t kWords = 1 << 20;  // 4 MiB packed
  constexpr std::int64_t kBytes = 4 * kWords;
  // gddt-bench's subarray3d at 4 MiB: the x face inside one ghost layer of a [1026][1026][16]
  // float array, 1024 x 1024 words, each alone in a 64-byte row.
  constexpr std::int64_t kFace = 1024, kNx = 16, kNy = kFace + 2;
  constexpr std::int64_t kRow = kNx * 4, kPlane = kNy * kRow;
  std::vector<Case> cases(2);
  cases[0].name = "vector of 4 B (stride 8 B)";
  cases[0].shape = Shape{0, kWords, 8, 0};
  cases[0].span = 2 * kBytes;
  PROBE_CHECK(gddt::type::make_repeat(gddt::type::make_block(4), kWords, 8, &cases[0].layout) == GDDT_OK);
  cases[1].name = "3-D x face (4 B in 64 B rows)";
  const std::int64_t face_base = kPlane + kRow + (kNx - 2) * 4;
  cases[1].shape = Shape{face_base, kFace, kRow, kPlane};
  cases[1].span = (kFace + 2) * kPlane;
  gddt::type::Layout column;
  PROBE_CHECK(gddt::type::make_repeat(gddt::type::make_block(4), kFace, kRow, &column) == GDDT_OK);
  gddt::type::Layout face;
  PROBE_CHECK(gddt::type::make_repeat(column, kFace, kPlane, &face) == GDDT_OK);
  cases[1].layout = gddt::type::make_shifted(face, face_base);

  cudaDeviceProp properties;
  PROBE_CHECK(cudaGetDeviceProperties(&properties, 0) == cudaSuccess);
  const int grid = properties.multiProcessorCount * kBlocksPerSm;
  cudaStream_t stream = nullptr;
  PROBE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  char *packed = nullptr, *packed_copy = nullptr, *packed_gddt = nullptr;
  PROBE_CHECK(cudaMalloc(&packed, kBytes) == cudaSuccess && cudaMalloc(&packed_copy, kBytes) == cudaSuccess &&
              cudaMalloc(&packed_gddt, kBytes) == cudaSuccess);
  PROBE_CHECK(cudaMemset(packed, 1, kBytes) == cudaSuccess);

  std::printf("%s, %d SMs; 4 MiB packed; one move: fastest of 20 (us); window: %d queued (GB/s of packed bytes)\n",
              properties.name, properties.multiProcessorCount, kWindow);
  const Timing engine = measure(stream, kBytes, [&] {
    return cudaMemcpyAsync(packed_copy, packed, kBytes, cudaMemcpyDeviceToDevice, stream) == cudaSuccess;
  });
  const Timing kernel_copy = measure(stream, kBytes, [&] {
    copy_quads<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(packed),
                                               reinterpret_cast<uint4*>(packed_copy), kBytes / 16);
    return cudaGetLastError() == cudaSuccess;
  });
  const auto row = [&](const char* layout, const char* move, const Timing& t) {
    if (once) return;
    std::printf("%-30s %-26s one %7.2f us  window %7.1f GB/s  %5.1f%% of the copy engine's\n", layout, move, t.one_us,
                t.window_gbps, 100 * t.window_gbps / engine.window_gbps);
  };
  row("contiguous", "copy engine", engine);
  row("contiguous", "kernel, 16-byte words", kernel_copy);

  const Shape dense{0, kWords, 4, 0};
  int wrong = 0;
  for (const Case& c : cases) {
    char *from = nullptr, *to = nullptr, *to_gddt = nullptr;
    PROBE_CHECK(cudaMalloc(&from, c.span) == cudaSuccess && cudaMalloc(&to, c.span) == cudaSuccess &&
                cudaMalloc(&to_gddt, c.span) == cudaSuccess);
    std::vector<unsigned char> pattern(static_cast<std::size_t>(c.span));
    for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<unsigned char>(i * 7 + i / 4093);
    PROBE_CHECK(cudaMemcpy(from, pattern.data(), pattern.size(), cudaMemcpyHostToDevice) == cudaSuccess);
    PROBE_CHECK(cudaMemset(to, 0, c.span) == cudaSuccess && cudaMemset(to_gddt, 0, c.span) == cudaSuccess);
    const gddt::pack::Window window{&c.layout, 1, 0, kBytes};
    const auto simple = [&](const char* f, Shape fs, char* t, Shape ts) {
      return [=] {
        move_words<<<grid, kThreads, 0, stream>>>(f, fs, t, ts, kWords);
        return cudaGetLastError() == cudaSuccess;
      };
    };
    const auto check = [&](const char* move, const char* mine, const char* theirs, std::int64_t bytes) {
      if (same(mine, theirs, bytes)) return;
      std::printf("%s, %s: gddt's result differs from the simple kernel's\n", c.name, move);
      wrong = 1;
    };
    row(c.name, "pack, simple kernel", measure(stream, kBytes, simple(from, c.shape, packed, dense)));
    row(c.name, "pack, gddt", measure(stream, kBytes, [&] {
          return cuda().pack(window, from, packed_gddt, stream) == GDDT_OK;
        }));
    check("pack", packed, packed_gddt, kBytes);
    // Both unpacks read the simple kernel's packed bytes into buffers zeroed alike.
    row(c.name, "unpack, simple kernel", measure(stream, kBytes, simple(packed, dense, to, c.shape)));
    row(c.name, "unpack, gddt", measure(stream, kBytes, [&] {
          return cuda().unpack(window, to_gddt, packed, stream) == GDDT_OK;
        }));
    check("unpack", to, to_gddt, c.span);
    PROBE_CHECK(cudaMemset(to, 0, c.span) == cudaSuccess && cudaMemset(to_gddt, 0, c.span) == cudaSuccess);
    row(c.name, "typed to typed, simple", measure(stream, kBytes, simple(from, c.shape, to, c.shape)));
    row(c.name, "typed to typed, gddt", measure(stream, kBytes, [&] {
          bool served = false;
          return cuda().transcribe(window, from, window, to_gddt, stream, &served) == GDDT_OK && served;
        }));
    check("typed to typed", to, to_gddt, c.span);
    cudaFree(from);
    cudaFree(to);
    cudaFree(to_gddt);
  }
  cudaFree(packed);
  cudaFree(packed_copy);
  cudaFree(packed_gddt);
  cudaStreamDestroy(stream);
  return wrong;
}
