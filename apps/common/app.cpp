#include "app.hpp"

#include <cstdio>

namespace apps {

int run_app(int argc, char** argv, const char* usage, std::initializer_list<OptionSpec> specs,
            const std::vector<std::string>& known,
            const std::function<int(const Options&, const Place&, const std::vector<std::string>& versions)>& body) {
  MPI_Init(&argc, &argv);
  int rank = 0, status = 2;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const Options options(argc, argv, rank, usage, specs);
  const std::vector<std::string> versions = options.ok() ? options.versions(known) : std::vector<std::string>();
  if (!versions.empty()) {
    const Place place = choose_place(options.text("memory"), MPI_COMM_WORLD);
    if (!place.gpu && options.text("memory") == "device") {
      if (rank == 0) std::printf("SKIP: device memory: %s\n", place.why_host.c_str());
      status = 77;
    } else {
      status = body(options, place, versions);
    }
  }
  MPI_Finalize();
  return status;
}

int run_versions(MPI_Comm comm, Report& report, const std::vector<std::string>& versions, const std::string& hand,
                 const std::function<Outcome(const std::string& version, MPI_Comm comm)>& run) {
  std::uint64_t first = 0;
  for (const std::string& version : versions) {
    MPI_Comm own;
    MPI_Comm_dup(comm, &own);
    Outcome outcome = run(version, own);
    MPI_Comm_free(&own);
    if (&version == &versions.front()) {
      first = outcome.fingerprint;
    } else {
      outcome.right = outcome.right && outcome.fingerprint == first;
      outcome.check = "bits = " + versions.front() + (outcome.check.empty() ? "" : ", " + outcome.check);
    }
    report.row(version, version != hand, outcome.measured, outcome.right,
               outcome.check.empty() ? "not checked" : outcome.check);
  }
  return report.exit_code();
}

}  // namespace apps
