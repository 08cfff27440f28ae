#include "report.hpp"

#include <cstdio>
#include <sstream>

#include "gddt/gddt.h"

namespace apps {
namespace {

// What gddt moved itself; a message the library carried alone counts in none of these.
long long gddt_sides() {
  static const char* const kCounters[] = {"p2p.device-bytes.sides", "p2p.device-staged.sides", "p2p.host-span.sides",
                                          "p2p.host-staged.sides",  "p2p.peer-inline.sides",   "p2p.peer-ipc.sides",
                                          "p2p.peer-staged.sides",  "collective.stand-ins"};
  long long sum = 0;
  for (const char* name : kCounters) {
    long long value = 0;
    if (gddt_counter(name, &value) == GDDT_OK) sum += value;
  }
  return sum;
}

// The library's name and version: the first line of its version string up to a comma.
std::string library_label() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  const std::string text(version, length);
  std::istringstream words(text.substr(0, text.find_first_of(",\n")));
  std::string label, word;
  while (words >> word) label += (label.empty() ? "" : " ") + word;
  return label;
}

}  // namespace

Measured measure(MPI_Comm comm, int warmup, int iterations, const std::function<void()>& exchange,
                 const std::function<void()>& compute) {
  const long long sides_before = gddt_sides();
  for (int i = 0; i < warmup; ++i) exchange(), compute();
  double total = 0, comm_time = 0;
  MPI_Barrier(comm);
  for (int i = 0; i < iterations; ++i) {
    const double start = MPI_Wtime();
    exchange();
    const double exchanged = MPI_Wtime();
    compute();
    comm_time += exchanged - start;
    total += MPI_Wtime() - start;
  }
  long long sides = gddt_sides() - sides_before, all_sides = 0;  // before the reductions, which gddt may stage
  double local[2] = {total, comm_time}, slowest[2];
  MPI_Allreduce(local, slowest, 2, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(&sides, &all_sides, 1, MPI_LONG_LONG, MPI_SUM, comm);
  const double per_iteration = iterations > 0 ? 1e6 / iterations : 0;
  return Measured{slowest[0] * per_iteration, slowest[1] * per_iteration, all_sides};
}

Report::Report(MPI_Comm comm, const Options& options, const std::string& app, const std::string& case_name,
               const std::string& size, double bytes_per_rank)
    : comm_(comm),
      csv_(options.text("csv")),
      label_(options.text("label").empty() ? library_label() : options.text("label")),
      app_(app),
      case_(case_name),
      size_(size),
      mib_per_rank_(bytes_per_rank / 1048576.0),
      expect_gddt_(options.number("expect-gddt") != 0) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &ranks_);
  if (rank_ != 0) return;
  std::printf("%s %s, %s (%.2f MiB a rank), %d ranks, %s\n", app.c_str(), case_name.c_str(), size.c_str(),
              mib_per_rank_, ranks_, label_.c_str());
  std::printf("  %-10s %12s %12s %7s %9s %11s  %s\n", "version", "us/iter", "comm us/iter", "comm", "speedup",
              "gddt sides", "check");
}

void Report::row(const std::string& version, bool through_gddt, const Measured& m, bool right,
                 const std::string& check) {
  const bool carried = !through_gddt || !expect_gddt_ || m.gddt_sides > 0;
  right = right && carried;
  int right_here = right, right_everywhere = 0;
  MPI_Allreduce(&right_here, &right_everywhere, 1, MPI_INT, MPI_LAND, comm_);
  wrong_ = wrong_ || !right_everywhere;
  if (first_us_ == 0) first_us_ = m.us;
  if (rank_ != 0) return;
  const double share = m.us > 0 ? m.comm_us / m.us : 0;
  const std::string verdict =
      (right_everywhere ? "ok: " : "WRONG: ") + check + (carried ? "" : ", gddt carried nothing");
  std::printf("  %-10s %12.1f %12.1f %6.1f%% %8.2fx %11lld  %s\n", version.c_str(), m.us, m.comm_us, 100 * share,
              m.us > 0 ? first_us_ / m.us : 0, m.gddt_sides, verdict.c_str());
  std::fflush(stdout);
  if (csv_.empty()) return;
  FILE* file = std::fopen(csv_.c_str(), "a");
  if (file == nullptr) return;
  std::fseek(file, 0, SEEK_END);
  if (std::ftell(file) == 0)
    std::fprintf(file,
                 "app,stack,ranks,case,size,mib_per_rank,version,us_per_iteration,comm_us_per_iteration,"
                 "comm_share,gddt_sides,check\n");
  std::fprintf(file, "%s,%s,%d,%s,%s,%.4f,%s,%.3f,%.3f,%.4f,%lld,%s\n", app_.c_str(), label_.c_str(), ranks_,
               case_.c_str(), size_.c_str(), mib_per_rank_, version.c_str(), m.us, m.comm_us, share, m.gddt_sides,
               right_everywhere ? "ok" : "WRONG");
  std::fclose(file);
}

}  // namespace apps
