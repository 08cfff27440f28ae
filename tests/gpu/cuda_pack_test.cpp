// The CUDA pack backend on a GPU, byte for byte against the host walk: random layouts, counts
// and window splits with the typed buffer in device, managed or pinned host memory; packed
// buffers and the typed buffer's holes are poisoned before and checked after. Also checks
// that one call is one launch (by capturing it into a graph) and the 64-bit index paths.
// Exits 77 (skipped) without a usable GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "memory_buffer.hpp"
#include "pack/cuda/plan.hpp"
#include "pack/engine.hpp"
#include "pack/cuda/resident.hpp"
#include "protocol/transfer.hpp"
#include "random_cases.hpp"

namespace gddt {
namespace {

using testing::Case;

#define CUDA_ASSERT(call)                                                                   \
  do {                                                                                      \
    const cudaError_t cuda_error_ = (call);                                                 \
    ASSERT_EQ(cuda_error_, cudaSuccess) << #call << ": " << cudaGetErrorString(cuda_error_); \
  } while (0)

using gddt_test::Buffer;
using gddt_test::memory_kind_name;
using gddt_test::MemoryKind;

const pack::Backend& cuda_backend() { return pack::backend_at(pack::kCudaSlot); }

// The environment check_case() drives: the backend on a stream, buffers of chosen kinds.
struct CudaEnv {
  CudaEnv(Buffer* typed_buffer_, Buffer* packed_buffer_, cudaStream_t s)
      : typed(typed_buffer_), packed(packed_buffer_), stream(s) {}
  Buffer* typed;
  Buffer* packed;
  cudaStream_t stream;
  std::string error;
  int windows = 0;   // counted by ResidentEnv: windows the resident kernel may take,
  int declined = 0;  // and those of them it declined

  char* typed_buffer() { return reinterpret_cast<char*>(typed->data()); }
  char* packed_buffer() { return reinterpret_cast<char*>(packed->data()); }
  // cudaMemcpy runs on the legacy default stream, which the test's blocking stream waits for.
  void upload(char* dst, const char* src, std::int64_t bytes) { note(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault)); }
  void download(char* dst, const char* src, std::int64_t bytes) { note(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault)); }
  void synchronize() { note(cudaStreamSynchronize(stream)); }
  Status pack(const pack::Window& w, const void* t, void* p) { return cuda_backend().pack(w, t, p, stream); }
  Status unpack(const pack::Window& w, void* t, const void* p) { return cuda_backend().unpack(w, t, p, stream); }
  void note(cudaError_t e) {
    if (e != cudaSuccess && error.empty()) error = cudaGetErrorString(e);
  }
};

// The same moves by the resident kernel (pack_now/unpack_now), waited for by the call. A window
// it declines is moved the ordinary way and counted.
struct ResidentEnv : CudaEnv {
  using CudaEnv::CudaEnv;
  // cudaMemcpy from pageable memory may return before its copy lands; the resident kernel
  // declines while the legacy default stream is busy, so wait for it to keep the counts exact.
  void upload(char* dst, const char* src, std::int64_t bytes) {
    CudaEnv::upload(dst, src, bytes);
    note(cudaStreamSynchronize(cudaStreamLegacy));
  }
  // A declined window is moved on the test's stream and waited for, as the MPI layer does: work
  // left queued there would hold up the legacy default stream, and the next window with it.
  Status pack(const pack::Window& w, const void* t, void* p) {
    bool served = false;
    const Status status = cuda_backend().pack_now(w, t, p, pack::Ordering::kCheckLegacyStream, {}, &served);
    return counted(w, served, status) ? status : waited(CudaEnv::pack(w, t, p));
  }
  Status unpack(const pack::Window& w, void* t, const void* p) {
    bool served = false;
    const Status status = cuda_backend().unpack_now(w, t, p, pack::Ordering::kCheckLegacyStream, {}, &served);
    return counted(w, served, status) ? status : waited(CudaEnv::unpack(w, t, p));
  }
  Status waited(Status status) {
    synchronize();
    return status;
  }
  // True when the resident kernel handled the window (or failed it).
  bool counted(const pack::Window& w, bool served, Status status) {
    if (w.length == 0) return true;
    ++windows;
    if (served || is_error(status)) return true;
    ++declined;
    return false;
  }
};

// The same moves gathered into sets, moved by pack_set or unpack_set when the test
// synchronizes: every window of a case in as few launches as their kernels allow.
struct SetEnv : CudaEnv {
  using CudaEnv::CudaEnv;
  Status pack(const pack::Window& w, const void* t, void* p) { return gather(false, w, t, p); }
  Status unpack(const pack::Window& w, void* t, const void* p) { return gather(true, w, t, p); }
  void synchronize() {
    flush();
    CudaEnv::synchronize();
  }

 private:
  Status gather(bool unpack, const pack::Window& w, const void* t, const void* p) {
    if (unpack != unpacking_) flush();
    unpacking_ = unpack;
    waiting_.push_back({w, t, p});
    return GDDT_OK;
  }
  void flush() {
    if (waiting_.empty()) return;
    const pack::Backend& cuda = cuda_backend();
    const auto count = static_cast<int>(waiting_.size());
    const Status status = unpacking_ ? cuda.unpack_set(waiting_.data(), count, stream)
                                     : cuda.pack_set(waiting_.data(), count, stream);
    if (status != GDDT_OK && error.empty()) error = std::string("a set returned ") + status_name(status);
    waiting_.clear();
  }
  std::vector<pack::WindowMove> waiting_;
  bool unpacking_ = false;
};

// Typed-to-typed moves by the backend's transcribe; a window it declines (a block-list table
// beyond shared memory) is packed into scratch and unpacked, as the protocol does, and counted.
struct TranscribeEnv : CudaEnv {
  TranscribeEnv(Buffer* typed_buffer_, Buffer* packed_buffer_, cudaStream_t s)
      : CudaEnv(typed_buffer_, packed_buffer_, s), scratch(MemoryKind::kDevice, 16 << 20) {}
  Buffer scratch;
  Status transcribe(const pack::Window& from, const void* from_typed, const pack::Window& to, void* to_typed) {
    if (from.length > 0) ++windows;
    bool served = false;
    GDDT_CHECK(cuda_backend().transcribe(from, from_typed, to, to_typed, stream, &served));
    if (served) return GDDT_OK;
    ++declined;
    const pack::Window packed_from{from.layout, from.count, from.offset, from.length};
    GDDT_CHECK(cuda_backend().pack(packed_from, from_typed, scratch.data(), stream));
    return cuda_backend().unpack(to, to_typed, scratch.data(), stream);
  }
};

class CudaPack : public ::testing::Test {
 protected:
  void SetUp() override { CUDA_ASSERT(cudaStreamCreate(&stream_)); }
  void TearDown() override { cudaStreamDestroy(stream_); }

  // Runs `cases` random cases of packed streams up to `largest_stream` bytes (every 20th case
  // up to half the packed buffer, for many blocks of threads and the grid-stride loop, unless
  // `largest_stream` is given); stops after a few failures, each printed in full.
  // Returns the environment's counts.
  template <typename Env = CudaEnv>
  std::pair<int, int> run_random(MemoryKind typed_kind, MemoryKind packed_kind, int cases, std::uint64_t seed_offset,
                                 std::int64_t largest_stream = 0) {
    const std::uint64_t seed = testing::test_seed() + seed_offset;
    std::printf("[ seed %llu ] typed %s, packed %s, %d cases (GDDT_TEST_SEED changes the seed)\n",
                static_cast<unsigned long long>(testing::test_seed()), memory_kind_name(typed_kind),
                memory_kind_name(packed_kind), cases);
    testing::LayoutGenerator gen(seed);
    Buffer typed(typed_kind, kTypedBytes), packed(packed_kind, kPackedBytes);
    Env env(&typed, &packed, stream_);
    int failures = 0;
    for (int i = 0; i < cases && failures < 5; ++i) {
      const std::int64_t max_stream = largest_stream > 0 ? largest_stream : i % 20 == 19 ? kPackedBytes / 2 : 256 << 10;
      const Case c = testing::random_case(i, &gen, max_stream, kTypedBytes / 2);
      const ::testing::AssertionResult result = testing::check_case(c, &env, &gen.rng());
      if (!env.error.empty()) {
        ADD_FAILURE() << "CUDA error: " << env.error << "\n" << c.describe();
        break;
      }
      if (!result) {
        ++failures;
        ADD_FAILURE() << result.message() << "\n  typed " << memory_kind_name(typed_kind) << ", packed "
                      << memory_kind_name(packed_kind) << ", seed " << testing::test_seed();
      }
    }
    return {env.windows, env.declined};
  }

  // Random cases through the resident kernel, windows inside one block among them; nearly all
  // must be served by it (it declines only piece tables beyond shared memory, 64-bit indices and
  // the rare window touching more typed sectors than its blocks move quickly), and each served
  // window is one job or, where it found the kernel idle, launched while the kernel started.
  void run_resident(MemoryKind typed_kind, MemoryKind packed_kind, int cases, std::uint64_t seed_offset) {
    const pack::cuda_impl::ResidentCounts before = pack::cuda_impl::resident_counts();
    const std::int64_t most = std::min<std::int64_t>(
        kResidentStream,
        static_cast<std::int64_t>(pack::cuda_impl::resident_most_bytes_per_block()) * resident_blocks());
    const auto [windows, declined] = run_random<ResidentEnv>(typed_kind, packed_kind, cases, seed_offset, most);
    const pack::cuda_impl::ResidentCounts after = pack::cuda_impl::resident_counts();
    std::printf("%d windows, %d declined by the resident kernel, %llu launches of it\n", windows, declined,
                static_cast<unsigned long long>(after.launches - before.launches));
    EXPECT_GT(windows, cases);
    EXPECT_LE(declined * 100, windows);
    EXPECT_EQ(after.jobs - before.jobs + after.cold_windows - before.cold_windows,
              static_cast<std::uint64_t>(windows - declined));
  }

  static constexpr std::size_t kTypedBytes = 48 << 20;
  static constexpr std::size_t kPackedBytes = 16 << 20;
  static constexpr std::int64_t kResidentStream = 64 << 10;  // main() sets GDDT_RESIDENT_MAX to it
  static std::int64_t resident_blocks() { return pack::cuda_impl::resident_kernel_blocks(gpu::current_device()); }
  cudaStream_t stream_ = nullptr;
};

// Typed to typed between random layouts on device memory (the direct plane's read), and from
// managed into device memory; nearly every window must take one kernel.
TEST_F(CudaPack, RandomTranscribes) {
  const std::uint64_t seed = testing::test_seed() + 9;
  std::printf("[ seed %llu ] typed to typed (GDDT_TEST_SEED changes the seed)\n",
              static_cast<unsigned long long>(testing::test_seed()));
  testing::LayoutGenerator gen(seed);
  for (MemoryKind source_kind : {MemoryKind::kDevice, MemoryKind::kManaged}) {
    Buffer source(source_kind, kTypedBytes), destination(MemoryKind::kDevice, kPackedBytes);
    TranscribeEnv env(&source, &destination, stream_);
    int failures = 0;
    const int cases = source_kind == MemoryKind::kDevice ? 1500 : 200;
    for (int i = 0; i < cases && failures < 5; ++i) {
      const std::int64_t stream = i % 20 == 19 ? 4 << 20 : 256 << 10;
      const Case from = testing::random_case(i, &gen, stream, kTypedBytes / 2);
      const Case to = testing::random_case(i, &gen, stream, kPackedBytes / 2);
      const ::testing::AssertionResult result = testing::check_transcribe(from, to, &env, &gen.rng());
      if (!env.error.empty()) {
        ADD_FAILURE() << "CUDA error: " << env.error << "\n" << from.describe();
        break;
      }
      if (!result) {
        ++failures;
        ADD_FAILURE() << result.message() << "\n  source " << memory_kind_name(source_kind) << ", seed "
                      << testing::test_seed();
      }
    }
    std::printf("%s: %d windows, %d declined by transcribe\n", memory_kind_name(source_kind), env.windows,
                env.declined);
    EXPECT_GT(env.windows, cases / 2);
    EXPECT_LE(env.declined * 10, env.windows);
  }
}

TEST_F(CudaPack, RandomLayoutsOnDeviceMemory) { run_random(MemoryKind::kDevice, MemoryKind::kDevice, 2500, 0); }
TEST_F(CudaPack, RandomLayoutsOnManagedTypedMemory) { run_random(MemoryKind::kManaged, MemoryKind::kDevice, 300, 1); }
TEST_F(CudaPack, RandomLayoutsOnPinnedTypedMemory) { run_random(MemoryKind::kPinned, MemoryKind::kDevice, 300, 2); }
TEST_F(CudaPack, RandomLayoutsIntoPinnedPackedMemory) { run_random(MemoryKind::kDevice, MemoryKind::kPinned, 200, 3); }

// The resident kernel stays running across cases whose buffers are rewritten between them, so
// these also catch reads of stale bytes (its L1 cache outlives each case).
TEST_F(CudaPack, ResidentKernelOnDeviceMemory) { run_resident(MemoryKind::kDevice, MemoryKind::kDevice, 1500, 5); }
TEST_F(CudaPack, ResidentKernelIntoPinnedPackedMemory) {
  run_resident(MemoryKind::kDevice, MemoryKind::kPinned, 500, 6);
}
TEST_F(CudaPack, ResidentKernelOnManagedTypedMemory) {
  run_resident(MemoryKind::kManaged, MemoryKind::kPinned, 200, 7);
}

// Work queued on the legacy default stream that writes the typed buffer comes before the
// pack, as on the ordinary path: the resident kernel, which no stream orders, must decline
// while such work is pending. A long copy holds the stream, then a short one writes the data.
TEST_F(CudaPack, ResidentKernelWaitsForTheLegacyDefaultStream) {
  constexpr std::size_t kSlowBytes = 256 << 20;
  constexpr std::size_t kBytes = 4 << 10;
  Buffer slow_source(MemoryKind::kPinned, kSlowBytes), slow_target(MemoryKind::kDevice, kSlowBytes);
  Buffer fresh(MemoryKind::kDevice, kBytes), typed(MemoryKind::kDevice, kBytes), packed(MemoryKind::kDevice, kBytes);
  type::Layout bytes;
  ASSERT_EQ(type::make_repeat(type::make_block(4), static_cast<std::int64_t>(kBytes / 8), 8, &bytes), GDDT_OK);
  const pack::Window window{&bytes, 1, 0, bytes.size};
  std::vector<unsigned char> pattern(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) pattern[i] = static_cast<unsigned char>(i * 7 + 1);
  fresh.upload(pattern.data(), kBytes);
  int served_count = 0;
  for (int round = 0; round < 5; ++round) {
    typed.fill(0);
    packed.fill(0xff);
    CUDA_ASSERT(
        cudaMemcpyAsync(slow_target.data(), slow_source.data(), kSlowBytes, cudaMemcpyHostToDevice, cudaStreamLegacy));
    CUDA_ASSERT(cudaMemcpyAsync(typed.data(), fresh.data(), kBytes, cudaMemcpyDeviceToDevice, cudaStreamLegacy));
    bool served = false;
    ASSERT_EQ(cuda_backend().pack_now(window, typed.data(), packed.data(), pack::Ordering::kCheckLegacyStream, {},
                                            &served),
              GDDT_OK);
    if (!served) {
      ASSERT_EQ(cuda_backend().pack(window, typed.data(), packed.data(), stream_), GDDT_OK);
      CUDA_ASSERT(cudaStreamSynchronize(stream_));
    }
    served_count += served ? 1 : 0;
    std::vector<unsigned char> got(bytes.size);
    packed.download(got.data(), got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], pattern[i / 4 * 8 + i % 4]) << "packed byte " << i << " in round " << round;
    }
  }
  EXPECT_EQ(served_count, 0) << "the resident kernel ran while the legacy stream was busy";
}

// The chunk pipeline (a pageable typed buffer, a device packed buffer) comes after work queued
// on the legacy default stream that writes the packed buffer, too: a long copy holds the stream,
// then a short one fills the packed buffer with stale bytes, which must not land over the pack.
TEST_F(CudaPack, PipelineWaitsForTheLegacyDefaultStream) {
  constexpr std::size_t kSlowBytes = 256 << 20;
  constexpr std::size_t kBytes = 4 << 10;
  Buffer slow_source(MemoryKind::kPinned, kSlowBytes), slow_target(MemoryKind::kDevice, kSlowBytes);
  Buffer stale(MemoryKind::kDevice, kBytes), packed(MemoryKind::kDevice, kBytes);
  type::Layout bytes;
  ASSERT_EQ(type::make_repeat(type::make_block(4), static_cast<std::int64_t>(kBytes / 8), 8, &bytes), GDDT_OK);
  const pack::Window window{&bytes, 1, 0, bytes.size};
  std::vector<unsigned char> typed(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) typed[i] = static_cast<unsigned char>(i * 7 + 1);
  stale.fill(0xee);
  const memory::Kind host{GDDT_MEMORY_HOST, -1}, device{GDDT_MEMORY_DEVICE, 0};
  for (int round = 0; round < 3; ++round) {
    CUDA_ASSERT(
        cudaMemcpyAsync(slow_target.data(), slow_source.data(), kSlowBytes, cudaMemcpyHostToDevice, cudaStreamLegacy));
    CUDA_ASSERT(cudaMemcpyAsync(packed.data(), stale.data(), kBytes, cudaMemcpyDeviceToDevice, cudaStreamLegacy));
    ASSERT_EQ(protocol::pack(window, typed.data(), host, packed.data(), device, nullptr, protocol::Way::kPipelined),
              GDDT_OK);
    std::vector<unsigned char> got(bytes.size);
    packed.download(got.data(), got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], typed[i / 4 * 8 + i % 4]) << "packed byte " << i << " in round " << round;
    }
  }
}

// The kernel exits after GDDT_RESIDENT_IDLE_US without work, and the next window starts it
// again; MPI_Finalize's stop() ends it, and a later window starts a new one.
TEST_F(CudaPack, ResidentKernelExitsWhenIdleAndRestarts) {
  ASSERT_EQ(setenv("GDDT_RESIDENT_IDLE_US", "20", 1), 0);
  config::reload_for_testing();
  cuda_backend().stop();  // the next ring is opened with the short idle time
  const pack::cuda_impl::ResidentCounts before = pack::cuda_impl::resident_counts();
  Buffer typed(MemoryKind::kDevice, kTypedBytes), packed(MemoryKind::kPinned, kPackedBytes);
  ResidentEnv env(&typed, &packed, stream_);
  testing::LayoutGenerator gen(testing::test_seed() + 8);
  constexpr int kCases = 40;
  for (int i = 0; i < kCases; ++i) {
    const Case c = testing::random_case(i, &gen, 16 << 10, 1 << 20);
    ASSERT_TRUE(testing::check_case(c, &env, &gen.rng())) << c.describe();
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    if (i == kCases / 2) cuda_backend().stop();
  }
  const pack::cuda_impl::ResidentCounts after = pack::cuda_impl::resident_counts();
  std::printf("%d windows, %d declined, %llu launches\n", env.windows, env.declined,
              static_cast<unsigned long long>(after.launches - before.launches));
  EXPECT_LE(env.declined * 100, env.windows);
  // Each case is a pack and an unpack after a pause far longer than the idle time.
  EXPECT_GE(after.launches - before.launches, static_cast<std::uint64_t>(kCases));
  ASSERT_EQ(unsetenv("GDDT_RESIDENT_IDLE_US"), 0);
  config::reload_for_testing();
  cuda_backend().stop();
}

// A program that synchronizes the whole device after each window waits every time for the
// kernel to idle out (GDDT_RESIDENT_IDLE_US): under `auto` the kernel steps aside after three
// such restarts in a row, while windows a millisecond apart without a device-wide wait, and
// bursts of 20 windows between such waits, keep it.
TEST_F(CudaPack, ResidentKernelStepsAsideForDeviceWideSynchronization) {
  ASSERT_EQ(setenv("GDDT_RESIDENT", "auto", 1), 0);
  config::reload_for_testing();
  cuda_backend().stop();
  constexpr std::size_t kBytes = 4 << 10;
  Buffer typed(MemoryKind::kDevice, kBytes), packed(MemoryKind::kDevice, kBytes);
  type::Layout bytes;
  ASSERT_EQ(type::make_repeat(type::make_block(4), static_cast<std::int64_t>(kBytes / 8), 8, &bytes), GDDT_OK);
  const pack::Window window{&bytes, 1, 0, bytes.size};
  const auto pack_once = [&](bool* served) {
    ASSERT_EQ(cuda_backend().pack_now(window, typed.data(), packed.data(), pack::Ordering::kCheckLegacyStream, {},
                                      served),
              GDDT_OK);
  };
  bool served = false;
  pack_once(&served);
  if (!served) {
    ASSERT_EQ(setenv("GDDT_RESIDENT", "on", 1), 0);  // main's setting again
    config::reload_for_testing();
    GTEST_SKIP() << "another process computes on the GPU: the resident kernel is off under auto";
  }
  int spaced_served = 0;
  for (int i = 0; i < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    pack_once(&served);
    spaced_served += served ? 1 : 0;
  }
  // Busy phases ended by a device-wide wait: each kernel took enough jobs to be worth the wait.
  int busy_served = 0;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 20; ++i) {
      pack_once(&served);
      busy_served += served ? 1 : 0;
    }
    CUDA_ASSERT(cudaDeviceSynchronize());
  }
  int synchronized_served = 0;
  bool last_served = true;
  for (int i = 0; i < 12; ++i) {
    pack_once(&last_served);
    synchronized_served += last_served ? 1 : 0;
    CUDA_ASSERT(cudaDeviceSynchronize());
  }
  std::printf("spaced: %d of 8 served; busy: %d of 80; synchronized: %d of 12\n", spaced_served, busy_served,
              synchronized_served);
  EXPECT_EQ(spaced_served, 8) << "windows a millisecond apart made the kernel step aside";
  EXPECT_EQ(busy_served, 80) << "the kernel stepped aside though it took 20 jobs between waits";
  EXPECT_FALSE(last_served) << "the kernel kept running for a program that waits for its exit";
  EXPECT_GE(synchronized_served, 3) << "the kernel stepped aside before three quick restarts";
  ASSERT_EQ(setenv("GDDT_RESIDENT", "on", 1), 0);
  config::reload_for_testing();
  cuda_backend().stop();
}

// A call is one launch (a kernel or one copy), with no synchronization and no allocation: it
// is captured into a graph in the global capture mode, which refuses both, and the graph must
// hold exactly one node.
TEST_F(CudaPack, EachCallIsOneLaunch) {
  testing::LayoutGenerator gen(testing::test_seed() + 4);
  Buffer typed(MemoryKind::kDevice, 8 << 20), packed(MemoryKind::kDevice, 1 << 20);
  for (int i = 0; i < 300; ++i) {
    const Case c = testing::random_case(i, &gen, 64 << 10, 4 << 20);
    const testing::CaseGeometry g(c);
    unsigned char* t = typed.data() + g.typed_origin;
    unsigned char* p = packed.data() + g.packed_start;
    // The first call of a block list uploads its tables, once; that one is not captured.
    ASSERT_EQ(cuda_backend().pack(c.window(0), t, p, stream_), GDDT_OK) << c.describe();
    CUDA_ASSERT(cudaStreamSynchronize(stream_));
    for (std::size_t w = 0; w < c.windows.size() && w < 4; ++w) {
      for (bool unpack : {false, true}) {
        cudaGraph_t graph = nullptr;
        CUDA_ASSERT(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal));
        const Status status = unpack ? cuda_backend().unpack(c.window(w), t, p + c.windows[w].first, stream_)
                                     : cuda_backend().pack(c.window(w), t, p + c.windows[w].first, stream_);
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

// Random cases whose windows are moved as sets: windows of different lengths share a grid
// sized for the largest, copies and wide-index windows are moved alone, block lists copy each
// window's table.
TEST_F(CudaPack, RandomWindowsInSetsOnDeviceMemory) {
  run_random<SetEnv>(MemoryKind::kDevice, MemoryKind::kDevice, 600, 10);
}
TEST_F(CudaPack, RandomWindowsInSetsIntoPinnedPackedMemory) {
  run_random<SetEnv>(MemoryKind::kDevice, MemoryKind::kPinned, 150, 11);
}

// A set is one launch per kSetMost windows of one kernel, and windows of another kernel take
// a launch of their own: captured into a graph, as in EachCallIsOneLaunch.
TEST_F(CudaPack, SetsShareLaunches) {
  type::Layout vector, pair, list;
  ASSERT_EQ(type::make_repeat(type::make_block(64), 1024, 128, &vector), GDDT_OK);
  ASSERT_EQ(type::make_concat({type::make_block(24), type::make_shifted(type::make_block(40), 64)}, &pair), GDDT_OK);
  ASSERT_EQ(type::make_repeat(pair, 512, 128, &list), GDDT_OK);
  Buffer typed(MemoryKind::kDevice, 1 << 20), packed(MemoryKind::kDevice, 1 << 20);
  // Windows of 1000 bytes across several blocks, starting at multiples of 128 (so all of a
  // layout's windows get the same word width), every 4096 bytes of the packed buffer.
  auto moves_of = [&](const type::Layout& layout, int count, int first) {
    std::vector<pack::WindowMove> moves;
    for (int i = 0; i < count; ++i) {
      moves.push_back({pack::Window{&layout, 1, 128 * i, 1000}, typed.data(), packed.data() + 4096 * (first + i)});
    }
    return moves;
  };
  // Uploads the block list's table outside the capture.
  const pack::WindowMove once = moves_of(list, 1, 0)[0];
  ASSERT_EQ(cuda_backend().pack(once.window, once.typed, const_cast<void*>(once.packed), stream_), GDDT_OK);
  CUDA_ASSERT(cudaStreamSynchronize(stream_));
  auto launches = [&](const std::vector<pack::WindowMove>& moves, bool unpack) {
    cudaGraph_t graph = nullptr;
    EXPECT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
    const auto count = static_cast<int>(moves.size());
    const Status status = unpack ? cuda_backend().unpack_set(moves.data(), count, stream_)
                                 : cuda_backend().pack_set(moves.data(), count, stream_);
    EXPECT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
    EXPECT_EQ(status, GDDT_OK);
    std::size_t nodes = 0;
    EXPECT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
    cudaGraphDestroy(graph);
    return nodes;
  };
  for (bool unpack : {false, true}) {
    EXPECT_EQ(launches(moves_of(vector, pack::kSetMost, 0), unpack), 1u);
    EXPECT_EQ(launches(moves_of(vector, pack::kSetMost + 1, 0), unpack), 2u);
    std::vector<pack::WindowMove> mixed = moves_of(vector, 3, 0);
    const std::vector<pack::WindowMove> lists = moves_of(list, 3, 3);
    mixed.insert(mixed.begin() + 1, lists.begin(), lists.end());
    EXPECT_EQ(launches(mixed, unpack), 2u) << (unpack ? "unpack" : "pack");
  }
}

// A block list whose piece table is larger than a kernel copies into shared memory (16 KiB),
// so the kernels read it from global memory: whole streams and windows with partial words,
// packed and unpacked, with the rest of both buffers poisoned and checked untouched.
TEST_F(CudaPack, BlockListWithItsTableInGlobalMemory) {
  std::mt19937_64 rng(testing::test_seed() + 8);
  std::vector<type::Layout> pieces;
  std::int64_t at = 0;
  for (int i = 0; i < 1500; ++i) {
    const std::int64_t bytes = 8 * (1 + static_cast<std::int64_t>(rng() % 24));
    pieces.push_back(type::make_shifted(type::make_block(bytes), at));
    at += bytes + 8 * (1 + static_cast<std::int64_t>(rng() % 8));
  }
  type::Layout list;
  ASSERT_EQ(type::make_concat(pieces, &list), GDDT_OK);
  ASSERT_GT(pack::cuda_impl::build_piece_table(list).bytes(), std::size_t{16} << 10) << "the table must not fit";
  const std::int64_t count = 40;
  const testing::Span span = testing::typed_span(list, count);
  ASSERT_EQ(span.lb, 0);
  const std::int64_t stream_bytes = list.size * count;
  Buffer typed(MemoryKind::kDevice, static_cast<std::size_t>(span.bytes)),
      packed(MemoryKind::kDevice, stream_bytes + 64);
  std::vector<char> typed_host(static_cast<std::size_t>(span.bytes)), packed_host(static_cast<std::size_t>(stream_bytes) + 64);
  testing::fill_random(&typed_host, &rng);
  testing::fill_random(&packed_host, &rng);
  const std::vector<std::pair<std::int64_t, std::int64_t>> windows = {
      {0, stream_bytes}, {3, 1 << 20}, {stream_bytes / 3 + 5, stream_bytes / 2 - 11}, {stream_bytes - 4099, 4099}};
  for (const auto& [offset, length] : windows) {
    const pack::Window w{&list, count, offset, length};
    typed.upload(typed_host.data(), typed_host.size());
    packed.fill(0x5a);
    ASSERT_EQ(cuda_backend().pack(w, typed.data(), packed.data(), stream_), GDDT_OK);
    CUDA_ASSERT(cudaStreamSynchronize(stream_));
    std::vector<char> got(packed.size()), expected(packed.size(), 0x5a);
    packed.download(got.data(), got.size());
    testing::reference_move<true>(w, typed_host.data(), expected.data());
    EXPECT_TRUE(got == expected) << "pack of [" << offset << "+" << length << ")";

    packed.upload(packed_host.data(), packed_host.size());
    ASSERT_EQ(cuda_backend().unpack(w, typed.data(), packed.data(), stream_), GDDT_OK);
    CUDA_ASSERT(cudaStreamSynchronize(stream_));
    std::vector<char> unpacked(typed_host.size()), expected_typed = typed_host;
    typed.download(unpacked.data(), unpacked.size());
    testing::reference_move<false>(w, expected_typed.data(), packed_host.data());
    EXPECT_TRUE(unpacked == expected_typed) << "unpack of [" << offset << "+" << length << ")";
  }
}

// Each block of the resident kernel takes up to GDDT_RESIDENT_BLOCK_MAX (16 KiB) of every other
// 4-byte word, and leaves a window of one byte every 252 (as an x face of a 3-D grid of chars)
// touching more than GDDT_RESIDENT_BLOCK_SECTORS (2048) typed sectors a block to a launched grid, which moves such
// scattered words sooner. What it takes must still be packed right.
TEST_F(CudaPack, ResidentKernelLeavesScatteredWindowsToALaunch) {
  std::mt19937_64 rng(testing::test_seed() + 9);
  const std::int64_t blocks = resident_blocks();
  const std::int64_t dense_words =
      std::min<std::int64_t>(static_cast<std::int64_t>(pack::cuda_impl::resident_most_bytes_per_block()) * blocks,
                             kResidentStream) /
      4;
  const auto scattered_words =
      static_cast<std::int64_t>(pack::cuda_impl::resident_most_sectors_per_block()) * blocks + 1;
  struct Case {
    std::int64_t word, count, stride;
    bool served;
  };
  for (const Case& c : {Case{4, dense_words, 8, true}, Case{1, scattered_words, 252, false}}) {
    type::Layout vector;
    ASSERT_EQ(type::make_repeat(type::make_block(c.word), c.count, c.stride, &vector), GDDT_OK);
    const pack::Window w{&vector, 1, 0, vector.size};
    Buffer typed(MemoryKind::kDevice, static_cast<std::size_t>(vector.extent)),
        packed(MemoryKind::kDevice, vector.size);
    std::vector<char> typed_host(static_cast<std::size_t>(vector.extent)), expected(static_cast<std::size_t>(vector.size));
    testing::fill_random(&typed_host, &rng);
    typed.upload(typed_host.data(), typed_host.size());
    CUDA_ASSERT(cudaStreamSynchronize(cudaStreamLegacy));  // else the resident kernel declines
    bool served = false;
    ASSERT_EQ(
        cuda_backend().pack_now(w, typed.data(), packed.data(), pack::Ordering::kCheckLegacyStream, {}, &served),
        GDDT_OK);
    EXPECT_EQ(served, c.served) << c.count << " words of " << c.word << " every " << c.stride << " bytes, " << blocks
                                << " resident blocks";
    if (!served) {
      ASSERT_EQ(cuda_backend().pack(w, typed.data(), packed.data(), stream_), GDDT_OK);
      CUDA_ASSERT(cudaStreamSynchronize(stream_));
    }
    std::vector<char> got(expected.size());
    packed.download(got.data(), got.size());
    testing::reference_move<true>(w, typed_host.data(), expected.data());
    EXPECT_TRUE(got == expected) << c.count << " words of " << c.word << " every " << c.stride << " bytes";
  }
}

// Packs a window whose positions pass 2^31, so the 64-bit index arithmetic runs; the typed
// pointer is placed so that only the touched bytes need memory.
void check_far_window(const type::Layout& layout, std::int64_t offset, std::int64_t length, std::int64_t touched_lb,
                      std::int64_t touched_bytes, cudaStream_t stream) {
  Buffer typed(MemoryKind::kDevice, static_cast<std::size_t>(touched_bytes)), packed(MemoryKind::kDevice, length);
  std::vector<char> typed_host(static_cast<std::size_t>(touched_bytes)), expected(static_cast<std::size_t>(length));
  std::mt19937_64 rng(testing::test_seed());
  testing::fill_random(&typed_host, &rng);
  typed.upload(typed_host.data(), typed_host.size());
  const pack::Window w{&layout, 1, offset, length};
  ASSERT_EQ(cuda_backend().pack(w, typed.data() - touched_lb, packed.data(), stream), GDDT_OK);
  CUDA_ASSERT(cudaStreamSynchronize(stream));
  std::vector<char> got(static_cast<std::size_t>(length));
  packed.download(got.data(), got.size());
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
  // Other tests may use the GPU at the same time, which the automatic setting would avoid.
  setenv("GDDT_RESIDENT", "on", 1);
  setenv("GDDT_RESIDENT_MAX", "64K", 1);
  if (!gddt::gpu::available()) {
    std::printf("no usable CUDA device: skipped\n");
    return 77;
  }
  std::printf("device 0: %s\n", gddt::gpu::device_name(0).c_str());
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
