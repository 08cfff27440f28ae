#include "device_api/device_memory.hpp"

#include <cstdlib>
#include <cstring>

#include "core/gpu.hpp"

namespace gddt::device_api {

DeviceCopy &DeviceCopy::operator=(DeviceCopy &&other) noexcept {
  if (this != &other) {
    release();
    ptr = other.ptr;
    device = other.device;
    other.ptr = nullptr;
    other.device = -1;
  }
  return *this;
}

Status DeviceCopy::assign(const void *source, std::size_t bytes) {
  release();
  if (!gpu::available()) {
    ptr = std::malloc(bytes);
    if (ptr == nullptr) return GDDT_ERR_NO_MEMORY;
    std::memcpy(ptr, source, bytes);
    return GDDT_OK;
  }
  const int current = gpu::current_device();
  GDDT_CHECK(gpu::device_alloc(current, bytes, &ptr));
  device = current;
  gpu::Stream stream = nullptr;
  GDDT_CHECK(gpu::library_stream(current, &stream));
  GDDT_CHECK(gpu::memcpy_async(ptr, source, bytes, stream));
  return gpu::stream_synchronize(stream);
}

void DeviceCopy::release() {
  if (ptr == nullptr) return;
  if (device >= 0) {
    gpu::device_free(device, ptr);
  } else {
    std::free(ptr);
  }
  ptr = nullptr;
  device = -1;
}

}  // namespace gddt::device_api
