// The datatypes measured, one per (table, packed size): each built as an MPI datatype, plus
// the two hand-written descriptions that the baselines need (the cudaMemcpy2D pieces of
// cpy2d and the word walk of the pipeline kernels). Element data are 4-byte floats unless
// said, so every contiguous block is a whole number of 4-byte words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

namespace gddt::bench {

// One table of results: a type family (and the block size, for vectors).
struct TableSpec {
  std::string family;
  std::size_t vector_block = 0;
  std::string name() const;         // "vector 4B", "subarray3d"
  std::string description() const;  // what the type is, for the table header
};

// One cudaMemcpy2D: `height` rows of `width` bytes, `pitch` apart, from byte `offset`.
struct Piece2D {
  std::size_t offset, width, height, pitch;
};

// The type as the pipeline kernels walk it: either equal blocks at nested strides, or an
// explicit list of blocks (when block_offset is not empty).
struct TypeWalk {
  std::size_t base = 0;                     // byte offset of the first block
  std::size_t block_words = 0;              // words per block
  std::size_t count[2] = {1, 1};            // blocks along the two inner levels
  std::size_t stride[3] = {0, 0, 0};        // bytes between blocks along each level
  std::vector<std::uint64_t> block_first_word;  // packed word where each block starts, then the total
  std::vector<std::uint64_t> block_offset;      // byte offset of each block
};

class Case {
 public:
  // The type of `spec` whose packed size is `packed` bytes; nothing when no such type exists
  // (smaller than one block or element, or not a multiple of one).
  static std::optional<Case> make(const TableSpec& spec, std::size_t packed);

  Case(Case&& other) noexcept;
  Case& operator=(Case&&) = delete;
  Case(const Case&) = delete;
  ~Case();

  MPI_Datatype type = MPI_DATATYPE_NULL;  // committed; sent as (buffer, count, type)
  int count = 1;
  std::size_t packed = 0;     // bytes on the wire
  std::size_t extent = 0;     // bytes of buffer the message spans, from offset 0
  std::size_t min_block = 0;  // smallest contiguous block, bytes
  std::vector<Piece2D> pieces;
  bool pieces_span_gaps = false;  // pieces copy the gaps too, so receiving must not clobber them
  TypeWalk walk;
  std::uint64_t serial = 0;       // distinct for every case made in this process

 private:
  Case() = default;
};

// Bytes of one face array at most (2-D and 3-D faces): large faces get thinner arrays.
constexpr std::size_t kFaceArrayBytes = std::size_t{64} << 20;

}  // namespace gddt::bench
