// What the files of the CUDA build of gpu.hpp share (gpu_cuda.cpp, gpu_cuda_ipc.cpp,
// gpu_cuda_memory.cpp): the runtime's
// errors as statuses, the device count, and the driver functions fetched through the runtime.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "core/log.hpp"
#include "core/status.hpp"

namespace gddt::gpu::driver {

Status cuda_status(cudaError_t error, const char* call);
// Like cuda_status, but running out of memory is an ordinary answer the pools handle by asking
// for less: GDDT_ERR_NO_MEMORY without an error line.
Status allocation_status(cudaError_t error, const char* call, std::size_t bytes);

struct Probe {
  bool usable = false;
  int devices = 0;
};
const Probe& probe();
bool valid_device(int device);
void keep_watch(int device);

// A driver function, fetched through the runtime (libcuda is never linked); null when the
// driver lacks it. The 12.0 ABI is asked for, so older 12.x drivers answer too.
template <typename Function>
Function driver_function(const char* name) {
  void* symbol = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  cudaError_t error = cudaGetDriverEntryPointByVersion(name, &symbol, 12000, cudaEnableDefault, &found);
#else
  cudaError_t error = cudaGetDriverEntryPoint(name, &symbol, cudaEnableDefault, &found);
#endif
  if (error != cudaSuccess || found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    GDDT_LOG(kInfo, "the CUDA driver has no %s", name);
    return nullptr;
  }
  return reinterpret_cast<Function>(symbol);
}

using PointerGetAttribute = CUresult (*)(void* data, CUpointer_attribute attribute, CUdeviceptr ptr);
PointerGetAttribute pointer_get_attribute();

}  // namespace gddt::gpu::driver
