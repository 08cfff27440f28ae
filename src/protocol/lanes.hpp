// Two ordered lanes of work for the chunk pipelines: the pack lane (pack or unpack chunks,
// on the GPU or on the CPU) and the copy lane (moving chunks between scratch and staging).
// Markers say "everything queued on this lane so far"; a lane can wait for a marker of the
// other, which is all a double-buffered pipeline needs. The pipeline algorithm is written
// once against this class, whether the chunks run on a GPU or, with host buffers routed
// through gddt, entirely on the CPU.
#pragma once

#include <array>

#include "core/gpu.hpp"
#include "core/pool.hpp"
#include "pack/engine.hpp"

namespace gddt::protocol {

class Lanes {
 public:
  enum Lane { kPackLane = 0, kCopyLane = 1 };
  static constexpr int kMarkers = 4;
  struct GpuContext;  // streams and events, borrowed from a per-device free list

  // pack_on_gpu: the pack lane runs the backend of device memory on `device`, else the one of
  // host memory on the calling thread. copy_on_gpu: copies are cudaMemcpyAsync on `device`, else memcpy.
  // Both lanes are ordered after the user's earlier work on `user_stream`, or, without one, on
  // the legacy default stream.
  static Status open(bool pack_on_gpu, bool copy_on_gpu, int device, gpu::Stream user_stream, Lanes* lanes);
  Lanes() = default;
  ~Lanes();
  Lanes(const Lanes&) = delete;
  Lanes& operator=(const Lanes&) = delete;

  Status pack(const pack::Window& window, const void* typed, void* packed);
  Status unpack(const pack::Window& window, void* typed, const void* packed);
  Status copy(void* dst, const void* src, std::size_t bytes);
  Status mark(int marker, Lane lane);
  Status wait(Lane lane, int marker);
  // Returns when everything queued on both lanes is done, doing `meanwhile` while it waits.
  Status drain(const gpu::WhileWaiting& meanwhile = {});

  // Where chunk scratch must live for this lane pair.
  pool::Where scratch_where() const { return pack_on_gpu_ ? pool::Where::kDevice : pool::Where::kPinned; }
  int device() const { return device_; }
  bool on_gpu() const { return pack_on_gpu_ || copy_on_gpu_; }

 private:
  bool pack_on_gpu_ = false;
  bool copy_on_gpu_ = false;
  int device_ = -1;
  const pack::Backend* packer_ = nullptr;
  GpuContext* context_ = nullptr;
};

}  // namespace gddt::protocol
