#include "device.hpp"

#include <cstdio>
#include <cstring>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

namespace apps {
namespace {

bool gpu = false;

#ifdef __CUDACC__
void check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return;
  std::fprintf(stderr, "apps: %s: %s\n", what, cudaGetErrorString(error));
  MPI_Abort(MPI_COMM_WORLD, 1);
}
#endif

}  // namespace

Place choose_place(const std::string& wanted, MPI_Comm comm) {
  MPI_Comm node;
  int local_rank = 0;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  Place place;
  place.why_host = wanted == "host" ? "asked for" : gddt_test::prepare_memory_kind(MemoryKind::kDevice, local_rank);
  place.gpu = place.why_host.empty();
  if (place.gpu) place.arrays = MemoryKind::kDevice, place.staging = MemoryKind::kPinned;
  gpu = place.gpu;
  return place;
}

bool on_gpu() { return gpu; }

void copy(void* to, const void* from, std::size_t bytes) {
#ifdef __CUDACC__
  if (gpu) return check(cudaMemcpy(to, from, bytes, cudaMemcpyDefault), "cudaMemcpy");
#endif
  std::memcpy(to, from, bytes);
}

void copy_2d(void* to, std::size_t to_pitch, const void* from, std::size_t from_pitch, std::size_t width,
             std::size_t height) {
#ifdef __CUDACC__
  if (gpu) return check(cudaMemcpy2D(to, to_pitch, from, from_pitch, width, height, cudaMemcpyDefault), "cudaMemcpy2D");
#endif
  for (std::size_t row = 0; row < height; ++row)
    std::memcpy(static_cast<char*>(to) + row * to_pitch, static_cast<const char*>(from) + row * from_pitch, width);
}

void synchronize() {
#ifdef __CUDACC__
  if (gpu) check(cudaDeviceSynchronize(), "a kernel");
#endif
}

}  // namespace apps
