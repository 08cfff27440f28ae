// The sweep: every (memory pair, type table, packed size, method) the options ask for,
// measured by the two ranks together; rank 0 hands each result to a sink.
#pragma once

#include <mpi.h>

#include <vector>

#include "cases.hpp"
#include "device_copy.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "report.hpp"

namespace gddt::bench {

struct SweepContext {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  bool cuda_aware = false;
  bool gddt_usable = false;
  bool show_progress = false;  // rank 0 notes each finished table on stderr
};

class PointSink {
 public:
  virtual ~PointSink() = default;
  virtual void begin(const PointKey& point) = 0;
  virtual void record(const PointKey& point, Method method, const Measurement& measurement) = 0;
};

std::vector<TableSpec> table_specs(const Options& options);

// The table's points (packed sizes that make a type), each with its extent and block.
std::vector<PointKey> table_points(const Options& options, const MemoryPair& memory, const TableSpec& table);

// Measures `methods` (those that can run here) at every point, telling `sink` (rank 0's;
// the other rank may pass null).
void run_sweep(const Options& options, const std::vector<Method>& methods, const SweepContext& context,
               PointSink* sink);

// Measures the d2d-copy ceiling at every device:device point of the sweep (both ranks call
// it; rank 0 copies as `plan` says). Run after everything else that shares the GPUs: see
// DeviceCopy.
void run_device_copy(const Options& options, const DeviceCopyPlan& plan, const SweepContext& context, PointSink* sink);

}  // namespace gddt::bench
