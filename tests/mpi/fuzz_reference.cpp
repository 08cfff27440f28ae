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
  if (library == MpiLibrary::kOpenMpi &&
      has_vector_of_stride_minus_one_byte(node, padding_rule(library)))
    return "Open MPI: an (h)vector with a stride of -1 byte is packed as if contiguous, reading "
           "outside the type";
  return nullptr;
}

const char* reference_unpack_unusable(MpiLibrary library, const Typemap& map) {
  if (library == MpiLibrary::kMpich && map.size == 0)
    return "MPICH: MPI_Unpack of a zero-size type dies of SIGFPE";
  return nullptr;
}

namespace {

// Whether the library moves only the 10 value bytes of an x87 long double inside a derived
// datatype (MPICH 4.0 and Open MPI 5.0 do; Open MPI 4.1 moves all 16): asked once, by packing
// two long doubles of a vector into a poisoned buffer.
bool library_moves_long_double_values_only() {
  static const bool values_only = [] {
    if (sizeof(long double) != 16) return false;
    MPI_Datatype vector = MPI_DATATYPE_NULL;
    PMPI_Type_vector(2, 1, 2, MPI_LONG_DOUBLE, &vector);
    PMPI_Type_commit(&vector);
    unsigned char typed[64], packed[32];
    for (int i = 0; i < 64; ++i) typed[i] = static_cast<unsigned char>(i + 1);
    std::fill(packed, packed + 32, 0);
    int position = 0;
    PMPI_Pack(typed, 1, vector, packed, 32, &position, MPI_COMM_SELF);
    PMPI_Type_free(&vector);
    return std::all_of(packed + 10, packed + 16, [](unsigned char b) { return b == 0; });
  }();
  return values_only;
}

}  // namespace

const char* reference_fault_explanation(MpiLibrary, const TypeNode& node) {
  const bool holds_long_double = contains_named_type(node, MPI_LONG_DOUBLE) ||
                                 contains_named_type(node, MPI_LONG_DOUBLE_INT) ||
                                 contains_named_type(node, MPI_C_LONG_DOUBLE_COMPLEX);
  if (holds_long_double && library_moves_long_double_values_only())
    return "the library copies long doubles through x87 registers inside derived datatypes, so their 6 padding "
           "bytes come out undefined";
  return nullptr;
}

}  // namespace gddt_test::fuzz
