// The d2d-copy ceiling: the case's packed bytes copied device to device with no MPI at all,
// which no method that also moves the bytes between processes can beat. With both ranks on
// one GPU it is a cudaMemcpyAsync within rank 0; with the ranks on two GPUs of one host,
// rank 0 copies from its GPU into memory it allocates on rank 1's GPU (cudaMemcpyPeerAsync,
// with peer access where the GPUs allow it), so the copy crosses the same link the messages
// do. Rank 1 only waits while rank 0 copies: on a shared GPU its work would slow the copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <mpi.h>

namespace gddt::bench {

// How rank 0 copies, settled once by both ranks together.
struct DeviceCopyPlan {
  std::string unavailable;   // why the ceiling cannot be measured here; "" when it can
  int source_device = -1;    // rank 0's GPU
  int target_device = -1;    // rank 1's GPU, numbered as rank 0 sees it (the source on one GPU)
  bool peer_access = false;  // two GPUs that reach each other directly (NVLink or PCIe P2P)

  bool crosses_devices() const { return source_device != target_device; }
  std::string describe() const;  // "cudaMemcpyAsync on GPU 0", "cudaMemcpyPeerAsync GPU 0 -> GPU 1, ..."
};

// Collective over `comm` (two ranks). `device` is this rank's GPU, or -1 when it uses none;
// nothing touches CUDA then, so a run without a GPU never loads the driver for this.
DeviceCopyPlan plan_device_copy(int device, MPI_Comm comm, int rank);

// Rank 0's source and target buffers of `bytes` and the stream it copies on. Made on rank 0
// only, after the sweep (a context on rank 1's GPU would otherwise count as a second process
// there for the whole sweep, which gddt's resident kernel looks for).
class DeviceCopy {
 public:
  DeviceCopy(const DeviceCopyPlan& plan, std::size_t bytes);
  ~DeviceCopy();
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;

  // Queues `times` copies of the first `bytes` bytes back to back and waits for them.
  void copy(std::size_t bytes, int times);
  // Clears the target, copies once and compares: true when the target then holds the
  // source's first `bytes` bytes (the pattern the source was filled with).
  bool copies_correctly(std::size_t bytes);

 private:
  DeviceCopyPlan plan_;
  std::size_t capacity_;
  std::vector<std::uint32_t> pattern_;  // what the source holds
  void* source_ = nullptr;
  void* target_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace gddt::bench
