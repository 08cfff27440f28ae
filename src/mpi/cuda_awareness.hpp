// Whether the MPI library underneath accepts CUDA device buffers itself: Open MPI's
// MPIX_Query_cuda_support, MPICH's MPIX_GPU_query_support, or a loaded UCX CUDA transport.
#pragma once

#include <string>

namespace gddt::mpi {

// True when one of those says yes. `how` (may be null) receives the evidence. The answers
// are reliable only after MPI_Init (UCX loads its transports there).
bool cuda_aware(std::string* how);

}  // namespace gddt::mpi
