// The fuzzer's own description of a derived datatype: a tree of constructor calls with their
// arguments. From it the fuzzer builds the MPI datatype, prints a reproducible description,
// and expands its own typemap (fuzz_typemap.hpp) without asking MPI.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gddt_test::fuzz {

enum class Constructor {
  kNamed,
  kContiguous,
  kVector,
  kHvector,
  kIndexed,
  kHindexed,
  kIndexedBlock,
  kHindexedBlock,
  kStruct,
  kSubarray,
  kDarray,
  kResized,
  kDup,
};

// The two ways the four indexed constructors differ: displacements in bytes (h-) or in child
// extents, and one blocklength for all blocks (-_block) or one per block.
inline bool displacements_in_bytes(Constructor c) {
  return c == Constructor::kHindexed || c == Constructor::kHindexedBlock;
}
inline bool one_blocklength(Constructor c) {
  return c == Constructor::kIndexedBlock || c == Constructor::kHindexedBlock;
}

struct TypeNode {
  Constructor constructor = Constructor::kNamed;
  MPI_Datatype named = MPI_DATATYPE_NULL;  // kNamed only

  // contiguous, vector, hvector: count; vector, hvector, indexed_block, hindexed_block:
  // blocklength; vector: stride in extents of the child, hvector: stride in bytes.
  int count = 0;
  int blocklength = 0;
  std::int64_t stride = 0;

  // indexed, hindexed, struct: one blocklength per block. indexed, indexed_block: displacement
  // in extents of the child; hindexed, hindexed_block, struct: in bytes.
  std::vector<int> blocklengths;
  std::vector<std::int64_t> displacements;

  // subarray: array sizes, subsizes, starts. darray: global sizes, distributions, dargs,
  // process grid, and this process's rank in that grid.
  std::vector<int> sizes;
  std::vector<int> subsizes;
  std::vector<int> starts;
  std::vector<int> distributions;
  std::vector<int> dargs;
  std::vector<int> process_grid;
  int grid_rank = 0;
  int order = MPI_ORDER_C;

  // resized
  std::int64_t resized_lb = 0;
  std::int64_t resized_extent = 0;

  // One child for every constructor but struct (one per block) and named (none).
  std::vector<TypeNode> children;
};

// The bounds the MPI library reports for each derived node of a tree (MPI_Type_get_extent
// of the handle built for it), keyed by node.
struct LibraryBounds {
  std::int64_t lb;
  std::int64_t extent;
};
using LibraryBoundsMap = std::map<const TypeNode*, LibraryBounds>;

// Builds the (uncommitted) MPI datatype, recording the library's bounds of every derived node
// in *bounds. Intermediate handles are freed as soon as their
// parent exists, as MPI allows, so gddt must cope with handles freed (and reused) below a
// live type. Some of them are committed first (`commit_mask`: one bit per derived child in
// construction order) so both committed and uncommitted children reach gddt's decoder; where
// the library has MPI-4's large-count constructors, the mask's high bits pick them for some
// nodes, which the library then describes only through the _c queries.
// With `kept`, the intermediate handles go there instead, by node, alive for the caller to free
// (a program that keeps its building blocks and frees only the types it sent).
// Returns MPI_SUCCESS or the failing call's code.
using KeptHandles = std::map<const TypeNode*, MPI_Datatype>;
int build_datatype(const TypeNode& node, std::uint64_t commit_mask, MPI_Datatype* datatype,
                   LibraryBoundsMap* bounds, KeptHandles* kept = nullptr);

// Walks a datatype through MPI_Type_get_envelope/get_contents the way a program describing its
// types does, freeing every derived reference get_contents returns (MPI-4.0 5.1.13).
void walk_contents(MPI_Datatype datatype);

// A one-line description: constructor names with their arguments, children nested.
std::string describe(const TypeNode& node);

// Name of a named datatype ("MPI_DOUBLE").
const char* named_type_name(MPI_Datatype named);

// True when the named type `named` appears in the tree.
bool contains_named_type(const TypeNode& node, MPI_Datatype named);

// Greatest nesting depth (a named type alone is depth 0).
int depth(const TypeNode& node);

}  // namespace gddt_test::fuzz
