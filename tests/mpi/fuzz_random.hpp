// Random datatype trees for the fuzzer. Everything derives from one 64-bit seed per type, so
// a type index and the run's seed reproduce a type exactly.
#pragma once

#include <cstdint>

#include "fuzz_type_tree.hpp"

namespace gddt_test::fuzz {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [low, high] (inclusive).
  std::int64_t between(std::int64_t low, std::int64_t high);
  // True with probability 1/n.
  bool one_in(std::int64_t n) { return between(1, n) == 1; }

 private:
  std::uint64_t state_;
};

// Seed of type `index` in a run seeded `seed`.
std::uint64_t type_seed(std::uint64_t seed, std::uint64_t index);

// Limits that keep one type cheap to test.
struct TypeLimits {
  int max_depth = 4;
  std::int64_t max_span = 256 * 1024;  // bytes between the lowest and highest byte touched
  std::size_t max_runs = 1 << 15;      // contiguous runs of the expanded typemap
  // Every leaf this named type instead of a random one (MPI_DATATYPE_NULL: random leaves): one-sided
  // accumulates want types of one predefined type.
  MPI_Datatype named_leaf = MPI_DATATYPE_NULL;
};

// A random type tree within `limits` (for one element). `world_rank` shifts the rank a darray
// is built for, so that ranks of one run test different pieces of the same arrays.
TypeNode random_type(Rng* rng, const TypeLimits& limits, int world_rank);

}  // namespace gddt_test::fuzz
