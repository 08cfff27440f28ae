// Stream-ordered MPI (MPICH's MPIX_*_enqueue conventions) built on the device API: every
// operation is a few small kernels on the communicator's stream (a post kernel, a wait kernel
// per batch of waits, grids packing and unpacking larger messages), so packing, posting, waiting
// and unpacking happen in stream order and a CUDA graph can capture them. Small blocking
// messages go through the device API's ring (gddt_isend, gddt_irecv, gddt_wait); the others
// through staging and a completion of their own (gddt_device_own.h; uses_own_staging says
// why). Nothing a replay needs lives on the host: tickets are claimed by the kernels when they
// run, and each operation's request sits in a device record taken at enqueue time, owned by the
// graph under capture and otherwise released by a host function or a flag once the stream has
// passed the operation.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/gpu_capture.hpp"
#include "core/log.hpp"
#include "device_api/errors.hpp"
#include "device_api/stream_ordered_kernels.cuh"
#include "device_api/stream_ordered_pool.hpp"
#include "gddt/gddt_device.h"

// An enqueued operation between its post and its wait.
struct gddt_stream_request_s {
  gddt::device_api::StreamComm* comm;
  gddt::device_api::Slot slot;
  gddt::device_api::TypeRef* type;
  bool proc_null;
  bool captured;         // the graph owns slot and type
  void* unpack_to;       // a receive a grid unpacks from staging of its own: into this buffer
  int64_t bytes;         // its capacity
};

namespace gddt::device_api {
namespace {

using namespace stream_kernels;

// Raises `cls` through the communicator's error handler, as an MPI call would.
int raise(MPI_Comm comm, int cls, const char* why) { return device_api::raise(comm, cls, "stream-ordered call", why); }

// Runs after an operation's wait: fills the caller's status (a local MPI call on a CUDA
// thread; no CUDA call here) and, outside capture, gives the operation's record back.
struct Completion {
  Slot slot;
  TypeRef* type;
  MPI_Status* status;
  bool release;
};

void fill_status(const gddt_device_status_t& from, MPI_Status* status) {
  status->MPI_SOURCE = from.source;
  status->MPI_TAG = from.tag;
  status->MPI_ERROR = from.error;
  PMPI_Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(from.bytes));
}

void CUDART_CB complete(void* data) {
  auto* completion = static_cast<Completion*>(data);
  if (completion->status != nullptr) fill_status(completion->slot.mirror->status, completion->status);
  if (!completion->release) return;
  give_slot(completion->slot);
  release_type(completion->type);
  delete completion;
}

// The destructor of a captured operation's user object: the graph (and its executables) are gone.
void CUDART_CB release_captured(void* data) {
  auto* request = static_cast<gddt_stream_request_s*>(data);
  give_slot(request->slot);
  release_type(request->type);
  delete request;
}

void CUDART_CB delete_completion(void* data) { delete static_cast<Completion*>(data); }

// Ties `data` to the graph `stream` is capturing; `destroy` runs when the graph no longer needs it.
int hand_to_graph(cudaStream_t stream, void* data, cudaHostFn_t destroy) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  if (cudaStreamGetCaptureInfo(stream, &capture, nullptr, &graph) != cudaSuccess ||
      capture != cudaStreamCaptureStatusActive)
    return MPI_ERR_OTHER;
  cudaUserObject_t object = nullptr;
  if (cudaUserObjectCreate(&object, data, destroy, 1, cudaUserObjectNoDestructorSync) != cudaSuccess)
    return MPI_ERR_OTHER;
  if (cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove) != cudaSuccess) {
    cudaUserObjectRelease(object, 1);
    return MPI_ERR_OTHER;
  }
  return MPI_SUCCESS;
}

bool capturing(cudaStream_t stream) { return gpu::capture_of(stream) == gpu::Capture::kActive; }

int launch_error(const char* what) {
  const cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) return MPI_SUCCESS;
  GDDT_LOG(kError, "stream-ordered %s: kernel launch failed: %s", what, cudaGetErrorString(error));
  return MPI_ERR_OTHER;
}

void fill_proc_null(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_PROC_NULL;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
}

// Checks every argument but the datatype's contents (gddt_device_type_create judges those).
int check(bool send, const void* buf, int count, MPI_Datatype datatype, int peer, int tag, MPI_Comm comm,
          StreamComm** stream_comm, const char** why) {
  if (stream_comm_of(comm, stream_comm) != MPI_SUCCESS) return *why = "not a stream communicator", MPI_ERR_COMM;
  const gddt_device_comm_t& device = (*stream_comm)->device;
  if (count < 0) return *why = "negative count", MPI_ERR_COUNT;
  if (datatype == MPI_DATATYPE_NULL) return *why = "MPI_DATATYPE_NULL", MPI_ERR_TYPE;
  const bool any_source = !send && peer == MPI_ANY_SOURCE;
  if (peer != MPI_PROC_NULL && !any_source && (peer < 0 || peer >= device.size))
    return *why = "rank out of range", MPI_ERR_RANK;
  const bool any_tag = !send && tag == MPI_ANY_TAG;
  if (!any_tag && (tag < 0 || tag > device.tag_ub)) return *why = "tag out of range", MPI_ERR_TAG;
  if (buf == nullptr && count > 0) {
    int size = 0;
    if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS) return *why = "invalid datatype", MPI_ERR_TYPE;
    if (size > 0) return *why = "null buffer", MPI_ERR_BUFFER;
  }
  return MPI_SUCCESS;
}

// How an operation's record comes back: the graph owns it under capture; otherwise a host
// function that fills the caller's status releases it, or, without a status, the done flag
// its last kernel sets (no host function on the stream).
enum class Release { kGraph, kHostFunction, kFlag };

Release release_of(bool captured, bool want_status) {
  return captured ? Release::kGraph : want_status ? Release::kHostFunction : Release::kFlag;
}

// Queues what follows an operation's last kernel; `request_owner` (under capture, the object
// the graph keeps) may be null when a request already handed it over.
int after_last_kernel(cudaStream_t stream, Release release, const Slot& slot, TypeRef* type, MPI_Status* status,
                      gddt_stream_request_s* request_owner) {
  if (release == Release::kFlag) {
    release_when_done(slot, type);
    return MPI_SUCCESS;
  }
  if (release == Release::kGraph && request_owner != nullptr &&
      hand_to_graph(stream, request_owner, release_captured) != MPI_SUCCESS)
    return MPI_ERR_OTHER;
  if (status == nullptr) return MPI_SUCCESS;
  auto* completion = new Completion{slot, type, status, release == Release::kHostFunction};
  if (release == Release::kGraph && hand_to_graph(stream, completion, delete_completion) != MPI_SUCCESS) {
    delete completion;
    return MPI_ERR_OTHER;
  }
  return cudaLaunchHostFunc(stream, complete, completion) == cudaSuccess ? MPI_SUCCESS : MPI_ERR_OTHER;
}

// Whether an operation goes through pinned staging of its own rather than the device API's
// ring. Nonblocking ones do: their ticket is freed as soon as the proxy takes the post
// (start_packed), whereas a ring slot stays held until the wait, and a claim needing a slot that
// only a later wait on the same stream frees would wait for ever. So do messages that are not
// small: a grid packs and unpacks them, faster than the post kernel's one block, and the proxy
// hands MPI their packed bytes, making none of the CUDA calls a message sent direct needs
// (a pack kernel, an event, pinned staging), which would wait behind the application's thread
// holding the driver (cudaGraphLaunch, CUDA's lazy load of a kernel) while the stream's kernel
// waits for the proxy. A small blocking message takes the ring: its kernel frees the slot.
bool uses_own_staging(bool blocking, bool small) { return !blocking || !small; }

// Up to this many bytes (and one ring slot) the post or wait kernel's block packs or unpacks a
// message; beyond, a grid does, in kernels of their own: one block through the ring took 27.5 us
// one way at 4 KiB, 43.0 at 16 KiB and 83.6 at 64 KiB (two H200s, run YG).
constexpr int64_t kBlockMovesMost = 4096;

// Enqueues a post (and, for the blocking forms, its wait) of one operation. `request` null:
// blocking, `status` filled when the stream passes it.
int enqueue(bool send, const void* buf, int count, MPI_Datatype datatype, int peer, int tag, MPI_Comm comm,
            gddt_stream_request_t* request, MPI_Status* status) {
  reap();
  StreamComm* stream_comm = nullptr;
  const char* why = "";
  int rc = check(send, buf, count, datatype, peer, tag, comm, &stream_comm, &why);
  if (rc == MPI_SUCCESS && (rc = take_error()) != MPI_SUCCESS) why = "an earlier operation failed on its stream";
  if (rc != MPI_SUCCESS) return raise(comm, rc, why);
  if (peer == MPI_PROC_NULL) {
    if (request != nullptr)
      *request = new gddt_stream_request_s{stream_comm, Slot{}, nullptr, true, false, nullptr, 0};
    else if (!send)
      fill_proc_null(status);
    return MPI_SUCCESS;
  }
  int size = 0;
  if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS) return raise(comm, MPI_ERR_TYPE, "invalid datatype");
  const int64_t bytes = static_cast<int64_t>(count) * size;
  const cudaStream_t stream = stream_comm->stream;
  const gddt_device_ring_t& ring = stream_comm->device.ring;
  const std::uint64_t slots =
      std::max<std::uint64_t>(1, (static_cast<std::uint64_t>(bytes) + ring.slot_bytes - 1) / ring.slot_bytes);
  const bool blocking = request == nullptr;
  TypeRef* type = nullptr;
  if ((rc = type_ref_of(datatype, &type)) != MPI_SUCCESS) return raise(comm, rc, "datatype without a device handle");
  Slot slot{};
  if ((rc = take_slot(&slot)) != MPI_SUCCESS) {
    release_type(type);
    return raise(comm, rc, "no memory for the operation's record");
  }
  const bool small = slots == 1 && bytes <= kBlockMovesMost;
  bool own = uses_own_staging(blocking, small);
  // Without pinned memory a blocking message the ring holds goes through it; a nonblocking one
  // would hold its slots until its wait (uses_own_staging says why that may never come).
  if (own && take_staging(static_cast<std::size_t>(std::max<int64_t>(bytes, 1)), &slot) != MPI_SUCCESS) {
    own = false;
    if (!blocking || slots > ring.nslots) {
      give_slot(slot);
      release_type(type);
      return raise(comm, MPI_ERR_NO_MEM, "no pinned memory for the operation's staging");
    }
  }
  Own staging{};
  if (own)
    staging = Own{slot.staging.host, slot.staging.device, bytes, &slot.mirror->completion,
                  &slot.mirror_device->completion, &slot.mirror_device->abandoned, small};
  const bool captured = capturing(stream);
  MPI_Status* wanted = blocking && status != MPI_STATUS_IGNORE ? status : nullptr;
  const Release release = release_of(captured, wanted != nullptr);
  unsigned int* done = release == Release::kFlag ? &slot.mirror_device->done : nullptr;
  void* unpack_to = own && !send && !small ? const_cast<void*>(buf) : nullptr;  // by a grid
  if (own && send && !small)
    pack_kernel<<<blocks_for(bytes), kThreads, 0, stream>>>(type->type, buf, slot.staging.device, bytes);
  post_kernel<<<1, kThreads, 0, stream>>>(send, const_cast<void*>(buf), count, type->type, peer, tag,
                                          stream_comm->device, slot.record, staging, blocking,
                                          wanted != nullptr ? &slot.mirror_device->status : nullptr,
                                          blocking && unpack_to == nullptr ? done : nullptr, error_word_on_device());
  if (blocking && unpack_to != nullptr)
    unpack_kernel<<<blocks_for(bytes), kThreads, 0, stream>>>(type->type, unpack_to, slot.staging.device,
                                                              slot.record, done);
  // A failed launch may follow one that was queued and uses the slot and type: both are kept.
  if ((rc = launch_error(send ? "send" : "receive")) != MPI_SUCCESS) return raise(comm, rc, "launch failed");
  // Under capture the graph keeps the request object (and through it the record) alive.
  auto made = [&](bool in_graph) {
    return new gddt_stream_request_s{stream_comm, slot, type, false, in_graph, unpack_to, bytes};
  };
  auto* owner = captured ? made(true) : nullptr;
  if (!blocking) {
    *request = owner != nullptr ? owner : made(false);
    if (owner != nullptr && hand_to_graph(stream, owner, release_captured) != MPI_SUCCESS) {
      *request = nullptr;
      return raise(comm, MPI_ERR_OTHER, "cannot tie the record to the captured graph");
    }
    return MPI_SUCCESS;
  }
  if (after_last_kernel(stream, release, slot, type, wanted, owner) != MPI_SUCCESS)
    return raise(comm, MPI_ERR_OTHER, "cannot queue the operation's completion");
  return MPI_SUCCESS;
}

// Enqueues the waits of `count` requests, all on one stream, and releases them.
int enqueue_waits(int count, gddt_stream_request_t* requests, MPI_Status* statuses) {
  reap();
  if (count < 0) return raise(MPI_COMM_SELF, MPI_ERR_COUNT, "negative count");
  if (count > 0 && requests == nullptr) return raise(MPI_COMM_SELF, MPI_ERR_ARG, "null request array");
  StreamComm* first = nullptr;
  for (int i = 0; i < count; ++i) {
    if (requests[i] == nullptr) return raise(MPI_COMM_SELF, MPI_ERR_REQUEST, "null request");
    if (first == nullptr) first = requests[i]->comm;
    if (requests[i]->comm->stream != first->stream)
      return raise(MPI_COMM_SELF, MPI_ERR_REQUEST, "requests of different streams");
  }
  if (count == 0) return MPI_SUCCESS;
  const cudaStream_t stream = first->stream;
  const bool captured = capturing(stream);
  for (int i = 0; i < count; ++i)
    if (!requests[i]->proc_null && requests[i]->captured != captured)
      return raise(MPI_COMM_SELF, MPI_ERR_REQUEST, "a wait captured in a graph its post is not in, or the reverse");
  int rc = take_error();
  if (rc != MPI_SUCCESS) return raise(MPI_COMM_SELF, rc, "an earlier operation failed on its stream");
  struct Pending {
    Slot slot;
    TypeRef* type;
    MPI_Status* status;
    Release release;
    void* unpack_to;
    int64_t bytes;
  };
  WaitBatch batch{};
  std::vector<Pending> pending;
  auto flush = [&]() {
    if (batch.count == 0) return MPI_SUCCESS;
    wait_kernel<<<batch.count, kThreads, 0, stream>>>(batch, error_word_on_device());
    batch.count = 0;
    for (const Pending& p : pending)
      if (p.unpack_to != nullptr)
        unpack_kernel<<<blocks_for(p.bytes), kThreads, 0, stream>>>(
            p.type->type, p.unpack_to, p.slot.staging.device, p.slot.record,
            p.release == Release::kFlag ? &p.slot.mirror_device->done : nullptr);
    int launched = launch_error("wait");
    for (const Pending& p : pending)
      if (launched == MPI_SUCCESS) launched = after_last_kernel(stream, p.release, p.slot, p.type, p.status, nullptr);
    pending.clear();
    return launched;
  };
  for (int i = 0; i < count && rc == MPI_SUCCESS; ++i) {
    gddt_stream_request_s* request = requests[i];
    MPI_Status* status = statuses == MPI_STATUSES_IGNORE ? nullptr : statuses + i;
    if (request->proc_null) {
      if (status != nullptr) fill_proc_null(status);
    } else {
      const Release release = release_of(captured, status != nullptr);
      batch.records[batch.count] = request->slot.record;
      batch.statuses[batch.count] = status != nullptr ? &request->slot.mirror_device->status : nullptr;
      batch.done[batch.count] = release == Release::kFlag && request->unpack_to == nullptr
                                    ? &request->slot.mirror_device->done
                                    : nullptr;
      ++batch.count;
      pending.push_back(Pending{request->slot, request->type, status, release, request->unpack_to, request->bytes});
      if (batch.count == kWaitBatch) rc = flush();
    }
    // A captured request's object belongs to its graph (the user object's destructor).
    if (!request->captured) delete request;
    requests[i] = nullptr;
  }
  if (rc == MPI_SUCCESS) rc = flush();
  return raise(MPI_COMM_SELF, rc, "cannot enqueue the wait");
}

}  // namespace
}  // namespace gddt::device_api

using namespace gddt::device_api;

extern "C" {

GDDT_EXPORT int gddt_stream_comm_create(MPI_Comm comm, void* stream, MPI_Comm* newcomm) {
  if (comm == MPI_COMM_NULL) return raise(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_COMM_NULL");
  if (newcomm == nullptr) return raise(comm, MPI_ERR_ARG, "null newcomm");
  int rc = make_keyvals();
  if (rc != MPI_SUCCESS) return raise(comm, rc, "cannot make the attribute keys or the error word");
  MPI_Comm dup = MPI_COMM_NULL;
  if ((rc = PMPI_Comm_dup(comm, &dup)) != MPI_SUCCESS) return rc;
  auto* stream_comm = new StreamComm{static_cast<cudaStream_t>(stream), {}};
  if ((rc = gddt_device_comm_create(dup, &stream_comm->device)) != MPI_SUCCESS) {
    delete stream_comm;
    PMPI_Comm_free(&dup);
    return raise(comm, rc, "no device communicator");
  }
  if ((rc = attach_stream_comm(dup, stream_comm)) != MPI_SUCCESS) {
    gddt_device_comm_free(&stream_comm->device);
    delete stream_comm;
    PMPI_Comm_free(&dup);
    return raise(comm, rc, "cannot attach the stream");
  }
  *newcomm = dup;
  return MPI_SUCCESS;
}

GDDT_EXPORT int gddt_send_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return enqueue(true, buf, count, datatype, dest, tag, comm, nullptr, MPI_STATUS_IGNORE);
}

GDDT_EXPORT int gddt_recv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                  MPI_Status* status) {
  return enqueue(false, buf, count, datatype, source, tag, comm, nullptr, status);
}

GDDT_EXPORT int gddt_isend_enqueue(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                                   gddt_stream_request_t* request) {
  if (request == nullptr) return raise(comm, MPI_ERR_ARG, "null request");
  return enqueue(true, buf, count, datatype, dest, tag, comm, request, MPI_STATUS_IGNORE);
}

GDDT_EXPORT int gddt_irecv_enqueue(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                   gddt_stream_request_t* request) {
  if (request == nullptr) return raise(comm, MPI_ERR_ARG, "null request");
  return enqueue(false, buf, count, datatype, source, tag, comm, request, MPI_STATUS_IGNORE);
}

GDDT_EXPORT int gddt_wait_enqueue(gddt_stream_request_t* request, MPI_Status* status) {
  if (request == nullptr) return raise(MPI_COMM_SELF, MPI_ERR_ARG, "null request");
  return enqueue_waits(1, request, status == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : status);
}

GDDT_EXPORT int gddt_waitall_enqueue(int count, gddt_stream_request_t* requests, MPI_Status* statuses) {
  return enqueue_waits(count, requests, statuses);
}

}  // extern "C"
