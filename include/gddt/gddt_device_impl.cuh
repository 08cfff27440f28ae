/*
 * The device functions of gddt/gddt_device.h: the protocol of
 * gddt/gddt_device_core.h run by one thread, a warp or a block. Included by
 * gddt_device.h under nvcc; not meant to be included alone.
 */
#ifndef GDDT_GDDT_DEVICE_IMPL_CUH
#define GDDT_GDDT_DEVICE_IMPL_CUH

#include "gddt/gddt_device_core.h"

namespace gddt::device {

struct WarpGroup {
  __device__ int rank() const {
    return static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
  }
  __device__ int size() const { return 32; }
  __device__ void sync() const { __syncwarp(); }
  __device__ uint64_t share(uint64_t v) const { return __shfl_sync(0xffffffffu, v, 0); }
};

struct BlockGroup {
  __device__ int rank() const {
    return static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
  }
  __device__ int size() const { return static_cast<int>(blockDim.x * blockDim.y * blockDim.z); }
  __device__ void sync() const { __syncthreads(); }
  __device__ uint64_t share(uint64_t v) const {
    __shared__ uint64_t shared;
    if (rank() == 0) shared = v;
    __syncthreads();
    const uint64_t out = shared;
    __syncthreads();
    return out;
  }
};

// Runs `body` with the group of `scope`.
template <class Body>
__device__ int with_group(gddt_scope scope, Body body) {
  switch (scope) {
    case GDDT_SCOPE_WARP:
      return body(WarpGroup{});
    case GDDT_SCOPE_BLOCK:
      return body(BlockGroup{});
    case GDDT_SCOPE_THREAD:
      break;
  }
  return body(SoloGroup{});
}

}  // namespace gddt::device

__device__ inline int gddt_isend(const void *buf, int64_t count, gddt_device_type_t type, int dest, int tag,
                                 gddt_device_comm_t comm, gddt_device_request_t *request, gddt_scope scope) {
  return gddt::device::with_group(scope, [&](auto g) {
    return gddt::device::start_p2p(g, false, const_cast<void *>(buf), count, type, dest, tag, comm, request);
  });
}

__device__ inline int gddt_irecv(void *buf, int64_t count, gddt_device_type_t type, int source, int tag,
                                 gddt_device_comm_t comm, gddt_device_request_t *request, gddt_scope scope) {
  return gddt::device::with_group(
      scope, [&](auto g) { return gddt::device::start_p2p(g, true, buf, count, type, source, tag, comm, request); });
}

__device__ inline int gddt_wait(gddt_device_comm_t comm, gddt_device_request_t *request, gddt_device_status_t *status,
                                gddt_scope scope) {
  return gddt::device::with_group(scope, [&](auto g) { return gddt::device::wait(g, comm, request, status); });
}

__device__ inline int gddt_waitall(gddt_device_comm_t comm, int count, gddt_device_request_t *requests,
                                   gddt_device_status_t *statuses, gddt_scope scope) {
  return gddt::device::with_group(scope,
                                  [&](auto g) { return gddt::device::waitall(g, comm, count, requests, statuses); });
}

__device__ inline int gddt_test(gddt_device_comm_t comm, gddt_device_request_t *request, int *flag,
                                gddt_device_status_t *status, gddt_scope scope) {
  return gddt::device::with_group(scope, [&](auto g) { return gddt::device::test(g, comm, request, flag, status); });
}

__device__ inline int gddt_barrier(gddt_device_comm_t comm, gddt_scope scope) {
  return gddt::device::with_group(scope, [&](auto g) { return gddt::device::barrier(g, comm); });
}

__device__ inline int gddt_allreduce(const void *sendbuf, void *recvbuf, int count, gddt_device_basic_t type,
                                     gddt_device_reduce_t op, gddt_device_comm_t comm, gddt_scope scope) {
  return gddt::device::with_group(
      scope, [&](auto g) { return gddt::device::allreduce(g, sendbuf, recvbuf, count, type, op, comm); });
}

#endif /* GDDT_GDDT_DEVICE_IMPL_CUH */
