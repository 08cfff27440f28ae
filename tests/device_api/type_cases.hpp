// The datatypes the device API's tests move: a vector, the x face of a 3-D grid of doubles (one
// word per row), an indexed type and a resized struct, each committed. The tests make their
// device handles (gddt_device_type_create) and free both.
#pragma once

#include <mpi.h>

#include <vector>

#include "gddt/gddt_device.h"

struct TypeCase {
  const char *name;
  MPI_Datatype type;
  gddt_device_type_t device;
};

inline std::vector<TypeCase> committed_type_cases() {
  std::vector<TypeCase> types;
  MPI_Datatype t;
  MPI_Type_vector(8, 3, 5, MPI_INT, &t);
  types.push_back({"vector", t, {}});
  const int sizes[3] = {6, 7, 8}, subsizes[3] = {4, 5, 1}, starts[3] = {1, 1, 6};
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  types.push_back({"subarray", t, {}});
  const int lengths[3] = {1, 3, 2}, displs[3] = {0, 4, 9};
  MPI_Type_indexed(3, lengths, displs, MPI_SHORT, &t);
  types.push_back({"indexed", t, {}});
  const int blocks[3] = {1, 2, 3};
  const MPI_Aint offsets[3] = {0, 8, 28};
  const MPI_Datatype members[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
  MPI_Datatype s;
  MPI_Type_create_struct(3, blocks, offsets, members, &s);
  MPI_Type_create_resized(s, 0, 48, &t);
  MPI_Type_free(&s);
  types.push_back({"struct", t, {}});
  for (TypeCase &c : types) MPI_Type_commit(&c.type);
  return types;
}
