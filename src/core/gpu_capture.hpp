// CUDA code under graph capture: whether a stream is capturing, and the calls a thread makes
// while a stream of its own may be: in the default (global) mode the driver refuses them
// (allocations, event queries and waits) and breaks the capture; relaxed mode allows them for as
// long as a RelaxedCapture lives.
#pragma once

#include <cuda_runtime.h>

namespace gddt::gpu {

// Where a graph capture of a stream stands. kUnknown: the driver would not say, and its error is
// left as the last error for the caller.
enum class Capture { kNone, kActive, kInvalidated, kUnknown };

inline Capture capture_of(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) return Capture::kUnknown;
  if (status == cudaStreamCaptureStatusNone) return Capture::kNone;
  return status == cudaStreamCaptureStatusActive ? Capture::kActive : Capture::kInvalidated;
}

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
