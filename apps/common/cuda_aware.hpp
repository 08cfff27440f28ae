// Whether the hand-written versions hand the MPI library device pointers, decided as users
// decide it: GDDT_MPI_CUDA_AWARE=yes|no where set (apps/run.sh sets it so that the baseline and
// gddt agree), else the library's own MPIX_Query_cuda_support where it has one.
#pragma once

namespace apps {

bool library_takes_device_memory();

}  // namespace apps
