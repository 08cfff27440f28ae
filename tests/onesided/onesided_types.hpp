// Random datatypes for one-sided calls, from the fuzzer's generator: an origin, a target and a
// result type whose type signatures match (count x type each), none of whose typemaps overlaps
// (MPI forbids overlapping target buffers, and the origin buffer of a get and a result buffer are
// written like receive buffers).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>

namespace gddt_test::onesided {

struct TypeTriple {
  MPI_Datatype origin = MPI_DATATYPE_NULL;
  MPI_Datatype target = MPI_DATATYPE_NULL;
  MPI_Datatype result = MPI_DATATYPE_NULL;
  int origin_count = 0;
  int target_count = 0;
  int result_count = 0;
  std::string description;

  TypeTriple() = default;
  TypeTriple(const TypeTriple&) = delete;
  TypeTriple& operator=(const TypeTriple&) = delete;
  ~TypeTriple();
};

// A triple drawn from `seed`, each type within `max_span` bytes. With `leaf` MPI_DATATYPE_NULL the
// leaves are any named types and the target and result types are made of the origin type by
// constructors that keep its signature (itself, a vector or contiguous run of it, a resized copy);
// otherwise every leaf of all three is `leaf` and each is drawn on its own, the counts making the
// signatures match. Committed; freed with the triple.
void make_triple(std::uint64_t seed, MPI_Datatype leaf, std::int64_t max_span, TypeTriple* triple);

// The bytes [*low, *high) relative to a buffer pointer that `count` elements of `datatype` touch,
// by the library's true bounds.
void touched(MPI_Datatype datatype, int count, std::int64_t* low, std::int64_t* high);

}  // namespace gddt_test::onesided
