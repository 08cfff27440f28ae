// The MPI standard's lower and upper bounds of a datatype (MPI-4.0 5.1.6-5.1.7), computed
// from the constructor tree rather than read from the library: the reference libraries get
// some of them wrong (Open MPI 4.1 with negative strides and darrays below a struct, MPICH
// 4.0 when explicit markers meet plain entries), and the bounds decide where element i of
// `count` starts. decode.cpp feeds this from MPI_Type_get_contents; nothing here calls MPI
// except to tell named types apart.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "core/status.hpp"

namespace gddt::type {

struct TypeBounds {
  std::int64_t lb = 0;
  std::int64_t ub = 0;
  // The typemap holds lb/ub markers (a resized, subarray or darray somewhere below): the
  // markers alone define the bounds, and no epsilon is added.
  bool marked = false;
  // The typemap has an entry or a marker. An empty one has lb = ub = 0 and adds nothing to
  // the bounds of a type built from it.
  bool occupied = false;
  // The largest alignment of a named type among the entries: the epsilon that may round the
  // extent up is less than it.
  std::uint32_t alignment = 1;
  // The library reports these bounds too (gddt did not replace them), so the bounds it
  // reports for a type built from this one rest on the right ones.
  bool library_agrees = true;
  // How many bytes the library's extent may exceed extent() by through padding alone:
  // alignment - 1 for each block the library may pad after (Open MPI pads after every block
  // it adds, MPICH once per struct). Zero where markers fix the bounds, or where a child's
  // bounds were replaced, as the library's padding then cannot be told from its mistakes.
  std::int64_t max_padding = 0;
  // How far ub moves when the extent is rounded up to the alignment so far after every block
  // placed, the way Open MPI pads, rather than once at the end: its own bounds where gddt
  // replaces a wrong one of that library's. Zero where markers fix the bounds.
  std::int64_t padding_after_every_block = 0;

  std::int64_t extent() const { return ub - lb; }
};

// A named type, or one gddt knows only as a dense block: the library's bounds (MPI defines
// those of named types), occupied, unmarked.
TypeBounds library_bounds(MPI_Datatype datatype, std::int64_t lb, std::int64_t extent);

// MPI_Type_create_resized, and subarray/darray (the standard defines both through it).
TypeBounds resized_bounds(const TypeBounds& child, std::int64_t lb, std::int64_t extent);

// Lowest and highest of i * step for 0 <= i < count (count >= 1). GDDT_ERR_UNSUPPORTED on
// int64 overflow, as everywhere in decoding.
Status repeat_span(std::int64_t count, std::int64_t step, std::int64_t* low, std::int64_t* high);

// The bounds of a constructor's typemap from the copies of its children it places. Plain
// and marked copies are kept apart: where any marker is present, only markers count.
class BoundsBuilder {
 public:
  // Copies of `child` at displacements from `low` to `high` (the lowest and highest of
  // them); a block of zero copies must not be placed at all.
  Status place(const TypeBounds& child, std::int64_t low, std::int64_t high);
  TypeBounds finish() const;

 private:
  struct Range {
    bool any = false;
    std::int64_t lb = 0;
    std::int64_t ub = 0;
    void include(std::int64_t low, std::int64_t high);
  };
  Range plain_;
  Range marked_;
  Range padded_after_every_block_;  // plain_, its extent rounded up after each place()
  std::uint32_t alignment_ = 1;
  std::int64_t blocks_ = 0;
  bool children_agree_ = true;
};

// `bounds` with the standard's epsilon: the extent rounded up to a multiple of the
// alignment, unless markers fix the bounds.
TypeBounds with_epsilon(const TypeBounds& bounds);

// `bounds` padded the way Open MPI pads: after every block placed (padding_after_every_block)
// and then once more, unless markers fix the bounds.
TypeBounds with_epsilon_after_every_block(const TypeBounds& bounds);

// The bounds gddt uses for a derived type whose standard bounds (without epsilon) are
// `standard` where the library reports `library_lb`/`library_extent`: the library's where
// they differ from the standard's by padding alone (same lb, an extent at most max_padding
// larger), as the epsilon is the implementation's choice; `standard` otherwise, with
// *replaced and no library_agrees (the caller then adds the epsilon where the library would).
TypeBounds reconcile(const TypeBounds& standard, std::int64_t library_lb,
                     std::int64_t library_extent, bool* replaced);

}  // namespace gddt::type
