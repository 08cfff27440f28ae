// Reading a datatype's constructor through MPI_Type_get_envelope/get_contents, for the
// decoder. Always through the PMPI_ names, since gddt interposes the
// MPI_ ones. An MPI-4 library refuses the int queries for a type built by a large-count
// constructor (MPICH 4 aborts the program), so where the library has the _c queries they are
// asked, and large-count arguments are turned into the int constructor's arguments.
#pragma once

#include <mpi.h>

#include <vector>

#include "core/status.hpp"

namespace gddt::type {

inline Status mpi_status(int code) { return code == MPI_SUCCESS ? GDDT_OK : GDDT_ERR_MPI; }

// What MPI_Type_get_envelope(_c) says of a datatype: its combiner, and how many arguments of
// each kind get_contents(_c) returns.
struct Envelope {
  int combiner = MPI_UNDEFINED;
  MPI_Count integers = 0;
  MPI_Count addresses = 0;
  MPI_Count large_counts = 0;  // only from a large-count constructor
  MPI_Count datatypes = 0;
};

Envelope envelope_of(MPI_Datatype datatype);

inline int combiner_of(MPI_Datatype datatype) { return envelope_of(datatype).combiner; }

// The arguments of a derived datatype's constructor, as the int constructor takes them. The
// datatype handles get_contents returns are new references; the derived ones are released
// here (named ones must not be).
class Contents {
 public:
  Contents() = default;
  Contents(const Contents&) = delete;
  Contents& operator=(const Contents&) = delete;
  ~Contents() {
    for (MPI_Datatype& type : types) {
      if (type != MPI_DATATYPE_NULL && combiner_of(type) != MPI_COMBINER_NAMED) PMPI_Type_free(&type);
    }
  }

  // GDDT_ERR_UNSUPPORTED where a large count does not fit the int constructor's argument.
  Status read(MPI_Datatype datatype, const Envelope& envelope);

  std::vector<int> ints;
  std::vector<MPI_Aint> addresses;
  std::vector<MPI_Datatype> types;
};

}  // namespace gddt::type
