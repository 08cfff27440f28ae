#include "protocol/cuda_awareness.hpp"

#include <dlfcn.h>

#include <utility>

#include <mpi.h>

#include "core/config.hpp"
#include "core/log.hpp"

namespace gddt::protocol {
namespace {

void tell(std::string* how, std::string text) {
  if (how != nullptr) *how = std::move(text);
}

// The libraries' own queries are looked up at run time: the library gddt runs with need not
// be the one whose headers it was built against.
bool open_mpi_says_yes(std::string* how) {
  using Query = int (*)();
  auto query = reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support"));
  if (query == nullptr || query() == 0) return false;
  tell(how, "yes: Open MPI MPIX_Query_cuda_support() = 1");
  return true;
}

bool mpich_says_yes(std::string* how) {
#if defined(MPIX_GPU_SUPPORT_CUDA)
  using Query = int (*)(int, int*);
  auto query = reinterpret_cast<Query>(dlsym(RTLD_DEFAULT, "MPIX_GPU_query_support"));
  int supported = 0;
  if (query == nullptr || query(MPIX_GPU_SUPPORT_CUDA, &supported) != MPI_SUCCESS || !supported) return false;
  tell(how, "yes: MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) = 1");
  return true;
#else
  (void)how;
  return false;
#endif
}

// Open MPI 5 over UCX answers 0 to its own query when its CUDA accelerator component is
// absent, yet UCX moves contiguous device buffers itself once its CUDA transport is loaded
// (which happens in MPI_Init).
bool ucx_cuda_transport_loaded(std::string* how) {
  void* transport = dlopen("libuct_cuda.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (transport == nullptr) return false;
  dlclose(transport);
  tell(how, "yes: UCX's CUDA transport (libuct_cuda) is loaded, so contiguous device buffers pass through UCX");
  return true;
}

}  // namespace

bool cuda_aware(std::string* how) {
  if (open_mpi_says_yes(how) || mpich_says_yes(how) || ucx_cuda_transport_loaded(how)) return true;
  tell(how, "no: neither the library's query nor a loaded UCX CUDA transport says so");
  return false;
}

bool library_cuda_aware() {
  static const bool aware = [] {
    if (config::mpi_cuda_aware() != config::MpiCudaAware::kAuto)
      return config::mpi_cuda_aware() == config::MpiCudaAware::kYes;
    std::string how;
    const bool answer = cuda_aware(&how);
    GDDT_LOG(kInfo, "MPI library CUDA-aware: %s (%s)", answer ? "yes" : "no", how.c_str());
    return answer;
  }();
  return aware;
}

}  // namespace gddt::protocol
