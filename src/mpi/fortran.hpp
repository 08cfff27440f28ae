// What gddt's Fortran entry points share (they are generated from entry_points.txt by
// entry_points.py, which says which Fortran layers need them): converting Fortran arguments to
// C and back, and calling the library's own Fortran functions.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "mpi/call_buffers.hpp"

#define GDDT_FORTRAN_ENTRY __attribute__((visibility("default")))
#define GDDT_FORTRAN_ALIAS(target) __attribute__((visibility("default"), alias(target)))

namespace gddt::mpi::fortran {

// The kind of Fortran layer gddt defines functions of in this build (kNone where the library's
// calls MPI_* only, or none was found), and how many.
enum class Layer { kNone, kOpenMpi, kMpichF08 };
extern const Layer kLayer;
extern const int kEntryPoints;

// A choice buffer as C sees it: the library's Fortran MPI_BOTTOM and MPI_IN_PLACE become C's.
void* buffer(char* fortran);
// The C datatypes of a Fortran array of one per peer (call_buffers::datatypes_of) of `comm`.
std::vector<MPI_Datatype> datatypes(const MPI_Fint* fortran, MPI_Comm comm, call_buffers::Per per);
// A Fortran CHARACTER argument without its trailing blanks.
std::string text(const char* fortran, std::size_t length);
// A Fortran count as a size for C arrays (0 for negative counts, which the library reports).
std::size_t length(MPI_Fint count);
inline MPI_Fint integer_out(int value) { return static_cast<MPI_Fint>(value); }
// C indices count from 0, Fortran's from 1; MPI_UNDEFINED stays.
inline MPI_Fint index_out(int value) { return static_cast<MPI_Fint>(value == MPI_UNDEFINED ? value : value + 1); }
void indices_out(const int* indices, int count, MPI_Fint* fortran);

// C statuses for a Fortran INTEGER status (or array of them), or the library's ignore
// sentinels; out() converts what the call wrote back into the Fortran array.
class Statuses {
 public:
  explicit Statuses(MPI_Fint* fortran);         // one status
  Statuses(MPI_Fint* fortran, MPI_Fint count);  // an array of them
  MPI_Status* data() { return ignored_ ? (array_ ? MPI_STATUSES_IGNORE : MPI_STATUS_IGNORE) : c_.data(); }
  void out() const;

 private:
  MPI_Fint* fortran_;
  bool array_;
  bool ignored_;
  std::vector<MPI_Status> c_;
};

// C handles for an array of Fortran handles; out() writes them back (completed requests
// become MPI_REQUEST_NULL's Fortran value).
template <typename Handle>
class Handles {
 public:
  template <typename F2c>
  Handles(MPI_Fint* fortran, MPI_Fint count, F2c f2c) : fortran_(fortran), c_(length(count)) {
    for (std::size_t i = 0; i < c_.size(); ++i) c_[i] = f2c(fortran[i]);
  }
  Handle* data() { return c_.empty() ? nullptr : c_.data(); }
  template <typename C2f>
  void out(C2f c2f) const {
    for (std::size_t i = 0; i < c_.size(); ++i) fortran_[i] = c2f(c_[i]);
  }

 private:
  MPI_Fint* fortran_;
  std::vector<Handle> c_;
};

// The library's own Fortran function `name` (the next definition after gddt's); aborts the
// job with a message where the library lacks it.
void* library_function(const char* name);
template <typename Function>
Function library(const char* name) {
  return reinterpret_cast<Function>(library_function(name));
}

}  // namespace gddt::mpi::fortran
