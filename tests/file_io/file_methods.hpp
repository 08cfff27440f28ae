// Every way MPI reads and writes a file, as one table: explicit offsets, individual and shared file
// pointers, collective, ordered, nonblocking and split collective calls, and their large-count _c
// forms where the library has them. Each runs through gddt (MPI_*) or the library alone (PMPI_*).
#pragma once

#include <mpi.h>

#include <functional>
#include <vector>

namespace gddt_test::file_io {

// One call's arguments: `count` elements of `datatype` at `buffer`, at this rank's place in the
// file view (`offset`, in etypes, for explicit offsets and individual file pointers, which are
// sought there first), its status out.
struct Io {
  MPI_File file;
  MPI_Offset offset;
  void* buffer;
  int count;
  MPI_Datatype datatype;
  MPI_Status* status;
};

// How a method finds its place in the file.
enum class Place {
  kExplicit,    // the offset argument
  kIndividual,  // the individual file pointer, sought to the offset first
  kShared,      // the shared file pointer: the ranks call one after the other, in rank order
  kOrdered,     // the shared file pointer in rank order, collectively
};

struct Method {
  const char* name;
  bool reads;
  Place place;
  // The call (its completion included), through the library alone where `reference`.
  std::function<int(bool reference, const Io& io)> call;

  // By its name: every process of the file takes part (*_all*, *_ordered*); MPI_File_i*.
  bool collective() const;
  bool nonblocking() const;
};

// Every method this library has.
std::vector<Method> file_methods();

}  // namespace gddt_test::file_io
