#include "fuzz_reference.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>

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

PaddingRule padding_rule(MpiLibrary library) {
  return library == MpiLibrary::kOpenMpi ? PaddingRule::kAfterEveryAdd : PaddingRule::kStructOnly;
}

namespace {

// An (h)vector of several blocks whose stride is -1 byte.
bool has_vector_of_stride_minus_one_byte(const TypeNode& node, PaddingRule padding) {
  const bool vector = node.constructor == Constructor::kVector;
  if ((vector || node.constructor == Constructor::kHvector) && node.count > 1 && node.blocklength > 0) {
    Typemap child;
    std::int64_t stride_bytes = node.stride;
    if (vector && expand_typemap(node.children[0], padding, SIZE_MAX, &child))
      stride_bytes = node.stride * child.extent();
    if (stride_bytes == -1) return true;
  }
  return std::any_of(node.children.begin(), node.children.end(), [&](const TypeNode& child) {
    return has_vector_of_stride_minus_one_byte(child, padding);
  });
}

}  // namespace

const char* reference_unusable(MpiLibrary library, const TypeNode& node) {
  if (const char* why = library_bounds_unusable(library, node)) return why;
  if (library == MpiLibrary::kOpenMpi &&
      has_vector_of_stride_minus_one_byte(node, padding_rule(library)))
    return "Open MPI: an (h)vector with a stride of -1 byte is packed as if contiguous, reading "
           "outside the type";
  return nullptr;
}

const char* library_bounds_unusable(MpiLibrary library, const TypeNode& node) {
  if (library == MpiLibrary::kOpenMpi && has_darray_below_struct(node))
    return "Open MPI: a darray below a struct gets a garbage extent and crashes MPI_Pack";
  return nullptr;
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
