#include "protocol/lanes.hpp"

#include <cstring>
#include <mutex>
#include <vector>

namespace gddt::protocol {

// Streams and events are costly to create, so contexts are kept per device and reused.
struct Lanes::GpuContext {
  int device = -1;
  std::array<gpu::Stream, 2> streams{};
  std::array<gpu::Event, kMarkers> markers{};
  gpu::Event user_ready = nullptr;
};

namespace {

std::mutex free_mutex;
std::vector<Lanes::GpuContext*>& free_contexts() {
  // Never destroyed: contexts may be returned by threads still running at exit.
  static auto* contexts = new std::vector<Lanes::GpuContext*>;
  return *contexts;
}

Status borrow_context(int device, Lanes::GpuContext** out) {
  {
    std::lock_guard<std::mutex> lock(free_mutex);
    auto& list = free_contexts();
    for (auto it = list.begin(); it != list.end(); ++it) {
      if ((*it)->device == device) {
        *out = *it;
        list.erase(it);
        return GDDT_OK;
      }
    }
  }
  auto* context = new Lanes::GpuContext;
  context->device = device;
  Status status = GDDT_OK;
  for (auto& stream : context->streams)
    if (!is_error(status)) status = gpu::stream_create(device, &stream);
  for (auto& event : context->markers)
    if (!is_error(status)) status = gpu::event_create(device, &event);
  if (!is_error(status)) status = gpu::event_create(device, &context->user_ready);
  if (is_error(status)) {
    for (auto stream : context->streams) if (stream) gpu::stream_destroy(stream);
    for (auto event : context->markers) if (event) gpu::event_destroy(event);
    if (context->user_ready) gpu::event_destroy(context->user_ready);
    delete context;
    return status;
  }
  *out = context;
  return GDDT_OK;
}

bool lane_on_gpu(bool pack_on_gpu, bool copy_on_gpu, Lanes::Lane lane) {
  return lane == Lanes::kPackLane ? pack_on_gpu : copy_on_gpu;
}

}  // namespace

Status Lanes::open(bool pack_on_gpu, bool copy_on_gpu, int device, gpu::Stream user_stream, Lanes* lanes) {
  lanes->pack_on_gpu_ = pack_on_gpu;
  lanes->copy_on_gpu_ = copy_on_gpu;
  lanes->device_ = device;
  // The pack lane moves chunks between the typed buffer and scratch in the same memory.
  const gddt_memory_type_t pack_memory = pack_on_gpu ? GDDT_MEMORY_DEVICE : GDDT_MEMORY_HOST;
  lanes->packer_ = pack::backend_for(pack_memory, pack_memory);
  if (!lanes->on_gpu()) return GDDT_OK;
  GDDT_CHECK(borrow_context(device, &lanes->context_));
  // Work the user queued before the call must finish before our lanes touch the buffers: on
  // their stream, or else on the legacy default stream, where a cudaMemcpy from pageable
  // memory into a buffer may still be landing (with other processes on the GPU, such an upload
  // landed after the pipeline had packed into the same buffer).
  const gpu::Stream before = user_stream != nullptr ? user_stream : gpu::legacy_stream();
  GDDT_CHECK(gpu::event_record(lanes->context_->user_ready, before));
  for (auto stream : lanes->context_->streams) GDDT_CHECK(gpu::stream_wait_event(stream, lanes->context_->user_ready));
  return GDDT_OK;
}

Lanes::~Lanes() {
  if (context_ == nullptr) return;
  std::lock_guard<std::mutex> lock(free_mutex);
  free_contexts().push_back(context_);
}

Status Lanes::pack(const pack::Window& window, const void* typed, void* packed) {
  if (packer_ == nullptr) return GDDT_ERR_INTERNAL;
  return packer_->pack(window, typed, packed, pack_on_gpu_ ? context_->streams[kPackLane] : nullptr);
}

Status Lanes::unpack(const pack::Window& window, void* typed, const void* packed) {
  if (packer_ == nullptr) return GDDT_ERR_INTERNAL;
  return packer_->unpack(window, typed, packed, pack_on_gpu_ ? context_->streams[kPackLane] : nullptr);
}

Status Lanes::copy(void* dst, const void* src, std::size_t bytes) {
  if (copy_on_gpu_) return gpu::memcpy_async(dst, src, bytes, context_->streams[kCopyLane]);
  std::memcpy(dst, src, bytes);
  return GDDT_OK;
}


Status Lanes::mark(int marker, Lane lane) {
  // Work of a CPU lane is complete when queued: its markers need no event.
  if (!lane_on_gpu(pack_on_gpu_, copy_on_gpu_, lane)) return GDDT_OK;
  return gpu::event_record(context_->markers[marker], context_->streams[lane]);
}

Status Lanes::wait(Lane lane, int marker) {
  const Lane other = lane == kPackLane ? kCopyLane : kPackLane;
  if (!lane_on_gpu(pack_on_gpu_, copy_on_gpu_, other)) return GDDT_OK;
  if (lane_on_gpu(pack_on_gpu_, copy_on_gpu_, lane))
    return gpu::stream_wait_event(context_->streams[lane], context_->markers[marker]);
  return gpu::event_synchronize(context_->markers[marker]);
}

Status Lanes::drain(const gpu::WhileWaiting& meanwhile) {
  if (context_ == nullptr) return GDDT_OK;
  for (auto stream : context_->streams) GDDT_CHECK(gpu::stream_wait(stream, meanwhile));
  return GDDT_OK;
}

}  // namespace gddt::protocol
