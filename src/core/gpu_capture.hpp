// Calls a thread makes while a stream of its own may be capturing a CUDA graph: in the default
// (global) mode the driver refuses them (allocations, event queries and waits) and breaks the
// capture; relaxed mode allows them for as long as this object lives.
#pragma once

#include <cuda_runtime.h>

namespace gddt::gpu {

class RelaxedCapture {
 public:
  RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCapture(const RelaxedCapture&) = delete;
  RelaxedCapture& operator=(const RelaxedCapture&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

}  // namespace gddt::gpu
