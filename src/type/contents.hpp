// Reading a datatype's constructor through MPI_Type_get_envelope/get_contents, for the
// decoder and for packed twins. Always through the PMPI_ names, since gddt interposes the
// MPI_ ones.
#pragma once

#include <mpi.h>

#include <vector>

#include "core/status.hpp"

namespace gddt::type {

inline Status mpi_status(int code) { return code == MPI_SUCCESS ? GDDT_OK : GDDT_ERR_MPI; }

// The combiner of `datatype`, and how many integers, addresses and datatypes describe it.
inline int combiner_of(MPI_Datatype datatype, int* ni, int* na, int* nd) {
  int combiner = MPI_UNDEFINED;
  PMPI_Type_get_envelope(datatype, ni, na, nd, &combiner);
  return combiner;
}

inline int combiner_of(MPI_Datatype datatype) {
  int ni = 0, na = 0, nd = 0;
  return combiner_of(datatype, &ni, &na, &nd);
}

// The arguments of a derived datatype's constructor. The datatype handles get_contents
// returns are new references; the derived ones are released here (named ones must not be).
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

  Status read(MPI_Datatype datatype, int ni, int na, int nd) {
    ints.resize(static_cast<std::size_t>(ni));
    addresses.resize(static_cast<std::size_t>(na));
    types.assign(static_cast<std::size_t>(nd), MPI_DATATYPE_NULL);
    return mpi_status(PMPI_Type_get_contents(datatype, ni, na, nd, ints.data(), addresses.data(), types.data()));
  }

  std::vector<int> ints;
  std::vector<MPI_Aint> addresses;
  std::vector<MPI_Datatype> types;
};

}  // namespace gddt::type
