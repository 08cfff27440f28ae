#include "fuzz_reference.hpp"

#include <mpi.h>

#include <algorithm>
#include <cfloat>
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

// Whether the library packs MPI_C_DOUBLE_COMPLEX inside a derived datatype otherwise than
// its typemap says, asked once with a type Open MPI 5.0.11 gets wrong (its second element
// comes out with other bytes; Open MPI 4.1 and MPICH 4.0 pack the typemap).
bool library_mispacks_double_complex() {
  static const bool mispacks = [] {
    constexpr int kElement = 16;
    const MPI_Aint displacements[] = {-16, 40, 16};
    MPI_Datatype probe = MPI_DATATYPE_NULL;
    if (PMPI_Type_create_hindexed_block(3, 1, displacements, MPI_C_DOUBLE_COMPLEX, &probe) != MPI_SUCCESS)
      return false;
    PMPI_Type_commit(&probe);
    unsigned char typed[80];
    for (int i = 0; i < 80; ++i) typed[i] = static_cast<unsigned char>(i + 1);
    unsigned char packed[3 * kElement] = {};
    int position = 0;
    PMPI_Pack(typed + 16, 1, probe, packed, sizeof packed, &position, MPI_COMM_SELF);
    PMPI_Type_free(&probe);
    for (int block = 0; block < 3; ++block)
      if (!std::equal(packed + block * kElement, packed + (block + 1) * kElement, typed + 16 + displacements[block]))
        return true;
    return false;
  }();
  return mispacks;
}

}  // namespace

const char* reference_unusable(MpiLibrary library, const TypeNode& node) {
  if (library == MpiLibrary::kOpenMpi &&
      has_vector_of_stride_minus_one_byte(node, padding_rule(library)))
    return "Open MPI: an (h)vector with a stride of -1 byte is packed as if contiguous, reading "
           "outside the type";
  if (contains_named_type(node, MPI_C_DOUBLE_COMPLEX) && library_mispacks_double_complex())
    return "the library (Open MPI 5.0.11) packs MPI_C_DOUBLE_COMPLEX inside some derived datatypes otherwise "
           "than their typemap";
  return nullptr;
}

const char* reference_unpack_unusable(MpiLibrary library, const Typemap& map) {
  if (library == MpiLibrary::kMpich && map.size == 0)
    return "MPICH: MPI_Unpack of a zero-size type dies of SIGFPE";
  return nullptr;
}

const char* reference_fault_explanation(MpiLibrary, const TypeNode& node) {
  // An x87 long double holds 10 value bytes in 16: MPICH 4.0 and Open MPI 5.0 copy the value
  // alone inside derived datatypes, so the other 6 bytes come out as they were, undefined.
  const bool holds_long_double = contains_named_type(node, MPI_LONG_DOUBLE) ||
                                 contains_named_type(node, MPI_LONG_DOUBLE_INT) ||
                                 contains_named_type(node, MPI_C_LONG_DOUBLE_COMPLEX);
  if (holds_long_double && LDBL_MANT_DIG == 64)
    return "long doubles are copied through x87 registers, so their 6 padding bytes come out undefined";
  return nullptr;
}

}  // namespace gddt_test::fuzz
