// How the apps time their versions and report them: time per iteration (the slowest rank's), the
// part of it spent communicating, the messages gddt carried, a check, and the ratio to the first
// version; a table on rank 0 and a CSV row a version (apps/summarize.py and apps/plot_apps.py
// read the CSV).
#pragma once

#include <mpi.h>

#include <functional>
#include <string>

#include "options.hpp"

namespace apps {

struct Measured {
  double us = 0;             // per iteration
  double comm_us = 0;        // of it, in the exchange
  long long gddt_sides = 0;  // sides of messages and collective buffers gddt carried, all ranks
};

// Runs `warmup` iterations, then `iterations` timed ones, each the exchange and then the
// computation (both return with the GPU idle), after a barrier.
Measured measure(MPI_Comm comm, int warmup, int iterations, const std::function<void()>& exchange,
                 const std::function<void()>& compute);

class Report {
 public:
  // Prints the column headings (rank 0); `size` names the problem, `bytes_per_rank` its data.
  Report(MPI_Comm comm, const Options& options, const std::string& app, const std::string& case_name,
         const std::string& size, double bytes_per_rank);

  // One version: `right` is this rank's verdict, `check` what was compared (rank 0's words). A
  // version `through_gddt` under --expect-gddt 1 is wrong where gddt carried nothing of it.
  void row(const std::string& version, bool through_gddt, const Measured& measured, bool right,
           const std::string& check);
  int exit_code() const { return wrong_ ? 1 : 0; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, ranks_ = 0;
  std::string csv_, label_, app_, case_, size_;
  double mib_per_rank_;
  bool expect_gddt_;
  double first_us_ = 0;
  bool wrong_ = false;
};

}  // namespace apps
