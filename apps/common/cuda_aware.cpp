#include "cuda_aware.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace apps {

bool library_takes_device_memory() {
  const char* forced = std::getenv("GDDT_MPI_CUDA_AWARE");
  if (forced != nullptr && std::string(forced) != "auto") return std::string(forced) == "yes";
  // Looked up at run time: Open MPI declares it in mpi-ext.h only, and not every MPI has it.
  const auto query = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support"));
  return query != nullptr && query() == 1;
}

}  // namespace apps
