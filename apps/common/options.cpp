#include "options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace apps {
namespace {

const OptionSpec kCommon[] = {
    {"memory", "auto", "where the arrays live: auto (a GPU where one is usable), device, host"},
    {"iterations", "100", "timed iterations of each version"},
    {"warmup", "5", "iterations of each version before the timed ones"},
    {"versions", "all", "versions to run, comma-separated (the first is the baseline of the ratios)"},
    {"csv", "", "append a row a version to this CSV file"},
    {"label", "", "the MPI stack's name in the table and the CSV (default: the library's first word)"},
    {"expect-gddt", "0", "1: a version through gddt that gddt carried no message of counts as wrong"},
};

}  // namespace

Options::Options(int argc, char** argv, int rank, const char* usage, std::initializer_list<OptionSpec> app_specs)
    : rank_(rank) {
  std::vector<OptionSpec> specs(app_specs);
  specs.insert(specs.end(), std::begin(kCommon), std::end(kCommon));
  for (const OptionSpec& spec : specs) values_[spec.name] = spec.fallback;
  for (int i = 1; i < argc && ok_; i += 2) {
    const std::string arg = argv[i];
    ok_ = arg.size() > 2 && arg.compare(0, 2, "--") == 0 && values_.count(arg.substr(2)) == 1 && i + 1 < argc;
    if (ok_) values_[arg.substr(2)] = argv[i + 1];
  }
  if (ok_ || rank != 0) return;
  std::printf("usage: %s\n", usage);
  for (const OptionSpec& spec : specs) std::printf("  --%-12s %s (default: %s)\n", spec.name, spec.help, spec.fallback);
}

long long Options::number(const std::string& name) const { return std::atoll(text(name).c_str()); }

std::vector<std::string> Options::list(const std::string& name) const {
  std::vector<std::string> items;
  std::stringstream stream(text(name));
  for (std::string item; std::getline(stream, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

std::vector<std::string> Options::versions(const std::vector<std::string>& known) const {
  const std::vector<std::string> named = list("versions");
  if (named == std::vector<std::string>{"all"}) return known;
  for (const std::string& name : named) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    if (rank_ == 0) std::fprintf(stderr, "unknown version '%s'\n", name.c_str());
    return {};
  }
  return named;
}

bool process_grid(MPI_Comm comm, const std::string& text, int dims_count, int* dims) {
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  std::fill(dims, dims + dims_count, 0);
  if (text == "auto") return MPI_Dims_create(ranks, dims_count, dims) == MPI_SUCCESS;
  std::stringstream stream(text);
  std::string extent;
  long long product = 1;
  for (int d = 0; d < dims_count; ++d) {
    if (!std::getline(stream, extent, 'x') || std::atoi(extent.c_str()) < 1) return false;
    dims[d] = std::atoi(extent.c_str());
    product *= dims[d];
  }
  return product == ranks && !std::getline(stream, extent);
}

}  // namespace apps
