// What the tests of test_type_decode share: datatypes committed through the library and freed at
// scope exit, the constructors as expressions, and the checks of a decoded type against the
// library's own MPI_Pack.
#pragma once

#include <mpi.h>

#include <vector>

#include "type/datatype.hpp"

namespace gddt::type::testing {

// A derived datatype, committed through the library, freed at scope exit.
class Type {
 public:
  explicit Type(MPI_Datatype handle) : handle_(handle) { PMPI_Type_commit(&handle_); }
  ~Type() { PMPI_Type_free(&handle_); }
  Type(const Type&) = delete;
  Type& operator=(const Type&) = delete;
  operator MPI_Datatype() const { return handle_; }

 private:
  MPI_Datatype handle_;
};

inline MPI_Datatype contiguous(int count, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_contiguous(count, old, &t);
  return t;
}
inline MPI_Datatype vector(int count, int length, int stride, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_vector(count, length, stride, old, &t);
  return t;
}
inline MPI_Datatype hvector(int count, int length, MPI_Aint stride, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_hvector(count, length, stride, old, &t);
  return t;
}
inline MPI_Datatype indexed(std::vector<int> lengths, std::vector<int> displacements, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_indexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(), old, &t);
  return t;
}
inline MPI_Datatype hindexed(std::vector<int> lengths, std::vector<MPI_Aint> displacements, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(),
                           old, &t);
  return t;
}
inline MPI_Datatype indexed_block(int length, std::vector<int> displacements, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_indexed_block(static_cast<int>(displacements.size()), length,
                                displacements.data(), old, &t);
  return t;
}
inline MPI_Datatype hindexed_block(int length, std::vector<MPI_Aint> displacements, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_hindexed_block(static_cast<int>(displacements.size()), length,
                                 displacements.data(), old, &t);
  return t;
}
inline MPI_Datatype structure(std::vector<int> lengths, std::vector<MPI_Aint> displacements,
                              std::vector<MPI_Datatype> types) {
  MPI_Datatype t;
  MPI_Type_create_struct(static_cast<int>(lengths.size()), lengths.data(), displacements.data(),
                         types.data(), &t);
  return t;
}
inline MPI_Datatype subarray(std::vector<int> sizes, std::vector<int> subsizes, std::vector<int> starts, int order,
                             MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_subarray(static_cast<int>(sizes.size()), sizes.data(), subsizes.data(),
                           starts.data(), order, old, &t);
  return t;
}
inline MPI_Datatype darray(int size, int rank, std::vector<int> gsizes, std::vector<int> distribs,
                           std::vector<int> dargs, std::vector<int> psizes, int order, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_create_darray(size, rank, static_cast<int>(gsizes.size()), gsizes.data(),
                         distribs.data(), dargs.data(), psizes.data(), order, old, &t);
  return t;
}
inline MPI_Datatype resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent) {
  MPI_Datatype t;
  MPI_Type_create_resized(old, lb, extent, &t);
  return t;
}
inline MPI_Datatype dup(MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_dup(old, &t);
  return t;
}

// Decodes `datatype` and checks it against the library: size, bounds, and the packed bytes
// of `count` elements, whole and in random windows.
Layout expect_matches_mpi(MPI_Datatype datatype, int count = 3);

// For a type whose one element the library packs wrongly (a library fault gddt does not copy):
// gddt's bounds must still be the library's, and `count` elements must pack like `count`
// elements of `equivalent`, the same typemap built so that the library packs it right, with
// the same bounds.
void expect_packs_like(MPI_Datatype datatype, MPI_Datatype equivalent, int count = 3);

}  // namespace gddt::type::testing
