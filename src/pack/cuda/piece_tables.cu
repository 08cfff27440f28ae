// The per-layout device tables of the CUDA backend (piece_tables.hpp).
#include "pack/cuda/piece_tables.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <vector>

#include "core/gpu.hpp"
#include "pack/backend.hpp"

namespace gddt::pack::cuda_impl {

namespace {

// Frees device memory, ignoring errors: at process exit the CUDA runtime may be torn down
// before the last layout, and then there is nothing left to free; nor after a device reset.
void release_device_memory(int device, void* memory) {
  if (gpu::objects_abandoned()) return;
  int current = -1;
  const bool switched = cudaGetDevice(&current) == cudaSuccess && current != device &&
                        cudaSetDevice(device) == cudaSuccess;
  cudaFree(memory);
  if (switched) cudaSetDevice(current);
  cudaGetLastError();
}

// The CUDA slot of a block-list layout: its piece tables, one per device that used it.
struct DevicePieceTables {
  struct Entry {
    int device;
    void* memory;
    PieceTable table;
  };
  std::vector<Entry> entries;

  DevicePieceTables() = default;
  DevicePieceTables(const DevicePieceTables&) = delete;
  DevicePieceTables& operator=(const DevicePieceTables&) = delete;
  ~DevicePieceTables() {
    for (const Entry& entry : entries) release_device_memory(entry.device, entry.memory);
  }
};

}  // namespace

Status device_piece_table(const type::Layout& layout, int device, cudaStream_t stream, PieceTable* table) {
  type::BackendSlots::Slot& slot = layout.backend_slots[kCudaSlot];
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (!slot.data) slot.data = std::make_shared<DevicePieceTables>();
  auto& tables = *static_cast<DevicePieceTables*>(slot.data.get());
  for (const DevicePieceTables::Entry& entry : tables.entries) {
    if (entry.device == device) {
      *table = entry.table;
      return GDDT_OK;
    }
  }
  const PieceTableImage image = build_piece_table(layout);
  void* memory = nullptr;
  GDDT_CHECK(gpu::device_alloc(device, image.bytes(), &memory));
  Status status = gpu::memcpy_async(memory, image.storage.data(), image.bytes(), stream);
  if (!is_error(status)) status = gpu::stream_synchronize(stream);
  if (is_error(status)) {
    release_device_memory(device, memory);
    return status;
  }
  tables.entries.push_back({device, memory, image.table_at(memory)});
  *table = tables.entries.back().table;
  return GDDT_OK;
}

}  // namespace gddt::pack::cuda_impl
