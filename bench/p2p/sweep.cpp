#include "sweep.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "checks.hpp"
#include "workspace.hpp"

namespace gddt::bench {
namespace {

std::vector<Case> make_cases(const Options& options, const TableSpec& table) {
  std::vector<Case> cases;
  for (std::size_t packed : options.sizes) {
    std::optional<Case> made = Case::make(table, packed);
    if (made) cases.push_back(std::move(*made));
  }
  return cases;
}

PointKey key_of(const MemoryPair& memory, const TableSpec& table, const Case& message) {
  return PointKey{memory, table, message.packed, message.extent, message.min_block};
}

std::size_t largest_packed(const Options& options) {
  std::size_t largest = 0;
  for (const TableSpec& table : table_specs(options)) {
    for (const Case& message : make_cases(options, table)) largest = std::max(largest, message.packed);
  }
  return largest;
}

}  // namespace

std::vector<TableSpec> table_specs(const Options& options) {
  std::vector<TableSpec> tables;
  for (const std::string& family : options.families) {
    if (family == "vector") {
      for (std::size_t block : options.vector_blocks) tables.push_back({family, block});
    } else {
      tables.push_back({family, 0});
    }
  }
  return tables;
}

std::vector<PointKey> table_points(const Options& options, const MemoryPair& memory, const TableSpec& table) {
  std::vector<PointKey> points;
  for (const Case& message : make_cases(options, table)) points.push_back(key_of(memory, table, message));
  return points;
}

void run_sweep(const Options& options, const std::vector<Method>& methods, const SweepContext& context,
               PointSink* sink) {
  const int peer = 1 - context.rank;
  const Link link{context.comm, peer, options.chunk, context.cuda_aware};
  Measurer measurer(options, context.comm, context.rank);
  const double start = PMPI_Wtime();
  for (const MemoryPair& memory : options.memories) {
    for (const TableSpec& table : table_specs(options)) {
      const std::vector<Case> cases = make_cases(options, table);
      if (cases.empty()) continue;
      std::size_t extent = 0;
      std::size_t packed = 0;
      for (const Case& message : cases) {
        extent = std::max(extent, message.extent);
        packed = std::max(packed, message.packed);
      }
      Workspace workspace(memory.of_rank(context.rank), extent, packed);
      Expectation expectation(context.rank, peer, extent);
      expectation.fill_send_buffers(workspace);
      std::vector<std::pair<Method, std::unique_ptr<TransferMethod>>> runnable;
      for (Method method : methods) {
        if (unavailable_reason(method, memory, context.cuda_aware, context.gddt_usable).empty()) {
          runnable.emplace_back(method, make_method(method, link));
        }
      }
      for (const Case& message : cases) {
        const PointKey point = key_of(memory, table, message);
        if (sink != nullptr) sink->begin(point);
        expectation.expect(message, context.comm);
        for (Method method : methods) {
          const auto found = std::find_if(runnable.begin(), runnable.end(),
                                          [&](const auto& entry) { return entry.first == method; });
          Measurement measurement;
          if (found == runnable.end()) {
            measurement.status = "n/a";
          } else {
            TransferMethod& transfer = *found->second;
            const std::string label = table.name() + " " + memory.name() + " " + method_name(method);
            if (!measurer.verify(transfer, message, workspace, expectation, label.c_str())) {
              measurement.status = "wrong data";
            } else {
              if (options.latency) measurement.latency_us = measurer.latency_us(transfer, message, workspace);
              if (options.bandwidth) measurement.bandwidth_gbs = measurer.bandwidth_gbs(transfer, message, workspace);
            }
          }
          if (sink != nullptr) sink->record(point, method, measurement);
        }
      }
      if (context.show_progress && context.rank == 0) {
        std::fprintf(stderr, "[%7.1f s] measured %s, %s\n", PMPI_Wtime() - start, table.name().c_str(),
                     memory.name().c_str());
      }
    }
  }
}

void run_device_copy(const Options& options, const DeviceCopyPlan& plan, const SweepContext& context, PointSink* sink) {
  Measurer measurer(options, context.comm, context.rank);
  std::unique_ptr<DeviceCopy> copy;  // rank 0's, made at the first point, as large as the largest
  for (const MemoryPair& memory : options.memories) {
    std::string unavailable = unavailable_reason(Method::kDeviceCopy, memory, context.cuda_aware, context.gddt_usable);
    if (unavailable.empty()) unavailable = plan.unavailable;
    for (const TableSpec& table : table_specs(options)) {
      for (const Case& message : make_cases(options, table)) {
        Measurement measurement;
        if (!unavailable.empty()) {
          measurement.status = "n/a";
        } else {
          if (context.rank == 0 && copy == nullptr) copy = std::make_unique<DeviceCopy>(plan, largest_packed(options));
          int intact = context.rank == 0 && copy->copies_correctly(message.packed) ? 1 : 0;
          BENCH_MPI_CHECK(PMPI_Bcast(&intact, 1, MPI_INT, 0, context.comm));
          if (intact == 0) {
            measurement.status = "wrong data";
          } else {
            if (options.latency) measurement.latency_us = measurer.copy_latency_us(copy.get(), message);
            if (options.bandwidth) measurement.bandwidth_gbs = measurer.copy_bandwidth_gbs(copy.get(), message);
          }
        }
        if (sink != nullptr) sink->record(key_of(memory, table, message), Method::kDeviceCopy, measurement);
      }
    }
  }
}

}  // namespace gddt::bench
