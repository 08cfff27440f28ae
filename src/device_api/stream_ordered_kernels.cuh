// The kernels of stream-ordered MPI (stream_ordered.cu, which alone includes this): a post
// kernel per operation, a wait kernel per batch of waits, and the grids that pack and unpack
// messages with staging of their own.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "device_api/stream_ordered_pool.hpp"
#include "gddt/gddt_device.h"

namespace gddt::device_api::stream_kernels {

// One block packs or unpacks a message of one ring slot (the device API's block scope); larger
// ones have staging and pack and unpack kernels of their own (uses_own_staging).
constexpr int kThreads = 512;
// Packed bytes a block of those kernels takes (about one 16-byte word a thread, twice).
constexpr std::int64_t kBytesPerBlock = 16 * 1024;
constexpr std::int64_t kMostBlocks = 1024;
// Requests one wait kernel takes: one block each, so their unpacks run side by side.
constexpr int kWaitBatch = 32;

// A plain store: atomics on mapped host memory are not atomic over PCIe, and any one of the
// errors will do.
__device__ void note_error(int rc, int* error) {
  if (rc == MPI_SUCCESS || threadIdx.x != 0) return;
  *reinterpret_cast<volatile int*>(error) = rc;
  __threadfence_system();
}

// The operation's last touch of its record (thread 0, once the block is done with it).
__device__ void mark_done(unsigned int* done) {
  if (done == nullptr) return;
  __threadfence_system();
  *reinterpret_cast<volatile unsigned int*>(done) = 1;
}

// What the wait found, for an unpack kernel that follows it.
__device__ void note_received(Record* record, const gddt_device_status_t& status, int rc) {
  if (threadIdx.x == 0) record->received = rc == MPI_SUCCESS ? status.bytes : 0;
}

// The whole grid packs `bytes` of `buf` into the operation's own staging.
__global__ void __launch_bounds__(kThreads) pack_kernel(gddt_device_type_t type, const void* buf, void* staging,
                                                        int64_t bytes) {
  gddt::device::move_window(*type.layout, const_cast<void*>(buf), staging, bytes, true,
                            static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x),
                            static_cast<int>(gridDim.x * blockDim.x));
  __threadfence_system();  // the proxy reads the staging once the post kernel after this one posts
}

// The whole grid unpacks what the wait received; the last block to finish hands the record on.
__global__ void __launch_bounds__(kThreads) unpack_kernel(gddt_device_type_t type, void* buf, const void* staging,
                                                          Record* record, unsigned int* done) {
  gddt::device::move_window(*type.layout, buf, const_cast<void*>(staging), record->received, false,
                            static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x),
                            static_cast<int>(gridDim.x * blockDim.x));
  __syncthreads();
  if (threadIdx.x != 0 || done == nullptr) return;
  __threadfence();
  if (atomicAdd(&record->blocks_done, 1u) != gridDim.x - 1) return;
  record->blocks_done = 0;  // a graph replays the operation with the same record
  mark_done(done);
}

// Posts one operation (the calling block packs a send of the ring into it; one with staging of
// its own was packed by the kernel before) and, for the blocking forms, waits for it (a
// receive of the ring is unpacked by the same block).
__global__ void __launch_bounds__(kThreads)
    post_kernel(bool send, void* buf, int64_t count, gddt_device_type_t type, int peer, int tag,
                gddt_device_comm_t comm, Record* record, void* own_staging, int64_t bytes, bool wait,
                gddt_device_status_t* status, unsigned int* done, int* error) {
  if (threadIdx.x == 0) {
    record->comm = comm;
    record->received = 0;
    record->blocks_done = 0;
  }
  using gddt::device::BlockGroup;
  const int rc =
      own_staging != nullptr
          ? gddt::device::start_packed(BlockGroup{}, !send, own_staging, static_cast<uint64_t>(bytes), peer, tag, comm,
                                       &record->request)
      : send ? gddt_isend(buf, count, type, peer, tag, comm, &record->request, GDDT_SCOPE_BLOCK)
             : gddt_irecv(buf, count, type, peer, tag, comm, &record->request, GDDT_SCOPE_BLOCK);
  note_error(rc, error);
  if (rc != MPI_SUCCESS) {
    // Nothing was posted: the wait finds a completed request, and a status says why.
    __syncthreads();
    if (threadIdx.x == 0) {
      record->request.ticket = GDDT_DEVICE_REQUEST_NULL_TICKET;
      if (status != nullptr) *status = gddt_device_status_t{MPI_ANY_SOURCE, MPI_ANY_TAG, rc, 0, 0};
      if (wait) mark_done(done);
    }
    return;
  }
  if (!wait) return;
  gddt_device_status_t local{};
  const int waited = gddt_wait(comm, &record->request, &local, GDDT_SCOPE_BLOCK);
  note_error(waited, error);
  note_received(record, local, waited);
  __syncthreads();  // every thread is done with the record before the flag may hand it on
  if (threadIdx.x != 0) return;
  if (status != nullptr) *status = local;
  mark_done(done);
}

struct WaitBatch {
  int count;
  Record* records[kWaitBatch];
  gddt_device_status_t* statuses[kWaitBatch];  // null: not wanted
  unsigned int* done[kWaitBatch];              // null: a host function or the graph releases the record
};

// Block b waits for request b and unpacks it when it is a staged receive.
__global__ void __launch_bounds__(kThreads) wait_kernel(WaitBatch batch, int* error) {
  Record* record = batch.records[blockIdx.x];
  gddt_device_status_t local{};
  const int waited = gddt_wait(record->comm, &record->request, &local, GDDT_SCOPE_BLOCK);
  note_error(waited, error);
  note_received(record, local, waited);
  __syncthreads();  // every thread is done with the record before the flag may hand it on
  if (threadIdx.x != 0) return;
  if (batch.statuses[blockIdx.x] != nullptr) *batch.statuses[blockIdx.x] = local;
  mark_done(batch.done[blockIdx.x]);
}

inline int blocks_for(int64_t bytes) {
  return static_cast<int>(std::min(kMostBlocks, std::max<int64_t>(1, (bytes + kBytesPerBlock - 1) / kBytesPerBlock)));
}

}  // namespace gddt::device_api::stream_kernels
