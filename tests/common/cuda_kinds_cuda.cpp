// The CUDA kinds through the CUDA runtime.
#include <cuda_runtime_api.h>

#include <stdexcept>

#include "cuda_kinds.hpp"

namespace gddt_test::cuda_kinds {
namespace {

constexpr int kNoDeviceSelected = -1;
// The GPU prepare() selected, set again before each allocation of device or managed memory: the
// current GPU is per thread, and a test may allocate on threads of its own.
int selected_device = kNoDeviceSelected;

void throw_on_error(cudaError_t error, const std::string& what) {
  if (error != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(error));
}

void select_device() {
  if (selected_device != kNoDeviceSelected) {
    throw_on_error(cudaSetDevice(selected_device), "cudaSetDevice(" + std::to_string(selected_device) + ")");
  }
}

}  // namespace

std::string prepare(MemoryKind kind, int local_rank) {
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    return std::string(memory_kind_name(kind)) +
           " memory needs a GPU: " + (error != cudaSuccess ? cudaGetErrorString(error) : "none found");
  }
  const int device = local_rank % devices;
  const cudaError_t selected = cudaSetDevice(device);
  if (selected != cudaSuccess) {
    return "cudaSetDevice(" + std::to_string(device) + "): " + cudaGetErrorString(selected);
  }
  selected_device = device;
  return "";
}

void* allocate(MemoryKind kind, std::size_t bytes) {
  const std::string size = " of " + std::to_string(bytes) + " bytes";
  void* data = nullptr;
  if (kind == MemoryKind::kPinned) {
    throw_on_error(cudaMallocHost(&data, bytes), "cudaMallocHost" + size);
    return data;
  }
  select_device();
  if (kind == MemoryKind::kManaged) {
    throw_on_error(cudaMallocManaged(&data, bytes), "cudaMallocManaged" + size);
  } else {
    throw_on_error(cudaMalloc(&data, bytes), "cudaMalloc" + size);
  }
  return data;
}

// Failures go unreported: the errors that make a free fail are sticky and surface at the next
// checked call, and a free may run while the exception of such an error unwinds.
void release(MemoryKind kind, void* data) noexcept {
  if (kind == MemoryKind::kPinned) {
    cudaFreeHost(data);
  } else {
    cudaFree(data);
  }
}

void copy(void* to, const void* from, std::size_t bytes) {
  throw_on_error(cudaMemcpy(to, from, bytes, cudaMemcpyDefault), "cudaMemcpy of " + std::to_string(bytes) + " bytes");
}

void fill(void* data, unsigned char value, std::size_t bytes) {
  throw_on_error(cudaMemset(data, value, bytes), "cudaMemset of " + std::to_string(bytes) + " bytes");
  throw_on_error(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize after cudaMemset");
}

}  // namespace gddt_test::cuda_kinds
