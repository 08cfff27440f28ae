// One MPI call run twice and compared byte for byte: through gddt (MPI_*) on buffers of the run's
// memory kind, and through the library alone (PMPI_*) on host copies of the same bytes, every byte
// of every buffer (gaps between segments and margins around them included) equal afterwards. The
// collectives and file I/O suites check every call this way, over the random datatypes of the
// fuzzer's generator.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "../mpi/fuzz_random.hpp"
#include "../mpi/fuzz_type_tree.hpp"
#include "../p2p/harness.hpp"
#include "memory_buffer.hpp"

namespace gddt_test::trial {

using Bytes = std::vector<unsigned char>;

// Margins around the bytes a buffer's segments touch, which must come out untouched too.
constexpr std::int64_t kMargin = 64;

// One run of elements of a buffer: `count` elements of `datatype`, `displacement` bytes from the
// buffer pointer.
struct Segment {
  int count;
  MPI_Datatype datatype;
  std::int64_t displacement;
};

// The bytes [low, high) relative to the buffer pointer that the segments touch, as the library's
// true bounds say.
void touched(const std::vector<Segment>& segments, std::int64_t* low, std::int64_t* high);

// The same function through gddt or, for the reference run, the library alone.
#define CALL(reference, name, ...) ((reference) ? P##name(__VA_ARGS__) : name(__VA_ARGS__))

class Trial {
 public:
  // Buffers of `memory` (the run's kind where not given).
  Trial(const p2p::Context& context, std::string what, std::uint64_t seed);
  Trial(const p2p::Context& context, std::string what, std::uint64_t seed, MemoryKind memory);

  // A buffer holding `segments`, filled with random bytes (ints below 1000 with `small_ints`, for
  // reductions that must not overflow); returns its index.
  int add(const std::vector<Segment>& segments, bool small_ints = false);

  // Runs `call` (given whether it is the library's reference run, and the buffer pointers) both
  // ways and compares every buffer. `call` returns the MPI result, which must be MPI_SUCCESS.
  void run(const std::function<int(bool reference, const std::vector<void*>& buffers)>& call);

 private:
  struct Image {
    std::int64_t origin = 0;  // of the buffer pointer in the image
    Bytes initial;
  };
  const p2p::Context& context_;
  std::string what_;
  fuzz::Rng rng_;
  MemoryKind memory_;
  std::vector<Image> images_;
};

// A committed random datatype of the run.
struct Types {
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  std::int64_t extent = 0;
  std::string description;
};

// Which random types a suite takes.
struct TypeChoice {
  std::int64_t max_span = 16 * 1024;  // bytes between the lowest and highest byte of an element
  bool large_count_constructors = true;  // some nodes made by MPI-4's _c constructors, where there are
  // Types to leave out, by their tree and the datatype built from it (not yet committed).
  std::function<bool(const fuzz::TypeNode& node, MPI_Datatype datatype)> left_out;
};

// The random type `index` of the run (the same on every rank; a duplicate where it is a named type,
// for the caller to free), or nothing when it is empty, holds a long double or a type `choice` leaves
// out, or the library gets its bytes wrong by itself (fuzz_reference.hpp): the 6 padding bytes of a
// long double are left undefined, the library's typed copies and its pack and unpack treat them each
// their own way (p2p_random_types marks them; here such types are left to it).
bool random_type(const p2p::Context& context, int index, Types* types, const TypeChoice& choice = {});

// Erroneous calls, each made through the library and through gddt (`call(reference)`): the same
// error class, not MPI_SUCCESS.
using ErroneousCall = std::pair<std::string, std::function<int(bool reference)>>;
void expect_library_classes(const std::vector<ErroneousCall>& calls);

// The gddt counter `name` (-1 where gddt is not loaded).
long long counter_value(const char* name);

}  // namespace gddt_test::trial
