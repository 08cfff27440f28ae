// What the fuzzer's checks use: the notes, what one way of packing or unpacking produced and how
// two such results compare, MPI's text of an error, and the random inputs (buffer bytes, windows
// of the stream, pieces of the elements).
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_random.hpp"

namespace gddt_test::fuzz {

using Bytes = std::vector<unsigned char>;

// Counts of noteworthy events (reference faults, references not used), each printed with its
// first case when first seen and counted in the summary: nothing is skipped silently.
class Notes {
 public:
  explicit Notes(bool quiet) : quiet_(quiet) {}

  void add(const std::string& kind, const std::string& first_case) {
    if (counts_[kind]++ == 0 && !quiet_)
      std::printf("fuzz: note: %s (further cases only counted)\n      first: %s\n", kind.c_str(),
                  first_case.c_str());
  }

  void print_summary(const std::string& prefix) const {
    for (const auto& [kind, count] : counts_)
      std::printf("%s%s: %" PRId64 "\n", prefix.c_str(), kind.c_str(), count);
  }

 private:
  bool quiet_;
  std::map<std::string, std::int64_t> counts_;
};

// What one way of packing or unpacking produced: the whole output buffer and the final
// position (or, for windows, the end of the stream), or the error it returned.
struct Result {
  bool ok = true;
  std::string error;
  Bytes bytes;
  std::int64_t end = 0;
};

inline bool same(const Result& a, const Result& b) { return a.ok && b.ok && a.end == b.end && a.bytes == b.bytes; }

std::string first_difference(const Result& actual, const Result& wanted, std::int64_t origin);

std::string mpi_error_text(int code);

void fill_random(Rng* rng, Bytes* bytes);

// Splits [0, total) into 1-5 windows (some possibly empty), in a random order if `shuffled`.
std::vector<std::pair<std::int64_t, std::int64_t>> random_windows(Rng* rng, std::int64_t total,
                                                                  bool shuffled);

// Splits `count` elements into 1-3 consecutive pieces, one MPI call each.
std::vector<int> random_pieces(Rng* rng, int count);

}  // namespace gddt_test::fuzz
