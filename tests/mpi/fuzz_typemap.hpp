// The fuzzer's independent expectation of a datatype: its typemap expanded from the
// constructor tree by the rules of the MPI standard, asking MPI nothing but the extents of
// named types. Named types come from fuzz_named_types (layout from the C types). The part
// the standard leaves to the implementation, the padding (epsilon) that rounds an extent up
// to the alignment of the members, is a rule per library (PaddingRule).
#pragma once

#include <cstdint>
#include <vector>

#include "fuzz_named_types.hpp"
#include "fuzz_type_tree.hpp"

namespace gddt_test::fuzz {

struct Typemap {
  std::vector<ByteRun> runs;  // data bytes in typemap order (= packed order); adjacent runs merged
  std::int64_t lb = 0;
  std::int64_t ub = 0;
  std::int64_t size = 0;        // sum of run lengths
  std::int64_t alignment = 1;   // largest alignment of a named type present
  // Carries explicit lower/upper bound markers (from resized, subarray or darray somewhere
  // below): a struct then takes its bounds from the markers only (MPI-4.0 5.1.7).
  bool explicit_bounds = false;

  std::int64_t extent() const { return ub - lb; }
  // Bounds of the data bytes; both 0 for an empty typemap.
  std::int64_t true_lb() const;
  std::int64_t true_ub() const;
};

// When the extent is rounded up to the alignment of the members (never once an explicit
// bound marker is present). MPICH pads a struct once, at the end. Open MPI builds every
// derived type by adding blocks one at a time (one add for contiguous, vector and hvector;
// one per block of the indexed kinds; one per struct member) and pads after each add, so
// the result depends on the order of the blocks.
enum class PaddingRule { kStructOnly, kAfterEveryAdd };

// Expands `node`. Returns false (and leaves *map unspecified) when the typemap would need
// more than `max_runs` runs: such a type is too large for the fuzzer. With `library_bounds`,
// every derived node takes the bounds the library reported for it, as the library itself
// steps by those.
bool expand_typemap(const TypeNode& node, PaddingRule padding, std::size_t max_runs, Typemap* map,
                    const LibraryBoundsMap* library_bounds = nullptr);

// Packs/unpacks `count` elements (element i at origin + i * extent) by the typemap alone.
// Unpacking writes in typemap order, so where bytes overlap the last one wins.
void model_pack(const Typemap& map, std::int64_t count, const unsigned char* typed_origin,
                unsigned char* packed);
void model_unpack(const Typemap& map, std::int64_t count, const unsigned char* packed,
                  unsigned char* typed_origin);

// True when two data bytes of `count` elements share an address.
bool overlaps(const Typemap& map, std::int64_t count);

}  // namespace gddt_test::fuzz
