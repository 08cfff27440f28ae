// gddt-bench-pack's timing: medians of event-timed runs on its stream, with L2 flushed before each
// run, and of host wall times.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <utility>
#include <vector>

#include "pack_bench_device.cuh"

namespace gddt_bench::pack {

// ---- timing ----------------------------------------------------------------------------------------

inline double median_of(std::vector<double> times) {
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

struct Timer {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  char* scratch = nullptr;  // written before each run to push the operands out of L2
  std::size_t scratch_bytes = 0;
  int runs = 15, warmup = 3;

  // Median event time of op() in microseconds; negative when op() failed.
  template <typename Op>
  double median_us(Op&& op) {
    for (int i = 0; i < warmup; ++i) {
      if (!op()) return -1;
    }
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
      if (scratch != nullptr) CUDA_OR_DIE(cudaMemsetAsync(scratch, i & 0xff, scratch_bytes, stream));
      CUDA_OR_DIE(cudaEventRecord(start, stream));
      if (!op()) return -1;
      CUDA_OR_DIE(cudaEventRecord(stop, stream));
      CUDA_OR_DIE(cudaEventSynchronize(stop));
      float ms = 0;
      CUDA_OR_DIE(cudaEventElapsedTime(&ms, start, stop));
      times.push_back(1000.0 * ms);
    }
    return median_of(std::move(times));
  }
};

template <typename Op, typename After>
double median_wall_us(int runs, Op&& op, After&& after) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    op();
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    after();
  }
  return median_of(std::move(times));
}

template <typename Op>
double median_wall_us(int runs, Op&& op) {
  return median_wall_us(runs, op, [] {});
}

// Median wall times of two operations timed in turns, each first in every other round, so that
// both see the same state of the machine (its clocks, the virtual machine's neighbours): timed
// in runs of their own, the same empty launch moved by up to 1.4 us from one row to the next.
template <typename OpA, typename OpB>
std::pair<double, double> paired_median_wall_us(int runs, OpA&& a, OpB&& b) {
  std::vector<double> a_times, b_times;
  const auto timed = [](auto&& op, std::vector<double>* times) {
    const auto t0 = std::chrono::steady_clock::now();
    op();
    times->push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  };
  for (int i = 0; i < runs; ++i) {
    if (i % 2 == 0) {
      timed(a, &a_times);
      timed(b, &b_times);
    } else {
      timed(b, &b_times);
      timed(a, &a_times);
    }
  }
  return {median_of(std::move(a_times)), median_of(std::move(b_times))};
}

}  // namespace gddt_bench::pack
