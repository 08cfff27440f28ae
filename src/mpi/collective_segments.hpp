// The words the collective engine (collective.hpp) describes a buffer argument in: which way the
// call moves it, its segments, and the same segments as packed bytes for the library.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace gddt::mpi::collective {

enum class Direction {
  kIn,     // read by the call (send buffers)
  kOut,    // written by it (receive buffers); read too where another buffer is MPI_IN_PLACE
  kInOut,  // both (MPI_Bcast's buffer, MPI_Reduce_local's inoutbuf)
};

// One run of elements of a buffer argument: `count` elements of `datatype` starting
// `displacement` units from the buffer pointer, the unit being the datatype's extent or a byte.
struct Segment {
  enum class Unit { kExtents, kBytes };
  std::int64_t count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  std::int64_t displacement = 0;
  Unit unit = Unit::kExtents;
};

// A buffer argument's segments as packed bytes: segment i is bytes[i] bytes at offsets[i] of one
// packed buffer. The packed path hands the library these as MPI_BYTE elements; the rewrite of a
// call's count, datatype and displacement parameters (generated per row) asks it for them, and the
// arrays it makes live as long as the call's stand-ins.
class PackedSegments {
 public:
  std::vector<std::int64_t> bytes, offsets;
  // Whether the last rewrite handed the library one count per segment (counts()), so that one
  // segment's count can be made 0 (this process's own block, moved by gddt: collective.cpp).
  bool per_segment_counts = false;

  // Whether every count and displacement fits a parameter's integer type (a scalar or an array).
  template <typename Integer>
  bool fit(Integer) const {
    return fits(std::numeric_limits<Integer>::max());
  }
  template <typename Integer>
  bool fit(const Integer*) const {
    return fits(std::numeric_limits<Integer>::max());
  }
  // One count for every segment (equal blocks, or the one segment).
  template <typename Integer>
  void count(Integer* scalar) {
    per_segment_counts = false;
    *scalar = static_cast<Integer>(bytes.empty() ? 0 : *std::max_element(bytes.begin(), bytes.end()));
  }
  template <typename Integer>
  void counts(const Integer** array) {
    per_segment_counts = true;
    *array = kept(bytes, Integer{});
  }
  template <typename Integer>
  void displacements(const Integer** array) {
    *array = kept(offsets, Integer{});
  }
  void datatype(MPI_Datatype* scalar) const { *scalar = MPI_BYTE; }
  void datatypes(const MPI_Datatype** array) {
    types_.assign(bytes.size(), MPI_BYTE);
    *array = types_.data();
  }

 private:
  // `values` converted and kept for the library.
  template <typename Integer>
  const Integer* kept(const std::vector<std::int64_t>& values, Integer) {
    auto copy = std::make_shared<std::vector<Integer>>(values.begin(), values.end());
    arrays_.push_back(copy);
    return copy->data();
  }
  bool fits(std::int64_t most) const {
    return std::all_of(bytes.begin(), bytes.end(), [most](std::int64_t b) { return b <= most; }) &&
           std::all_of(offsets.begin(), offsets.end(), [most](std::int64_t o) { return o <= most; });
  }
  std::vector<MPI_Datatype> types_;
  std::vector<std::shared_ptr<void>> arrays_;
};

}  // namespace gddt::mpi::collective
