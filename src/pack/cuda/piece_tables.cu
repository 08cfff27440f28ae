// The per-layout device tables of the CUDA backend (piece_tables.hpp).
#include "pack/cuda/piece_tables.hpp"

#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/counters.hpp"
#include "core/gpu.hpp"
#include "core/gpu_capture.hpp"
#include "core/pool.hpp"
#include "pack/backend.hpp"

namespace gddt::pack::cuda_impl {

namespace {

// The CUDA slot of a block-list layout: its piece tables, one per device that used it. A table
// lives in the device pool's memory, so that the types a program makes and frees by the thousand
// neither allocate nor free device memory (cudaFree waits for the whole device, the resident
// kernel's idle exit included). Its upload runs behind the stream of its first use, from pinned
// memory, with no host wait: only a use on another stream or by the resident kernel, before
// `uploaded` has been seen to pass, waits for it.
struct DevicePieceTables {
  struct Entry {
    int device = -1;
    pool::Lease memory;
    void* own = nullptr;  // where the device pool had no room: allocated for this table alone
    PieceTable table;
    pool::Lease staging;             // the pinned image, kept until the copy is done
    gpu::Event uploaded = nullptr;   // recorded after the copy; null once seen done
    gpu::Stream upload_stream = nullptr;
  };
  std::vector<std::unique_ptr<Entry>> entries;

  DevicePieceTables() = default;
  DevicePieceTables(const DevicePieceTables&) = delete;
  DevicePieceTables& operator=(const DevicePieceTables&) = delete;
  ~DevicePieceTables() {
    // A copy still pending must not land in memory the pool has handed on.
    for (const auto& entry : entries) {
      if (entry->uploaded != nullptr) {
        gpu::event_synchronize(entry->uploaded);
        gpu::event_destroy(entry->uploaded);
      }
      if (entry->own != nullptr) gpu::device_free(entry->device, entry->own);
    }
  }
};

// With the slot's lock held: whether the upload of `entry` is done; lets its staging go once it is.
Status upload_done(DevicePieceTables::Entry& entry, bool* done) {
  *done = entry.uploaded == nullptr;
  if (*done) return GDDT_OK;
  GDDT_CHECK(gpu::event_query(entry.uploaded, done));
  if (!*done) return GDDT_OK;
  gpu::event_destroy(entry.uploaded);
  entry.uploaded = nullptr;
  entry.staging.release();
  return GDDT_OK;
}

// With the slot's lock held: returns once the upload of `entry` is done.
Status wait_upload(DevicePieceTables::Entry& entry) {
  bool done = false;
  GDDT_CHECK(upload_done(entry, &done));
  if (done) return GDDT_OK;
  GDDT_CHECK(gpu::event_synchronize(entry.uploaded));
  return upload_done(entry, &done);
}

// Copies `image` into `memory` on `stream`: from pinned staging without waiting where the
// pinned pool and an event allow, else synchronously.
Status upload(const PieceTableImage& image, void* memory, int device, cudaStream_t stream,
              DevicePieceTables::Entry* entry) {
  const std::size_t bytes = image.bytes();
  gpu::Event event = nullptr;
  if (!is_error(pool::acquire(pool::Where::kPinned, device, bytes, bytes, &entry->staging)) &&
      !is_error(gpu::event_create(device, &event))) {
    std::memcpy(entry->staging.data(), image.storage.data(), bytes);
    Status status = gpu::memcpy_async(memory, entry->staging.data(), bytes, stream);
    if (!is_error(status)) status = gpu::event_record(event, stream);
    if (!is_error(status)) {
      entry->uploaded = event;
      entry->upload_stream = stream;
      return GDDT_OK;
    }
    // Whatever was queued lands before the synchronous copy below, which overwrites it.
    gpu::stream_synchronize(stream);
  }
  if (event != nullptr) gpu::event_destroy(event);
  entry->staging.release();
  GDDT_CHECK(gpu::memcpy_async(memory, image.storage.data(), bytes, stream));
  return gpu::stream_synchronize(stream);
}

// A stream a graph is capturing (or one that cannot tell) would record the copy and the event into
// the graph instead of running them: the upload then goes on the library stream, waited for.
bool capturing(cudaStream_t stream) {
  const gpu::Capture capture = gpu::capture_of(stream);
  if (capture == gpu::Capture::kUnknown) cudaGetLastError();  // the failed query's, not a launch's
  return capture != gpu::Capture::kNone;
}

// With the slot's lock held: the entry of `device` in `layout`'s slot, or null.
DevicePieceTables::Entry* find_entry(const type::BackendSlots::Slot& slot, int device) {
  if (!slot.data) return nullptr;
  for (const auto& entry : static_cast<const DevicePieceTables*>(slot.data.get())->entries)
    if (entry->device == device) return entry.get();
  return nullptr;
}

// With the slot's lock held: a new entry of `device`, its upload queued on `stream`.
Status make_entry(const type::Layout& layout, type::BackendSlots::Slot& slot, int device, cudaStream_t stream,
                  DevicePieceTables::Entry** out) {
  counters::Stopwatch uploading(counters::Counter::kPieceTableNs);
  const PieceTableImage image = build_piece_table(layout);
  auto entry = std::make_unique<DevicePieceTables::Entry>();
  entry->device = device;
  void* memory = nullptr;
  if (!is_error(pool::acquire(pool::Where::kDevice, device, image.bytes(), image.bytes(), &entry->memory))) {
    memory = entry->memory.data();
  } else {
    GDDT_CHECK(gpu::device_alloc(device, image.bytes(), &entry->own));
    memory = entry->own;
  }
  const Status status = upload(image, memory, device, stream, entry.get());
  if (is_error(status)) {
    gpu::device_free(device, entry->own);
    return status;
  }
  entry->table = image.table_at(memory);
  counters::add(counters::Counter::kPieceTables, 1);
  *out = entry.get();
  if (!slot.data) slot.data = std::make_shared<DevicePieceTables>();
  static_cast<DevicePieceTables*>(slot.data.get())->entries.push_back(std::move(entry));
  return GDDT_OK;
}

// A stream of `device` for the uploads of prepare_piece_table, created once: not ordered after the
// legacy default stream as the library stream is, so that readying a type waits for its own copy
// only, never for the program's kernels.
Status readying_stream(int device, gpu::Stream* stream) {
  static std::mutex mutex;
  static std::vector<std::pair<int, gpu::Stream>> streams;
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& known : streams)
    if (known.first == device) {
      *stream = known.second;
      return GDDT_OK;
    }
  GDDT_CHECK(gpu::stream_create(device, stream));
  streams.emplace_back(device, *stream);
  return GDDT_OK;
}

}  // namespace

Status device_piece_table(const type::Layout& layout, int device, cudaStream_t stream, PieceTable* table) {
  type::BackendSlots::Slot& slot = layout.backend_slots[kCudaSlot];
  std::lock_guard<std::mutex> lock(slot.mutex);
  DevicePieceTables::Entry* entry = find_entry(slot, device);
  if (entry != nullptr && entry->uploaded == nullptr) {
    *table = entry->table;
    return GDDT_OK;
  }
  const bool recorded = capturing(stream);
  std::optional<gpu::RelaxedCapture> relaxed;
  if (recorded) relaxed.emplace();  // the waits below, and the pools' allocations
  if (entry == nullptr) {
    gpu::Stream library = nullptr;
    if (recorded) GDDT_CHECK(gpu::library_stream(device, &library));
    GDDT_CHECK(make_entry(layout, slot, device, recorded ? static_cast<cudaStream_t>(library) : stream, &entry));
  }
  *table = entry->table;
  // Asked even where the stream orders the use, so that the pinned image goes back to its pool at
  // the first use that finds the copy done, not with the layout.
  bool done = false;
  GDDT_CHECK(upload_done(*entry, &done));
  if (done || (!recorded && entry->upload_stream == stream)) return GDDT_OK;
  return recorded ? wait_upload(*entry) : gpu::stream_wait_event(stream, entry->uploaded);
}

Status prepare_piece_table(const type::Layout& layout, int device) {
  if (layout.shape != type::Shape::kBlockList || !gpu::available()) return GDDT_OK;
  gpu::RelaxedCapture relaxed;
  gpu::Stream stream = nullptr;
  GDDT_CHECK(readying_stream(device, &stream));
  PieceTable table;
  return resident_piece_table(layout, device, static_cast<cudaStream_t>(stream), &table);
}

Status resident_piece_table(const type::Layout& layout, int device, cudaStream_t stream, PieceTable* table) {
  type::BackendSlots::Slot& slot = layout.backend_slots[kCudaSlot];
  std::lock_guard<std::mutex> lock(slot.mutex);
  DevicePieceTables::Entry* entry = find_entry(slot, device);
  if (entry == nullptr) GDDT_CHECK(make_entry(layout, slot, device, stream, &entry));
  *table = entry->table;
  return wait_upload(*entry);
}

}  // namespace gddt::pack::cuda_impl
