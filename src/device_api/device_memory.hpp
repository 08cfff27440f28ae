// Memory that kernels read: on the current GPU when one is usable, else
// ordinary host memory, so that host threads standing in for kernels (tests,
// machines without a GPU) walk the same structures.
#pragma once

#include <cstddef>

#include "core/status.hpp"

namespace gddt::device_api {

class DeviceCopy {
 public:
  DeviceCopy() = default;
  DeviceCopy(DeviceCopy &&other) noexcept { *this = static_cast<DeviceCopy &&>(other); }
  DeviceCopy &operator=(DeviceCopy &&other) noexcept;
  DeviceCopy(const DeviceCopy &) = delete;
  DeviceCopy &operator=(const DeviceCopy &) = delete;
  ~DeviceCopy() { release(); }

  // Replaces the contents with a copy of `bytes` bytes at `source` (host
  // memory).
  Status assign(const void *source, std::size_t bytes);
  void release();

  void *ptr = nullptr;
  int device = -1;  // the GPU that holds it; -1: host memory
};

}  // namespace gddt::device_api
