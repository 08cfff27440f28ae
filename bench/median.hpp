// The median the benchmarks report: robust to the odd run disturbed by the machine.
#pragma once

#include <algorithm>
#include <vector>

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}
