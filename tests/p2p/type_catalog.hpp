// The datatypes the suite sends. Each comes with its typemap written out here, independently of
// MPI, so what a receive buffer must hold never depends on the MPI library (or gddt) packing
// correctly.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gddt_test::p2p {

struct ByteRun {
  std::int64_t offset;  // from the buffer address given to MPI
  std::int64_t length;
};

// Every type's signature is a whole number of repetitions of a unit, e.g. (int) or
// (char, double, int, short). Two types with the same unit match when their byte counts do.
struct SignatureUnit {
  std::string name;
  std::int64_t bytes;
  std::int64_t basic_elements;
};

struct TypeCase {
  std::string name;
  MPI_Datatype type = MPI_DATATYPE_NULL;  // committed; owned by the catalog
  std::vector<ByteRun> runs;              // one element, in typemap order
  std::int64_t lb = 0;
  std::int64_t extent = 0;
  std::int64_t size = 0;  // data bytes of one element
  SignatureUnit unit;
  int max_count = 0;  // most elements before they overlap (a receive must not); 0: no limit

  std::int64_t units() const { return size / unit.bytes; }
};

// Builds and commits every type once; frees them on destruction (before MPI_Finalize).
class TypeCatalog {
 public:
  TypeCatalog();
  ~TypeCatalog();
  TypeCatalog(const TypeCatalog&) = delete;
  TypeCatalog& operator=(const TypeCatalog&) = delete;

  const std::vector<TypeCase>& all() const { return types_; }
  const TypeCase& named(const std::string& name) const;
  // The dense type of `unit`: same signature, no gaps (MPI_INT for the unit (int)).
  const TypeCase& contiguous_of(const SignatureUnit& unit) const;

 private:
  std::vector<TypeCase> types_;
};

}  // namespace gddt_test::p2p
