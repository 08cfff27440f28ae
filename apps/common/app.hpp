// What every app's main does: start MPI, read the options, choose where the arrays live, run
// each version on a communicator of its own, check it, report it.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "device.hpp"
#include "options.hpp"
#include "report.hpp"

namespace apps {

// MPI_Init, the options (usage and exit 2 where they or --versions, out of `known`, are wrong),
// the place of the arrays (exit 77, skipped, where --memory device cannot be had), `body`'s exit
// code, MPI_Finalize.
int run_app(int argc, char** argv, const char* usage, std::initializer_list<OptionSpec> specs,
            const std::vector<std::string>& known,
            const std::function<int(const Options&, const Place&, const std::vector<std::string>& versions)>& body);

// One version's run: its time, a fingerprint of its result, and its own checks.
struct Outcome {
  Measured measured;
  std::uint64_t fingerprint = 0;
  bool right = true;
  std::string check;  // what was checked, for the table
};

// Runs each version on a duplicate of `comm`, checks every result's bits against the first
// version's (each version's own checks besides) and reports it; every version but `hand` (the
// hand-written one, which calls the library past gddt) is one gddt carries. Returns the exit code.
int run_versions(MPI_Comm comm, Report& report, const std::vector<std::string>& versions, const std::string& hand,
                 const std::function<Outcome(const std::string& version, MPI_Comm comm)>& run);

}  // namespace apps
