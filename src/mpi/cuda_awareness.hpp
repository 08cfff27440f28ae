// Whether the MPI library underneath accepts CUDA device buffers itself, as far as the
// library will say: Open MPI's MPIX_Query_cuda_support or MPICH's MPIX_GPU_query_support.
#pragma once

#include <string>

namespace gddt::mpi {

// True only when the MPI library reports CUDA support. `how` (may be null) receives the
// evidence, e.g. "Open MPI MPIX_Query_cuda_support() = 1", or "unknown: ..." when the
// library offers no query. MPICH answers reliably only after MPI_Init.
bool cuda_aware(std::string* how);

}  // namespace gddt::mpi
