// gddt-fuzz-pack's command line.
#pragma once

#include <cstdint>

#include "memory_buffer.hpp"

namespace gddt_test::fuzz {

struct Options {
  std::int64_t types = 10000;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::int64_t only = -1;
  MemoryKind memory = MemoryKind::kHost;
  bool mixed = false;  // --memory mixed: each buffer of a random kind
  bool quiet = false;
  bool verbose = false;
  bool keep_inner = false;
};

void print_usage();
bool parse_options(int argc, char** argv, Options* options);

}  // namespace gddt_test::fuzz
