#include "fuzz_reference.hpp"

#include <mpi.h>

#include <algorithm>

namespace gddt_test::fuzz {

MpiLibrary detect_mpi_library(std::string* version) {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  *version = std::string(text, static_cast<size_t>(length));
  version->erase(std::min(version->find('\n'), version->size()));
  if (version->find("Open MPI") != std::string::npos) return MpiLibrary::kOpenMpi;
  if (version->find("MPICH") != std::string::npos) return MpiLibrary::kMpich;
  return MpiLibrary::kOther;
}

const char* reference_unusable(MpiLibrary library, const TypeNode& node) {
  if (library == MpiLibrary::kOpenMpi && has_darray_below_struct(node))
    return "Open MPI: a darray below a struct gets a garbage extent and crashes MPI_Pack";
  return nullptr;
}

PaddingRule padding_rule(MpiLibrary library) {
  return library == MpiLibrary::kOpenMpi ? PaddingRule::kAfterEveryAdd : PaddingRule::kStructOnly;
}

const char* reference_unpack_unusable(MpiLibrary library, const Typemap& map) {
  if (library == MpiLibrary::kMpich && map.size == 0)
    return "MPICH: MPI_Unpack of a zero-size type dies of SIGFPE";
  return nullptr;
}

const char* reference_fault_explanation(MpiLibrary library, const TypeNode& node) {
  if (library == MpiLibrary::kMpich && contains_named_type(node, MPI_LONG_DOUBLE))
    return "MPICH copies MPI_LONG_DOUBLE through x87 registers, so its 6 padding bytes come out undefined";
  return nullptr;
}

}  // namespace gddt_test::fuzz
