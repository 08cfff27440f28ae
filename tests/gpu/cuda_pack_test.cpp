// The CUDA pack backend on a GPU, byte for byte against the host walk: random layouts, counts
// and window splits with the typed buffer in device, managed or pinned host memory; packed
// buffers and the typed buffer's holes are poisoned before and checked after. Also checks
// that one call is one launch (by capturing it into a graph) and the 64-bit index paths.
// Exits 77 (skipped) without a usable GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "core/gpu.hpp"
#include "random_cases.hpp"

namespace gddt {
namespace {

using testing::Case;

#define CUDA_ASSERT(call)                                                                   \
  do {                                                                                      \
    const cudaError_t cuda_error_ = (call);                                                 \
    ASSERT_EQ(cuda_error_, cudaSuccess) << #call << ": " << cudaGetErrorString(cuda_error_); \
  } while (0)

enum class Memory { kDevice, kManaged, kPinned };

const char* memory_name(Memory m) {
  switch (m) {
    case Memory::kDevice: return "device";
    case Memory::kManaged: return "managed";
    case Memory::kPinned: return "pinned host";
  }
  return "?";
}

char* allocate(Memory m, std::size_t bytes) {
  void* p = nullptr;
  cudaError_t error = cudaSuccess;
  switch (m) {
    case Memory::kDevice: error = cudaMalloc(&p, bytes); break;
    case Memory::kManaged: error = cudaMallocManaged(&p, bytes); break;
    case Memory::kPinned: error = cudaMallocHost(&p, bytes); break;
  }
  if (error != cudaSuccess) {
    std::fprintf(stderr, "allocating %zu bytes of %s memory: %s\n", bytes, memory_name(m), cudaGetErrorString(error));
    std::abort();
  }
  return static_cast<char*>(p);
}

void release(Memory m, char* p) {
  if (m == Memory::kPinned) {
    cudaFreeHost(p);
  } else {
    cudaFree(p);
  }
}

// A buffer of one memory kind, freed on scope exit.
struct Buffer {
  Buffer(Memory kind, std::size_t size) : memory(kind), bytes(size), data(allocate(kind, size)) {}
  ~Buffer() { release(memory, data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Memory memory;
  std::size_t bytes;
  char* data;
};

// The environment check_case() drives: the backend on a stream, buffers of chosen kinds.
struct CudaEnv {
  CudaEnv(Buffer* typed_buffer_, Buffer* packed_buffer_, cudaStream_t s)
      : typed(typed_buffer_), packed(packed_buffer_), stream(s) {}
  Buffer* typed;
  Buffer* packed;
  cudaStream_t stream;
  std::string error;

  char* typed_buffer() { return typed->data; }
  char* packed_buffer() { return packed->data; }
  // cudaMemcpy runs on the legacy default stream, which the test's blocking stream waits for.
  void upload(char* dst, const char* src, std::int64_t bytes) { note(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault)); }
  void download(char* dst, const char* src, std::int64_t bytes) { note(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault)); }
  void synchronize() { note(cudaStreamSynchronize(stream)); }
  Status pack(const pack::Window& w, const void* t, void* p) { return pack::cuda_backend().pack(w, t, p, stream); }
  Status unpack(const pack::Window& w, void* t, const void* p) { return pack::cuda_backend().unpack(w, t, p, stream); }
  void note(cudaError_t e) {
    if (e != cudaSuccess && error.empty()) error = cudaGetErrorString(e);
  }
};

class CudaPack : public ::testing::Test {
 protected:
  void SetUp() override { CUDA_ASSERT(cudaStreamCreate(&stream_)); }
  void TearDown() override { cudaStreamDestroy(stream_); }

  // Runs `cases` random cases; stops after a few failures, each printed in full.
  void run_random(Memory typed_kind, Memory packed_kind, int cases, std::uint64_t seed_offset) {
    const std::uint64_t seed = testing::test_seed() + seed_offset;
    std::printf("[ seed %llu ] typed %s, packed %s, %d cases (GDDT_TEST_SEED changes the seed)\n",
                static_cast<unsigned long long>(testing::test_seed()), memory_name(typed_kind),
                memory_name(packed_kind), cases);
    testing::LayoutGenerator gen(seed);
    Buffer typed(typed_kind, kTypedBytes), packed(packed_kind, kPackedBytes);
    CudaEnv env(&typed, &packed, stream_);
    int failures = 0;
    for (int i = 0; i < cases && failures < 5; ++i) {
      // Every 20th case is large enough for many blocks of threads and the grid-stride loop.
      const std::int64_t max_stream = i % 20 == 19 ? kPackedBytes / 2 : 256 << 10;
      const Case c = testing::random_case(i, &gen, max_stream, kTypedBytes / 2);
      const ::testing::AssertionResult result = testing::check_case(c, &env, &gen.rng());
      if (!env.error.empty()) FAIL() << "CUDA error: " << env.error << "\n" << c.describe();
      if (!result) {
        ++failures;
        ADD_FAILURE() << result.message() << "\n  typed " << memory_name(typed_kind) << ", packed "
                      << memory_name(packed_kind) << ", seed " << testing::test_seed();
      }
    }
  }

  static constexpr std::size_t kTypedBytes = 48 << 20;
  static constexpr std::size_t kPackedBytes = 16 << 20;
  cudaStream_t stream_ = nullptr;
};

TEST_F(CudaPack, RandomLayoutsOnDeviceMemory) { run_random(Memory::kDevice, Memory::kDevice, 2500, 0); }
TEST_F(CudaPack, RandomLayoutsOnManagedTypedMemory) { run_random(Memory::kManaged, Memory::kDevice, 300, 1); }
TEST_F(CudaPack, RandomLayoutsOnPinnedTypedMemory) { run_random(Memory::kPinned, Memory::kDevice, 300, 2); }
TEST_F(CudaPack, RandomLayoutsIntoPinnedPackedMemory) { run_random(Memory::kDevice, Memory::kPinned, 200, 3); }

// A call is one launch (a kernel or one copy), with no synchronization and no allocation: it
// is captured into a graph in the global capture mode, which refuses both, and the graph must
// hold exactly one node.
TEST_F(CudaPack, EachCallIsOneLaunch) {
  testing::LayoutGenerator gen(testing::test_seed() + 4);
  Buffer typed(Memory::kDevice, 8 << 20), packed(Memory::kDevice, 1 << 20);
  for (int i = 0; i < 300; ++i) {
    const Case c = testing::random_case(i, &gen, 64 << 10, 4 << 20);
    const testing::CaseGeometry g(c);
    char* t = typed.data + g.typed_origin;
    char* p = packed.data + g.packed_start;
    // The first call of a block list uploads its tables, once; that one is not captured.
    ASSERT_EQ(pack::cuda_backend().pack(c.window(0), t, p, stream_), GDDT_OK) << c.describe();
    CUDA_ASSERT(cudaStreamSynchronize(stream_));
    for (std::size_t w = 0; w < c.windows.size() && w < 4; ++w) {
      for (bool unpack : {false, true}) {
        cudaGraph_t graph = nullptr;
        CUDA_ASSERT(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal));
        const Status status = unpack ? pack::cuda_backend().unpack(c.window(w), t, p + c.windows[w].first, stream_)
                                     : pack::cuda_backend().pack(c.window(w), t, p + c.windows[w].first, stream_);
        CUDA_ASSERT(cudaStreamEndCapture(stream_, &graph));
        std::size_t nodes = 0;
        CUDA_ASSERT(cudaGraphGetNodes(graph, nullptr, &nodes));
        cudaGraphDestroy(graph);
        ASSERT_EQ(status, GDDT_OK) << (unpack ? "unpack" : "pack") << " window " << w << "\n" << c.describe();
        ASSERT_EQ(nodes, 1u) << (unpack ? "unpack" : "pack") << " window " << w << "\n" << c.describe();
      }
    }
  }
}

// Packs a window whose positions pass 2^31, so the 64-bit index arithmetic runs; the typed
// pointer is placed so that only the touched bytes need memory.
void check_far_window(const type::Layout& layout, std::int64_t offset, std::int64_t length, std::int64_t touched_lb,
                      std::int64_t touched_bytes, cudaStream_t stream) {
  Buffer typed(Memory::kDevice, static_cast<std::size_t>(touched_bytes)), packed(Memory::kDevice, length);
  std::vector<char> typed_host(static_cast<std::size_t>(touched_bytes)), expected(static_cast<std::size_t>(length));
  std::mt19937_64 rng(testing::test_seed());
  testing::fill_random(&typed_host, &rng);
  CUDA_ASSERT(cudaMemcpy(typed.data, typed_host.data(), typed_host.size(), cudaMemcpyDefault));
  const pack::Window w{&layout, 1, offset, length};
  ASSERT_EQ(pack::cuda_backend().pack(w, typed.data - touched_lb, packed.data, stream), GDDT_OK);
  CUDA_ASSERT(cudaStreamSynchronize(stream));
  std::vector<char> got(static_cast<std::size_t>(length));
  CUDA_ASSERT(cudaMemcpy(got.data(), packed.data, got.size(), cudaMemcpyDefault));
  testing::reference_move<true>(w, typed_host.data() - touched_lb, expected.data());
  EXPECT_TRUE(got == expected) << layout.describe() << " window [" << offset << "+" << length << ")";
}

TEST_F(CudaPack, WideIndexBlockList) {
  const std::int64_t big = std::int64_t{3} << 30;
  type::Layout list;
  ASSERT_EQ(type::make_concat({type::make_block(big), type::make_shifted(type::make_block(100), big + 64)}, &list),
            GDDT_OK);
  check_far_window(list, big - 1000, 1100, big - 1000, 1164, stream_);
}

TEST_F(CudaPack, WideIndexStrided) {
  // Odd blocks of 2^31 + 5 bytes force one-byte words, so word indices pass 2^31.
  const std::int64_t block = (std::int64_t{1} << 31) + 5;
  type::Layout vector;
  ASSERT_EQ(type::make_repeat(type::make_block(block), 2, block + 11, &vector), GDDT_OK);
  check_far_window(vector, block - 700, 1000, block - 700, 700 + 11 + 300, stream_);
}

}  // namespace
}  // namespace gddt

int main(int argc, char** argv) {
  if (!gddt::gpu::available()) {
    std::printf("no usable CUDA device: skipped\n");
    return 77;
  }
  std::printf("device 0: %s\n", gddt::gpu::device_name(0).c_str());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
