// The apps' command lines: `--name value` pairs, each name declared with its default and a line
// of help; the options every app takes (where the arrays live, iterations, the CSV, ...) are
// declared here once.
#pragma once

#include <mpi.h>

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace apps {

struct OptionSpec {
  const char* name;
  const char* fallback;
  const char* help;
};

class Options {
 public:
  // Prints the usage on `rank` 0 and leaves ok() false on --help, an unknown name or a name
  // without its value.
  Options(int argc, char** argv, int rank, const char* usage, std::initializer_list<OptionSpec> app_specs);

  bool ok() const { return ok_; }
  const std::string& text(const std::string& name) const { return values_.at(name); }
  long long number(const std::string& name) const;
  std::vector<std::string> list(const std::string& name) const;  // comma-separated
  // --versions: `known` for "all", else the names given; empty (and said on rank 0) where one is
  // not known.
  std::vector<std::string> versions(const std::vector<std::string>& known) const;

 private:
  std::map<std::string, std::string> values_;
  int rank_;
  bool ok_ = true;
};

// The process grid of --grid: "auto" (MPI_Dims_create) or `dims` extents joined by 'x' ("2x2").
// False where it does not hold the ranks of `comm`.
bool process_grid(MPI_Comm comm, const std::string& text, int dims_count, int* dims);

}  // namespace apps
