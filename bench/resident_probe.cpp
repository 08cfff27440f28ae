// What a small window costs the host that waits for it, by each way gddt's CUDA backend moves
// it: a launched kernel + stream synchronization, the resident kernel already running, the
// resident kernel started for the window (its idle time over), and a launch after the same
// pause; and a new block-list layout's first window (its piece table uploaded) against the
// next, with the parts of such an upload. Medians of host-timed repetitions, microseconds, on GPU 0; a 4 KiB vector of 4-byte
// words (stride 8 B) and a block list of 64 pieces, device to device. With two GPUs, the eager
// path's chain of a flagged pack and the unpack that waits for it (eager_chain).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "memory_buffer.hpp"
#include "pack/engine.hpp"
#include "type/layout.hpp"

namespace {

using gddt_test::Buffer;
using gddt_test::MemoryKind;
using Clock = std::chrono::steady_clock;

const gddt::pack::Backend& cuda() { return gddt::pack::backend_at(gddt::pack::kCudaSlot); }

// Median microseconds of `body` over `reps` runs, each after `pause` (outside the timing).
double median_us(int reps, std::chrono::microseconds pause, const std::function<bool()>& body) {
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
    const auto start = Clock::now();
    if (!body()) {
      std::fprintf(stderr, "resident_probe: a move failed\n");
      std::exit(1);
    }
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::nth_element(us.begin(), us.begin() + reps / 2, us.end());
  return us[static_cast<std::size_t>(reps / 2)];
}

// The eager path's chain between GPU 0 (the sender) and GPU 1 (the receiver), one host thread
// standing for both processes: a pack on GPU 0 that sets a flag, an unpack on GPU 1 that waits for
// it and reads GPU 0's packed bytes across the link, and each part alone.
int eager_chain(const gddt::type::Layout& vector, int reps) {
  int gpus = 0, access = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 2 || cudaDeviceCanAccessPeer(&access, 1, 0) != cudaSuccess ||
      access == 0) {
    std::printf("eager chain: needs two GPUs with peer access: skipped\n");
    return 0;
  }
  const std::int64_t bytes = vector.size;
  cudaSetDevice(0);
  Buffer from(MemoryKind::kDevice, 2 * bytes), scratch(MemoryKind::kDevice, bytes);
  std::uint64_t* flag = nullptr;
  cudaMalloc(&flag, sizeof *flag);
  cudaMemset(flag, 0, sizeof *flag);
  cudaSetDevice(1);
  cudaDeviceEnablePeerAccess(0, 0);
  Buffer to(MemoryKind::kDevice, 2 * bytes), local(MemoryKind::kDevice, bytes);
  const gddt::pack::Window window{&vector, 1, 0, bytes};
  std::uint64_t value = 0;
  using gddt::pack::Ordering;
  const auto post = [&](int device, bool unpack, const void* typed, const void* packed, gddt::pack::DeviceFlag after,
                        gddt::pack::DeviceFlag signal, gddt::pack::Posted* job) {
    cudaSetDevice(device);
    bool served = false;
    for (int tries = 0; tries < 2 && !served; ++tries) {
      if (cuda().post_now(unpack, window, typed, packed, after, signal, Ordering::kLegacyStreamIdle, job, &served) !=
          GDDT_OK)
        return false;
      bool moved = false;  // an idle kernel declines; a window moved the ordinary way starts it
      if (!served && cuda().pack_now(window, typed, const_cast<void*>(packed), Ordering::kLegacyStreamIdle, {},
                                     &moved) != GDDT_OK)
        return false;
    }
    return served;
  };
  const auto wait = [&](const gddt::pack::Posted& job) {
    bool moved = false;
    return cuda().wait_posted(job, {}, &moved) == GDDT_OK && moved;
  };
  const auto flagged_pack = [&] {
    gddt::pack::Posted job;
    return post(0, false, from.data(), scratch.data(), {}, {flag, ++value}, &job) && wait(job);
  };
  const auto chain = [&] {
    gddt::pack::Posted pack, unpack;
    ++value;
    return post(0, false, from.data(), scratch.data(), {}, {flag, value}, &pack) &&
           post(1, true, to.data(), scratch.data(), {flag, value}, {}, &unpack) && wait(unpack) && wait(pack);
  };
  const auto remote_unpack = [&] {
    gddt::pack::Posted job;
    return post(1, true, to.data(), scratch.data(), {flag, value}, {}, &job) && wait(job);
  };
  const auto local_unpack = [&] {
    gddt::pack::Posted job;
    return post(1, true, to.data(), local.data(), {}, {}, &job) && wait(job);
  };
  std::printf("eager chain, GPU 0 -> GPU 1, us (median of %d)\n", reps);
  std::printf("pack on GPU 0 that sets a flag             %7.2f\n", median_us(reps, {}, flagged_pack));
  std::printf("unpack on GPU 1 of GPU 0's bytes (flag set)%7.2f\n", median_us(reps, {}, remote_unpack));
  std::printf("unpack on GPU 1 of its own bytes           %7.2f\n", median_us(reps, {}, local_unpack));
  std::printf("pack, then the unpack waiting for its flag %7.2f\n", median_us(reps, {}, chain));
  cudaSetDevice(0);
  cudaFree(flag);
  return 0;
}

}  // namespace

int main() {
  setenv("GDDT_RESIDENT", "on", 0);
  if (!gddt::gpu::available()) {
    std::printf("resident_probe: no usable CUDA device: skipped\n");
    return 0;
  }
  constexpr std::int64_t kBytes = 4 << 10;
  Buffer typed(MemoryKind::kDevice, 2 * kBytes), packed(MemoryKind::kDevice, 2 * kBytes);
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  gddt::type::Layout vector;
  if (gddt::type::make_repeat(gddt::type::make_block(4), kBytes / 4, 8, &vector) != GDDT_OK) return 1;
  const gddt::pack::Window window{&vector, 1, 0, kBytes};
  const auto launched = [&] {
    return cuda().pack(window, typed.data(), packed.data(), stream) == GDDT_OK &&
           cudaStreamSynchronize(stream) == cudaSuccess;
  };
  const auto resident = [&] {
    bool served = false;
    const bool ok = cuda().pack_now(window, typed.data(), packed.data(), gddt::pack::Ordering::kLegacyStreamIdle,
                                    {}, &served) == GDDT_OK;
    return ok && served;
  };
  const auto idle = std::chrono::microseconds(gddt::config::settings().resident_idle_us * 4 + 200);
  constexpr int kReps = 400;
  std::printf("device 0: %s; 4 KiB vector of 4 B words, us (median of %d)\n", gddt::gpu::device_name(0).c_str(),
              kReps);
  std::printf("launch + synchronize                       %7.2f\n", median_us(kReps, {}, launched));
  std::printf("launch + synchronize after a pause         %7.2f\n", median_us(kReps / 4, idle, launched));
  std::printf("resident kernel running                    %7.2f\n", median_us(kReps, {}, resident));
  std::printf("resident kernel started for the window     %7.2f\n", median_us(kReps / 4, idle, resident));

  // A new layout each time: its first window uploads the piece table.
  std::vector<gddt::type::Layout> lists(kReps / 4);
  for (std::size_t i = 0; i < lists.size(); ++i) {
    std::vector<gddt::type::Layout> pieces;
    for (int p = 0; p < 64; ++p)
      pieces.push_back(gddt::type::make_shifted(gddt::type::make_block(16 + 16 * (p % 3)), p * 112 + (p * p) % 8));
    if (gddt::type::make_concat(pieces, &lists[i]) != GDDT_OK) return 1;
  }
  std::size_t next = 0;
  const auto list_window = [&](std::size_t i) {
    const gddt::pack::Window w{&lists[i], 1, 0, lists[i].size};
    return cuda().pack(w, typed.data(), packed.data(), stream) == GDDT_OK &&
           cudaStreamSynchronize(stream) == cudaSuccess;
  };
  std::printf("block list, first window of a new layout   %7.2f\n",
              median_us(static_cast<int>(lists.size()), {}, [&] { return list_window(next++); }));
  std::printf("block list, a later window of it           %7.2f\n",
              median_us(kReps, {}, [&] { return list_window(0); }));

  // What a table's upload is made of (64 pieces: about 1.5 KiB).
  constexpr std::size_t kTable = 1536;
  std::vector<unsigned char> pageable(kTable, 1);
  void* pinned = nullptr;
  cudaHostAlloc(&pinned, kTable, cudaHostAllocDefault);
  std::vector<void*> tables(kReps / 4, nullptr);
  next = 0;
  std::printf("  cudaMalloc of a table                    %7.2f\n", median_us(static_cast<int>(tables.size()), {}, [&] {
                return cudaMalloc(&tables[next++], kTable) == cudaSuccess;
              }));
  std::printf("  pageable cudaMemcpyAsync + synchronize   %7.2f\n", median_us(kReps, {}, [&] {
                return cudaMemcpyAsync(tables[0], pageable.data(), kTable, cudaMemcpyHostToDevice, stream) ==
                           cudaSuccess &&
                       cudaStreamSynchronize(stream) == cudaSuccess;
              }));
  std::printf("  pinned cudaMemcpyAsync + synchronize     %7.2f\n", median_us(kReps, {}, [&] {
                return cudaMemcpyAsync(tables[0], pinned, kTable, cudaMemcpyHostToDevice, stream) == cudaSuccess &&
                       cudaStreamSynchronize(stream) == cudaSuccess;
              }));
  std::printf("  pinned cudaMemcpyAsync alone (host)      %7.2f\n", median_us(kReps, {}, [&] {
                return cudaMemcpyAsync(tables[0], pinned, kTable, cudaMemcpyHostToDevice, stream) == cudaSuccess;
              }));
  cudaStreamSynchronize(stream);
  next = 0;
  std::printf("  cudaFree of a table                      %7.2f\n", median_us(static_cast<int>(tables.size()), {}, [&] {
                return cudaFree(tables[next++]) == cudaSuccess;
              }));
  cudaFreeHost(pinned);
  cudaStreamDestroy(stream);
  return eager_chain(vector, kReps);
}
