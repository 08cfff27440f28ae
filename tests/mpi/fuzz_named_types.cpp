#include "fuzz_named_types.hpp"

#include <complex>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace gddt_test::fuzz {
namespace {

// The pair types of MPI_MINLOC/MPI_MAXLOC are C structs, holes included.
template <typename Value>
struct ValueInt {
  Value value;
  int index;
};

template <typename Scalar>
NamedType scalar(MPI_Datatype handle, const char* name) {
  return {handle, name, alignof(Scalar), {{0, sizeof(Scalar)}}};
}

template <typename Value>
NamedType value_int(MPI_Datatype handle, const char* name) {
  using Pair = ValueInt<Value>;
  return {handle,
          name,
          alignof(Pair),
          {{offsetof(Pair, value), sizeof(Value)}, {offsetof(Pair, index), sizeof(int)}}};
}

}  // namespace

const std::vector<NamedType>& named_types() {
  static const std::vector<NamedType> table = {
      scalar<char>(MPI_CHAR, "MPI_CHAR"),
      scalar<unsigned char>(MPI_BYTE, "MPI_BYTE"),
      scalar<short>(MPI_SHORT, "MPI_SHORT"),
      scalar<int>(MPI_INT, "MPI_INT"),
      scalar<float>(MPI_FLOAT, "MPI_FLOAT"),
      scalar<double>(MPI_DOUBLE, "MPI_DOUBLE"),
      scalar<long double>(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"),
      scalar<std::uint64_t>(MPI_UINT64_T, "MPI_UINT64_T"),
      scalar<std::complex<double>>(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"),
      value_int<float>(MPI_FLOAT_INT, "MPI_FLOAT_INT"),
      value_int<double>(MPI_DOUBLE_INT, "MPI_DOUBLE_INT"),
      value_int<int>(MPI_2INT, "MPI_2INT"),
      value_int<short>(MPI_SHORT_INT, "MPI_SHORT_INT"),
      value_int<long>(MPI_LONG_INT, "MPI_LONG_INT"),
  };
  return table;
}

const NamedType& named_type(MPI_Datatype handle) {
  for (const NamedType& entry : named_types())
    if (entry.handle == handle) return entry;
  std::fprintf(stderr, "fuzz: internal error: named type not in the table\n");
  std::abort();
}

}  // namespace gddt_test::fuzz
