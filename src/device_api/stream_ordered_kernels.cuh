// The kernels of stream-ordered MPI (stream_ordered.cu, which alone includes this): a post
// kernel per operation, a wait kernel per batch of waits, and the grids that pack and unpack
// messages with staging of their own.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "device_api/stream_ordered_pool.hpp"
#include "gddt/gddt_device.h"
#include "gddt/gddt_device_own.h"

namespace gddt::device_api::stream_kernels {

// One block packs or unpacks a small message (the device API's block scope); larger ones have
// staging and pack and unpack grids of their own (uses_own_staging, kBlockMovesMost).
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

// An operation's staging of its own (staging_host null: it goes through the ring).
struct Own {
  void* staging_host;  // what the proxy hands to MPI
  void* staging_device;
  int64_t bytes;
  gddt_device_completion_t* completion_host;  // the mirror's, where the proxy completes it
  gddt_device_completion_t* completion_device;
  unsigned int* abandoned;  // the mirror's flag, set when its wait gives up
  bool block_moves;         // small: the post or wait block packs or unpacks it, else a grid
};

__device__ void abandon(unsigned int* abandoned) {
  if (threadIdx.x != 0) return;
  *reinterpret_cast<volatile unsigned int*>(abandoned) = 1;
  __threadfence_system();
}

// Waits for the operation of `record` (its block unpacks a receive of the ring, or a small one
// of staging of its own).
__device__ int wait_record(Record* record, gddt_device_status_t* local) {
  if (record->completion == nullptr) return gddt_wait(record->comm, &record->request, local, GDDT_SCOPE_BLOCK);
  bool gave_up = false;
  const int rc =
      gddt::device::wait_packed(gddt::device::BlockGroup{}, record->comm, record->completion, local, &gave_up);
  if (gave_up) abandon(record->abandoned);
  if (rc == MPI_SUCCESS && record->unpack_to != nullptr)
    gddt::device::move_window(*record->layout, record->unpack_to, const_cast<void*>(record->staging), local->bytes,
                              false, static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x));
  return rc;
}

// The block's wait for `record`, then the status wanted and the done flag (null: something else
// hands the record on).
__device__ void wait_and_hand_on(Record* record, gddt_device_status_t* status, unsigned int* done, int* error) {
  gddt_device_status_t local{};
  const int waited = wait_record(record, &local);
  note_error(waited, error);
  note_received(record, local, waited);
  __syncthreads();  // every thread is done with the record before the flag may hand it on
  if (threadIdx.x != 0) return;
  if (status != nullptr) *status = local;
  mark_done(done);
}

// A post that failed: the wait finds a completed request, and a status says why.
__device__ void nothing_posted(Record* record, int rc, bool wait, gddt_device_status_t* status, unsigned int* done) {
  __syncthreads();
  if (threadIdx.x != 0) return;
  record->completion = nullptr;
  record->request.ticket = GDDT_DEVICE_REQUEST_NULL_TICKET;
  if (status != nullptr) *status = gddt_device_status_t{MPI_ANY_SOURCE, MPI_ANY_TAG, rc, 0, 0};
  if (wait) mark_done(done);
}

// Posts one operation (the calling block packs a small send into the ring or into staging of its
// own; a grid packed a larger one before) and, for the blocking forms, waits for it.
__global__ void __launch_bounds__(kThreads)
    post_kernel(bool send, void* buf, int64_t count, gddt_device_type_t type, int peer, int tag,
                gddt_device_comm_t comm, Record* record, Own own, bool wait, gddt_device_status_t* status,
                unsigned int* done, int* error) {
  const bool through_own = own.staging_host != nullptr;
  // A replay of a captured operation whose earlier wait gave up: MPI may still use its staging
  // and completion, so it posts nothing.
  if (through_own && *reinterpret_cast<volatile unsigned int*>(own.abandoned) != 0) {
    note_error(MPI_ERR_OTHER, error);
    nothing_posted(record, MPI_ERR_OTHER, wait, status, done);
    return;
  }
  if (threadIdx.x == 0) {
    record->comm = comm;
    record->completion = through_own ? own.completion_device : nullptr;
    record->abandoned = own.abandoned;
    record->unpack_to = through_own && !send && own.block_moves ? buf : nullptr;
    record->staging = own.staging_device;
    record->layout = type.layout;
    record->received = 0;
    record->blocks_done = 0;
  }
  __syncthreads();
  using gddt::device::BlockGroup;
  int rc;
  if (through_own) {
    if (send && own.block_moves) {
      gddt::device::move_window(*type.layout, buf, own.staging_device, own.bytes, true, static_cast<int>(threadIdx.x),
                                static_cast<int>(blockDim.x));
      __threadfence_system();
      __syncthreads();
    }
    rc = gddt::device::start_packed(BlockGroup{}, !send, own.staging_host, static_cast<uint64_t>(own.bytes), peer, tag,
                                    comm, own.completion_device, own.completion_host);
  } else {
    rc = send ? gddt_isend(buf, count, type, peer, tag, comm, &record->request, GDDT_SCOPE_BLOCK)
              : gddt_irecv(buf, count, type, peer, tag, comm, &record->request, GDDT_SCOPE_BLOCK);
  }
  note_error(rc, error);
  if (rc != MPI_SUCCESS) {
    nothing_posted(record, rc, wait, status, done);
    return;
  }
  if (wait) wait_and_hand_on(record, status, done, error);
}

struct WaitBatch {
  int count;
  Record* records[kWaitBatch];
  gddt_device_status_t* statuses[kWaitBatch];  // null: not wanted
  unsigned int* done[kWaitBatch];              // null: a host function, unpack grid or graph hands it on
};

// Block b waits for request b (and unpacks it, as wait_record says).
__global__ void __launch_bounds__(kThreads) wait_kernel(WaitBatch batch, int* error) {
  wait_and_hand_on(batch.records[blockIdx.x], batch.statuses[blockIdx.x], batch.done[blockIdx.x], error);
}

inline int blocks_for(int64_t bytes) {
  return static_cast<int>(std::min(kMostBlocks, std::max<int64_t>(1, (bytes + kBytesPerBlock - 1) / kBytesPerBlock)));
}

}  // namespace gddt::device_api::stream_kernels
