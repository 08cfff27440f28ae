// The MPI library's own pack engine (PMPI_Pack/PMPI_Unpack) is the fuzzer's reference, but
// the libraries have bugs of their own. Each known one is a predicate here: where it holds,
// the fuzzer compares gddt with its own expectation instead of calling the reference.
#pragma once

#include <string>

#include "fuzz_type_tree.hpp"
#include "fuzz_typemap.hpp"

namespace gddt_test::fuzz {

enum class MpiLibrary { kOpenMpi, kMpich, kOther };

// From MPI_Get_library_version; *version gets its first line.
MpiLibrary detect_mpi_library(std::string* version);

// Why PMPI_Pack and PMPI_Unpack must not be called for this type, or nullptr when they may.
const char* reference_unusable(MpiLibrary library, const TypeNode& node);

// How the library pads extents (see PaddingRule).
PaddingRule padding_rule(MpiLibrary library);

// Why PMPI_Unpack must not be called for this type, or nullptr when it may.
const char* reference_unpack_unusable(MpiLibrary library, const Typemap& map);

// A known, harmless reason why the reference's bytes may differ from the typemap for this
// type (reported with the reference faults it explains), or nullptr.
const char* reference_fault_explanation(MpiLibrary library, const TypeNode& node);

}  // namespace gddt_test::fuzz
