// Whether the MPI library underneath accepts CUDA device buffers itself: Open MPI's
// MPIX_Query_cuda_support, MPICH's MPIX_GPU_query_support, or a loaded UCX CUDA transport.
#pragma once

#include <string>

namespace gddt::protocol {

// True when one of those says yes. `how` (may be null) receives the evidence. The answers
// are reliable only after MPI_Init (UCX loads its transports there).
bool cuda_aware(std::string* how);

// The answer gddt acts on, settled at the first call: GDDT_MPI_CUDA_AWARE, or cuda_aware()
// where that is "auto" (logged once).
bool library_cuda_aware();

}  // namespace gddt::protocol
