// "raw-mpi": the MPI library handed the device datatype itself. It may crash (Open MPI + UCX
// packs device memory on the CPU and segfaults), so it runs as a separate 2-rank job of this
// same program (--raw-worker, gddt disabled), started by rank 0 after MPI_Finalize; the job
// writes each point to a report file as it goes, so a crash still tells where it happened.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "cases.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "report.hpp"

namespace gddt::bench {

// The worker's side: one line before each point and one after it.
class RawReportWriter {
 public:
  explicit RawReportWriter(const std::string& path);
  ~RawReportWriter();
  void begin(const PointKey& point);
  void done(const PointKey& point, const Measurement& measurement);

 private:
  std::FILE* file_;
};

struct RawJob {
  std::vector<std::pair<PointKey, Measurement>> points;  // every size of the table, measured or not
  std::string trouble;                                   // "" when the job ended cleanly
};

// Runs one child job for one table and reads back what it measured; sizes it never reached
// are "crashed" (the one under way when the job died), "timeout" or "not run".
RawJob run_raw_job(const Options& options, const MemoryPair& memory, const TableSpec& table,
                   const std::vector<PointKey>& points, const std::string& work_directory);

// The launcher command the raw jobs use, as text (for the header).
std::string raw_launcher_text(const Options& options);

}  // namespace gddt::bench
