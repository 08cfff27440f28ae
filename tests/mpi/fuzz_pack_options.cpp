// gddt-fuzz-pack's command line (fuzz_pack_options.hpp).
#include "fuzz_pack_options.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "memory_buffer.hpp"

namespace gddt_test::fuzz {

void print_usage() {
  std::printf(
      "usage: gddt-fuzz-pack [--types N] [--seed S] [--only I] "
      "[--memory host|device|managed|pinned|mixed] [--keep-inner] [--quiet] [--verbose]\n"
      "  --types N   number of random datatypes (default 10000), spread over the ranks\n"
      "  --seed S    seed of the run (default: random, printed)\n"
      "  --only I    test type I of the run only (every rank tests it)\n"
      "  --memory K  where gddt's typed and packed buffers live (default host); mixed: each\n"
      "              buffer of a random kind\n"
      "  --keep-inner  keep every type's building blocks alive to the end of the run and describe\n"
      "              each type through MPI_Type_get_contents, freeing the references it returns\n"
      "              (the library then hands the freed types' handles to new ones)\n"
      "  --quiet     print only failures and the summary\n"
      "  --verbose   print each type before testing it (to find one that crashes)\n");
}

bool parse_options(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    char* end = nullptr;
    if (flag == "--quiet" || flag == "--verbose" || flag == "--keep-inner") {
      (flag == "--quiet" ? options->quiet : flag == "--verbose" ? options->verbose : options->keep_inner) = true;
      continue;
    }
    if (value == nullptr) return false;
    ++i;
    if (flag == "--types") {
      options->types = std::strtoll(value, &end, 10);
    } else if (flag == "--seed") {
      options->seed = std::strtoull(value, &end, 0);
      options->seed_given = true;
    } else if (flag == "--only") {
      options->only = std::strtoll(value, &end, 10);
    } else if (flag == "--memory") {
      options->mixed = std::string(value) == "mixed";
      if (options->mixed) options->memory = MemoryKind::kDevice;  // must be available
      if (!options->mixed && !parse_memory_kind(value, &options->memory)) return false;
      continue;
    } else {
      return false;
    }
    if (end == value || *end != '\0') return false;
  }
  return options->types >= 0;
}

}  // namespace gddt_test::fuzz
