#include "mpi/cuda_awareness.hpp"

#include <utility>

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

namespace gddt::mpi {
namespace {

void tell(std::string* how, std::string text) {
  if (how != nullptr) *how = std::move(text);
}

}  // namespace

bool cuda_aware(std::string* how) {
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && defined(MPIX_CUDA_AWARE_SUPPORT)
  // The macro says how Open MPI was built; the call says whether this run can use it.
  if (!MPIX_CUDA_AWARE_SUPPORT) {
    tell(how, "no: Open MPI built without CUDA support (MPIX_CUDA_AWARE_SUPPORT = 0)");
    return false;
  }
  const bool aware = MPIX_Query_cuda_support() != 0;
  tell(how, std::string(aware ? "yes" : "no") + ": Open MPI MPIX_Query_cuda_support() = " + (aware ? "1" : "0"));
  return aware;
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int supported = 0;
  if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported) != MPI_SUCCESS) {
    tell(how, "unknown: MPIX_GPU_query_support failed");
    return false;
  }
  tell(how, std::string(supported ? "yes" : "no") + ": MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) = " +
                (supported ? "1" : "0"));
  return supported != 0;
#else
  tell(how, "unknown: this MPI library offers no CUDA-awareness query");
  return false;
#endif
}

}  // namespace gddt::mpi
