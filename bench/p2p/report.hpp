// Collects the measurements on rank 0 and prints them: a latency and a bandwidth table per
// (memory pair, type), a CSV for plot_p2p.py, and the targets of issue 44 checked against the
// numbers of this run (targets.cpp).
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cases.hpp"
#include "measure.hpp"
#include "options.hpp"

namespace gddt::bench {

struct PointKey {
  MemoryPair memory;
  TableSpec table;
  std::size_t packed = 0;
  std::size_t extent = 0;
  std::size_t min_block = 0;
};

class Report {
 public:
  Report(std::vector<Method> methods, bool latency, bool bandwidth)
      : methods_(std::move(methods)), latency_(latency), bandwidth_(bandwidth) {}

  void record(const PointKey& point, Method method, const Measurement& measurement);
  void print_tables(std::FILE* out) const;
  // False when the file cannot be written.
  bool write_csv(const std::string& path) const;
  // `host` is null when the host ping-pong was not measured; `two_gpus`: the ranks used two.
  void print_targets(std::FILE* out, const HostPingpong* host, bool two_gpus) const;

 private:
  struct Row {
    PointKey point;
    std::map<Method, Measurement> results;
  };
  const Measurement* find(const Row& row, Method method) const;
  // contig-device where measured, else contig-staged: the contiguous ceiling of this MPI.
  const Measurement* contig_reference(const Row& row, Method* which) const;

  void print_table(std::FILE* out, const std::vector<const Row*>& rows, bool latency) const;

  std::vector<Method> methods_;
  bool latency_;
  bool bandwidth_;
  std::vector<Row> rows_;  // in measurement order: tables and sizes as swept
};

}  // namespace gddt::bench
