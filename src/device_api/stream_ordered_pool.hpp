// The host side of stream-ordered MPI (stream_ordered.cu): the device records operations take,
// the datatypes' device handles, the communicators' streams, and what releases them once the
// streams have passed their operations.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "gddt/gddt_device.h"

namespace gddt::device_api {

// Device memory, one per operation: what its wait kernel needs of the post kernel, and what
// the unpack kernel of a receive through staging of its own needs of the wait.
struct Record {
  gddt_device_request_t request;  // through the ring
  gddt_device_comm_t comm;
  gddt_device_completion_t* completion;  // with staging of its own (else null): in the mirror
  unsigned int* abandoned;               // the mirror's flag
  void* unpack_to;                       // a receive the wait's block unpacks (else null)
  const void* staging;
  const gddt_device_layout_t* layout;
  int64_t received;          // packed bytes the wait found (0 on an error)
  unsigned int blocks_done;  // the unpack kernel's blocks that finished: the last sets the done flag
};

// Mapped pinned host memory of a stream-ordered message that does not go through the ring.
struct OwnStaging {
  void* host = nullptr;  // what the proxy hands to MPI
  void* device = nullptr;
  std::size_t bytes = 0;
};

// Mapped host memory beside each record.
struct Mirror {
  gddt_device_status_t status;  // read by the host function filling an MPI_Status
  gddt_device_completion_t completion;  // written by the proxy (staging of its own)
  unsigned int done;            // set by the last kernel of an operation whose record a flag releases
  unsigned int abandoned;       // its wait timed out: MPI may still use the staging and the completion
};

struct Slot {
  Record* record;
  Mirror* mirror;
  Mirror* mirror_device;
  OwnStaging staging;  // given back with the slot
};

// A datatype's device handle, shared by the operations and graphs using it: released last by
// whichever of them ends last, often inside a host function, where no CUDA call is allowed,
// so the handle waits in `retired` for the next call from a host thread.
struct TypeRef {
  gddt_device_type_t type;
  std::atomic<int> refs;
};

struct StreamComm {
  cudaStream_t stream;
  gddt_device_comm_t device;
};

void release_type(TypeRef* ref);
void reap();
int take_slot(Slot* slot);
// Host threads only (it may allocate): staging of at least `bytes` for `slot`.
int take_staging(std::size_t bytes, Slot* slot);
// Back to the pool, staging included, unless the operation was abandoned (never reused then).
void give_slot(const Slot& slot);
int take_error();
int make_keyvals();
int stream_comm_of(MPI_Comm comm, StreamComm** out);
int type_ref_of(MPI_Datatype datatype, TypeRef** out);
// An operation whose last kernel sets its mirror's done flag: released by a later reap().
void release_when_done(const Slot& slot, TypeRef* type);
// Where kernels note an error for the next enqueue call to return (take_error).
int* error_word_on_device();
int attach_stream_comm(MPI_Comm comm, StreamComm* stream_comm);

}  // namespace gddt::device_api
