// The time the benchmarks of collective work report: each run between barriers, the slowest
// rank's time, the median over the runs.
#pragma once

#include <mpi.h>

#include <functional>
#include <vector>

#include "median.hpp"

inline double slowest_rank_median_us(int iterations, const std::function<void()>& body) {
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    body();
    double elapsed = MPI_Wtime() - start, slowest = 0;
    MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    samples.push_back(slowest * 1e6);
  }
  return median(samples);
}
