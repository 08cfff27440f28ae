// The CUDA build of gpu.hpp's allocations: device memory, pinned and mapped host memory, and host
// memory registered with the driver.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "core/gpu.hpp"
#include "core/gpu_cuda_driver.hpp"

namespace gddt::gpu {

namespace driver {

Status allocation_status(cudaError_t error, const char* call, std::size_t bytes) {
  if (error != cudaErrorMemoryAllocation) return cuda_status(error, call);
  cudaGetLastError();
  GDDT_LOG(kInfo, "%s(%zu bytes): out of memory", call, bytes);
  return GDDT_ERR_NO_MEMORY;
}

}  // namespace driver

using namespace driver;

Status device_alloc(int device, std::size_t bytes, void** ptr) {
  if (!valid_device(device)) return available() ? GDDT_ERR_INVALID_ARG : GDDT_ERR_NO_DEVICE;
  DeviceGuard guard(device);
  keep_watch(device);
  return allocation_status(cudaMalloc(ptr, bytes), "cudaMalloc", bytes);
}

void device_free(int device, void* ptr) {
  if (ptr == nullptr || !valid_device(device) || objects_abandoned()) return;
  DeviceGuard guard(device);
  cuda_status(cudaFree(ptr), "cudaFree");
}

Status pinned_alloc(std::size_t bytes, void** ptr) {
  if (!available()) return GDDT_ERR_NO_DEVICE;
  keep_watch(current_device());  // pinned memory lives in the current device's context
  return allocation_status(cudaHostAlloc(ptr, bytes, cudaHostAllocPortable | cudaHostAllocMapped), "cudaHostAlloc",
                           bytes);
}

void pinned_free(void* ptr) {
  if (ptr == nullptr || !available() || objects_abandoned()) return;
  cuda_status(cudaFreeHost(ptr), "cudaFreeHost");
}

Status mapped_alloc(std::size_t bytes, void** host, void** device) {
  if (!available()) {
    *host = *device = std::calloc(1, bytes);
    return *host != nullptr ? GDDT_OK : GDDT_ERR_NO_MEMORY;
  }
  GDDT_CHECK(pinned_alloc(bytes, host));
  std::memset(*host, 0, bytes);
  const Status status = cuda_status(cudaHostGetDevicePointer(device, *host, 0), "cudaHostGetDevicePointer");
  if (is_error(status)) pinned_free(*host);
  return status;
}

void mapped_free(void* host) {
  if (available()) {
    pinned_free(host);
  } else {
    std::free(host);
  }
}

Status host_register(void* host, std::size_t bytes, void** device, bool* registered) {
  *registered = false;
  if (!available()) return GDDT_ERR_NO_DEVICE;
  keep_watch(current_device());  // the registration lives in the current device's context
  const cudaError_t error = cudaHostRegister(host, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped);
  if (error == cudaErrorHostMemoryAlreadyRegistered) {
    cudaGetLastError();  // not sticky, but the next check_last_error must not see it
  } else {
    GDDT_CHECK(cuda_status(error, "cudaHostRegister"));
    *registered = true;
  }
  const Status status = cuda_status(cudaHostGetDevicePointer(device, host, 0), "cudaHostGetDevicePointer");
  if (is_error(status) && *registered) host_unregister(host);
  return status;
}

void host_unregister(void* host) {
  if (host == nullptr || !available() || objects_abandoned()) return;
  cuda_status(cudaHostUnregister(host), "cudaHostUnregister");
}

}  // namespace gddt::gpu
