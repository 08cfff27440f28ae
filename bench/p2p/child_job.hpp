// Methods that may crash the MPI library run in separate 2-rank jobs of this same program
// (--child-worker, gddt disabled), started by rank 0 after MPI_Finalize: "raw-mpi" (the MPI
// handed the device datatype; Open MPI + UCX packs device memory on the CPU and segfaults) and
// "contig-device" when the MPI does not report CUDA-awareness. The job writes each point to a
// report file as it goes, so a crash still tells where it happened.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cases.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "report.hpp"

namespace gddt::bench {

// The worker's side: one line before each point and one after it.
class ChildReportWriter {
 public:
  explicit ChildReportWriter(const std::string& path);
  ~ChildReportWriter();
  ChildReportWriter(const ChildReportWriter&) = delete;
  ChildReportWriter& operator=(const ChildReportWriter&) = delete;
  void begin(const PointKey& point);
  void done(const PointKey& point, const Measurement& measurement);

 private:
  std::FILE* file_;
};

struct ChildJob {
  std::vector<std::pair<PointKey, Measurement>> points;  // every size of the table, measured or not
  std::string trouble;                                   // "" when the job ended cleanly
};

// Runs `method` on one table in a child job and reads back what it measured; sizes it never
// reached are "crashed" (the one under way when the job died), "timeout" or "not run".
ChildJob run_child_job(const Options& options, Method method, const MemoryPair& memory, const TableSpec& table,
                       const std::vector<PointKey>& points, const std::string& work_directory);

// The launcher command of the child jobs, as text (for the header).
std::string child_launcher_text(const Options& options);

}  // namespace gddt::bench
