// What the fuzzer's checks use (fuzz_pack_checks.hpp).
#include "fuzz_pack_checks.hpp"

#include <mpi.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_random.hpp"

namespace gddt_test::fuzz {

std::string first_difference(const Result& actual, const Result& wanted, std::int64_t origin) {
  char text[160];
  if (!actual.ok) return "returned " + actual.error;
  if (actual.end != wanted.end) {
    std::snprintf(text, sizeof text, "ends at %" PRId64 ", want %" PRId64, actual.end, wanted.end);
    return text;
  }
  for (size_t i = 0; i < actual.bytes.size(); ++i) {
    if (actual.bytes[i] != wanted.bytes[i]) {
      std::snprintf(text, sizeof text, "byte %" PRId64 " is 0x%02x, want 0x%02x",
                    static_cast<std::int64_t>(i) - origin, actual.bytes[i], wanted.bytes[i]);
      return text;
    }
  }
  return "no difference";
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

void fill_random(Rng* rng, Bytes* bytes) {
  for (size_t i = 0; i < bytes->size(); i += 8) {
    const std::uint64_t word = rng->next();
    std::memcpy(bytes->data() + i, &word, std::min<size_t>(8, bytes->size() - i));
  }
}

std::vector<std::pair<std::int64_t, std::int64_t>> random_windows(Rng* rng, std::int64_t total,
                                                                  bool shuffled) {
  std::vector<std::int64_t> cuts = {0, total};
  const int extra_cuts = static_cast<int>(rng->between(0, 4));
  for (int i = 0; i < extra_cuts; ++i) cuts.push_back(rng->between(0, total));
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> windows;
  for (size_t i = 1; i < cuts.size(); ++i) windows.emplace_back(cuts[i - 1], cuts[i] - cuts[i - 1]);
  for (size_t i = windows.size(); shuffled && i > 1; --i)
    std::swap(windows[i - 1], windows[static_cast<size_t>(rng->between(0, static_cast<std::int64_t>(i) - 1))]);
  return windows;
}

std::vector<int> random_pieces(Rng* rng, int count) {
  std::vector<int> pieces;
  int left = count;
  while (left > 0 && pieces.size() < 2 && rng->one_in(2)) {
    const int piece = static_cast<int>(rng->between(0, left));
    pieces.push_back(piece);
    left -= piece;
  }
  pieces.push_back(left);
  return pieces;
}

}  // namespace gddt_test::fuzz
