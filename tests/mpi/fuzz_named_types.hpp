// The named datatypes the fuzzer uses as leaves, with the byte layout of each taken from the
// C type it describes (offsetof/sizeof), not from MPI.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace gddt_test::fuzz {

struct ByteRun {
  std::int64_t displacement;
  std::int64_t length;
};

struct NamedType {
  MPI_Datatype handle;
  const char* name;
  std::int64_t alignment;        // alignof the C type: what pads a struct's extent
  std::vector<ByteRun> layout;   // the bytes that hold data, in typemap order
};

const std::vector<NamedType>& named_types();

// The entry of `handle`; aborts on a handle not in the table (a fuzzer bug).
const NamedType& named_type(MPI_Datatype handle);

}  // namespace gddt_test::fuzz
