/*
 * gddt's device API: MPI point-to-point with derived datatypes, a barrier and an allreduce,
 * called from inside CUDA kernels, and stream-ordered MPI from the host.
 *
 * How it works. The host makes device-side handles once from ordinary MPI handles
 * (gddt_device_comm_create, gddt_device_type_create). A kernel posts a request into a ring in
 * mapped pinned host memory; a host proxy inside gddt (a thread under MPI_THREAD_MULTIPLE,
 * otherwise gddt_device_progress and every MPI call the host makes) carries it out with gddt's
 * own point-to-point and collectives and writes the completion back into mapped memory, which
 * the kernel polls. Packing is done by the calling threads themselves, straight into the
 * request's staging slots: a warp or block that calls cooperatively packs and unpacks with all
 * of its threads, no extra kernel launch. A message larger than the staging (or, for a single
 * calling thread, larger than GDDT_DEVICE_THREAD_PACK_MAX) is sent "direct": the proxy hands the
 * user's buffer and datatype to gddt's point-to-point, whose pack kernels then need room on the
 * GPU next to the calling kernel.
 *
 * The host part is plain C and needs <mpi.h>; the device part (below, under __CUDACC__) is
 * CUDA C++. The structures in "the ring" are the protocol between the two halves: the device
 * functions in this header and the proxy in src/device_api/ both follow them.
 */
#ifndef GDDT_GDDT_DEVICE_H
#define GDDT_GDDT_DEVICE_H

#include <mpi.h>
#include <stdint.h>

#include "gddt/gddt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- datatypes as kernels walk them ----------------------------------------------------- */

#define GDDT_DEVICE_MAX_DIMS 8

typedef struct gddt_device_dim {
  int64_t count;
  int64_t stride; /* bytes; may be zero or negative */
} gddt_device_dim_t;

/* `block` contiguous bytes at offset + sum_d idx_d * dims[d].stride for every index tuple,
 * dims[0] varying fastest; its packed bytes start at packed_begin within one group. */
typedef struct gddt_device_piece {
  int64_t offset;
  int64_t block;
  int64_t packed_begin;
  int32_t ndims;
  int32_t reserved;
  gddt_device_dim_t dims[GDDT_DEVICE_MAX_DIMS];
} gddt_device_piece_t;

/* One element of a datatype, in device memory: gddt's canonical layout. Its packed stream is,
 * for every repeat index tuple (repeat[0] fastest), every piece in order, the piece offsets
 * shifted by sum_r idx_r * repeat[r].stride; element e of `count` starts at e * extent. The
 * packed bytes are exactly the MPI library's MPI_Pack output. */
typedef struct gddt_device_layout {
  int64_t size;        /* packed bytes of one element (MPI_Type_size) */
  int64_t extent;      /* the MPI extent: element e starts at e * extent */
  int64_t group_bytes; /* packed bytes of one pass over the pieces */
  int32_t npieces;
  int32_t nrepeat;
  int32_t width; /* widest access (1, 2, 4, 8 or 16 bytes) every offset, block and stride allows */
  int32_t reserved;
  gddt_device_dim_t repeat[GDDT_DEVICE_MAX_DIMS];
  gddt_device_piece_t pieces[1]; /* npieces of them */
} gddt_device_layout_t;

typedef struct gddt_device_type {
  const gddt_device_layout_t *layout; /* device memory, valid until gddt_device_type_free */
  uint32_t index;                     /* the proxy's table entry (the MPI datatype, for direct sends) */
  uint32_t reserved;
} gddt_device_type_t;

/* Element types and operations of gddt_allreduce (a kernel cannot name MPI's handles). */
typedef enum gddt_device_basic {
  GDDT_DEVICE_CHAR = 0,
  GDDT_DEVICE_INT = 1,
  GDDT_DEVICE_UNSIGNED = 2,
  GDDT_DEVICE_LONG_LONG = 3,
  GDDT_DEVICE_UNSIGNED_LONG_LONG = 4,
  GDDT_DEVICE_FLOAT = 5,
  GDDT_DEVICE_DOUBLE = 6,
  GDDT_DEVICE_BASIC_COUNT
} gddt_device_basic_t;

typedef enum gddt_device_reduce {
  GDDT_DEVICE_SUM = 0,
  GDDT_DEVICE_PROD = 1,
  GDDT_DEVICE_MIN = 2,
  GDDT_DEVICE_MAX = 3,
  GDDT_DEVICE_REDUCE_COUNT
} gddt_device_reduce_t;

/* ---- the ring ------------------------------------------------------------------------------
 * nslots slots. A request takes k consecutive tickets (k = staging slots it needs, at least 1);
 * ticket t lives in slot t % nslots and is free once slot_ticket[t % nslots] == t. They are
 * claimed with a compare-and-swap of *tail from t to t + k, made only once all k are free: a
 * thread never holds a ticket it has to wait for, so one that still holds earlier requests
 * cannot wait on itself (an atomicAdd would hand it ticket t + nslots behind its own ticket t),
 * and the proxy, which takes posts in ticket order, never waits on a claimed ticket that is
 * stuck behind a full ring. Its staging is slot_bytes * k bytes from
 * staging + (t % nslots) * slot_bytes: the staging holds 2 * nslots slots, so a request's
 * bytes are contiguous even where its tickets wrap. The device fills posts[t % nslots], makes
 * it visible system-wide (__threadfence_system), then writes its stamp (t + 1). The proxy takes
 * posts in ticket order (after a request of k tickets, the next post is at ticket t + k) and,
 * once the operation completes, fills completions[t % nslots] and writes its stamp (t + 1)
 * last. The waiting thread unpacks (receives), then sets slot_ticket[(t + i) % nslots] =
 * t + i + nslots for i < k, which frees the tickets for the next round. The packed operations
 * (one ticket) are the exception: the proxy writes completions[t % nslots] as soon as it has
 * copied the post, the poster then frees the ticket, and the operation completes in a
 * completion of its own (gddt_device_own.h). */

typedef enum gddt_device_op {
  GDDT_DEVICE_OP_SEND = 1,        /* packed bytes in the staging, MPI_PACKED */
  GDDT_DEVICE_OP_RECV = 2,        /* into the staging, unpacked by the waiter */
  GDDT_DEVICE_OP_SEND_DIRECT = 3, /* the proxy sends buffer/count/type through gddt */
  GDDT_DEVICE_OP_RECV_DIRECT = 4,
  GDDT_DEVICE_OP_BARRIER = 5,
  GDDT_DEVICE_OP_ALLREDUCE = 6, /* in place on the staging: `bytes` of basic `type` under `reduce` */
  /* Packed bytes in pinned host memory of the caller's (`buffer`, a host address), MPI_PACKED,
   * completed in a gddt_device_completion_t of the caller's (`count`: its host address); the
   * ring's completion of the ticket only says the proxy took the post, and the ticket is then
   * freed (start_packed in gddt_device_own.h). Stream-ordered messages, whose own kernels pack
   * and unpack them. */
  GDDT_DEVICE_OP_SEND_PACKED = 7,
  GDDT_DEVICE_OP_RECV_PACKED = 8
} gddt_device_op_t;

/* Written by the device, read by the proxy (mapped host memory). 64 bytes. */
typedef struct gddt_device_post {
  uint64_t stamp; /* ticket + 1, written last */
  uint32_t op;    /* gddt_device_op_t */
  uint32_t nslots;
  int32_t peer; /* destination or source (MPI_ANY_SOURCE allowed for receives) */
  int32_t tag;  /* MPI_ANY_TAG allowed for receives */
  uint32_t comm;   /* the proxy's communicator entry */
  uint32_t type;   /* direct ops: the proxy's datatype entry; allreduce: gddt_device_basic_t */
  uint64_t bytes;  /* send: packed bytes; receive: capacity; allreduce: bytes of the vector */
  uint64_t buffer; /* direct ops: the user's buffer (device address); packed ops: host address */
  int64_t count;   /* direct ops: elements of `type` */
  uint32_t reduce; /* allreduce: gddt_device_reduce_t */
  uint32_t reserved;
} gddt_device_post_t;

/* Written by the proxy, read by the device (mapped host memory). 32 bytes. */
typedef struct gddt_device_completion {
  uint64_t stamp; /* ticket + 1, written last */
  int32_t error;  /* MPI error class of the operation (MPI_SUCCESS, MPI_ERR_TRUNCATE, ...) */
  int32_t source;
  int32_t tag;
  int32_t reserved;
  int64_t bytes; /* received bytes (receives), else the bytes moved */
} gddt_device_completion_t;

/* What the waiter needs of a request it did not post itself (device memory, per slot). */
typedef struct gddt_device_pending {
  uint64_t ticket;
  uint32_t op;
  uint32_t nslots;
  void *buffer; /* receives: where to unpack; allreduce: the result */
  int64_t count;
  const gddt_device_layout_t *layout;
  int32_t peer;
  int32_t tag;
} gddt_device_pending_t;

typedef struct gddt_device_ring {
  unsigned long long *tail;                   /* device memory: next ticket */
  unsigned long long *slot_ticket;            /* device memory, nslots */
  gddt_device_pending_t *pending;             /* device memory, nslots */
  gddt_device_post_t *posts;                  /* mapped host memory, nslots */
  gddt_device_completion_t *completions;      /* mapped host memory, nslots */
  unsigned char *staging;                     /* mapped host memory, 2 * nslots * slot_bytes */
  uint32_t nslots;
  uint32_t slot_bytes;
  uint64_t timeout_ns;       /* GDDT_DEVICE_TIMEOUT; 0: wait for ever */
  uint64_t thread_pack_max;  /* GDDT_DEVICE_THREAD_PACK_MAX */
} gddt_device_ring_t;

typedef struct gddt_device_comm {
  gddt_device_ring_t ring; /* one per process, shared by every device communicator */
  uint32_t index;          /* the proxy's communicator entry */
  int32_t rank;
  int32_t size;
  int32_t tag_ub;
} gddt_device_comm_t;

/* A request a kernel holds: the first ticket; GDDT_DEVICE_REQUEST_NULL_TICKET once completed,
 * GDDT_DEVICE_REQUEST_PROC_NULL_TICKET for an operation with MPI_PROC_NULL (complete at once). */
typedef struct gddt_device_request {
  uint64_t ticket;
} gddt_device_request_t;
#define GDDT_DEVICE_REQUEST_NULL_TICKET (~(uint64_t)0)
#define GDDT_DEVICE_REQUEST_PROC_NULL_TICKET (~(uint64_t)1)

typedef struct gddt_device_status {
  int32_t source;
  int32_t tag;
  int32_t error;
  int32_t reserved;
  int64_t bytes; /* received bytes */
} gddt_device_status_t;

/* ---- host API (each returns an MPI error class, raised first like an MPI call's: on the
 * communicator's error handler, MPI_COMM_SELF's for the datatype calls and a null communicator) */

/* Device handle for `comm` (an intracommunicator): point-to-point goes on `comm` itself, so a
 * host rank receives a kernel's message with an ordinary MPI_Recv; the barrier and allreduce
 * use a private duplicate, never interfering with the host's collectives. Collective over comm.
 * Starts the proxy on first use. */
GDDT_EXPORT int gddt_device_comm_create(MPI_Comm comm, gddt_device_comm_t *out);
GDDT_EXPORT int gddt_device_comm_free(gddt_device_comm_t *comm);

/* Device handle for a committed datatype (its own duplicate: the caller may free `type`). */
GDDT_EXPORT int gddt_device_type_create(MPI_Datatype type, gddt_device_type_t *out);
GDDT_EXPORT int gddt_device_type_free(gddt_device_type_t *type);

/* Runs the proxy once when it has no thread of its own: takes posted requests, progresses and
 * completes them. *active (may be NULL) gets how many requests are still in flight. */
GDDT_EXPORT int gddt_device_progress(int *active);

/* Waits for `stream` (a cudaStream_t; NULL the legacy default stream) while running the proxy:
 * what a host thread without a proxy thread calls instead of cudaStreamSynchronize. */
GDDT_EXPORT int gddt_device_stream_synchronize(void *stream);

/* ---- stream-ordered host API (MPICH's MPIX_*_enqueue conventions) --------------------------- *
 * A stream communicator is a duplicate of `comm` bound to a CUDA stream; operations on it are
 * enqueued on that stream and happen in stream order, packing and unpacking included, and may
 * be captured into a CUDA graph and replayed. */
typedef struct gddt_stream_request_s *gddt_stream_request_t;

GDDT_EXPORT int gddt_stream_comm_create(MPI_Comm comm, void *stream, MPI_Comm *newcomm);
GDDT_EXPORT int gddt_send_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                                  MPI_Comm comm);
GDDT_EXPORT int gddt_recv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                                  MPI_Comm comm, MPI_Status *status);
GDDT_EXPORT int gddt_isend_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                                   MPI_Comm comm, gddt_stream_request_t *request);
GDDT_EXPORT int gddt_irecv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                                   MPI_Comm comm, gddt_stream_request_t *request);
GDDT_EXPORT int gddt_wait_enqueue(gddt_stream_request_t *request, MPI_Status *status);
GDDT_EXPORT int gddt_waitall_enqueue(int count, gddt_stream_request_t *requests, MPI_Status *statuses);

#ifdef __cplusplus
}
#endif

/* ---- device API (CUDA C++) --------------------------------------------------------------------
 * Every function returns an MPI error class to every calling thread. `scope` says who calls:
 * one thread, all 32 lanes of a warp, or every thread of the block, each with the same
 * arguments; a warp or block packs and unpacks with all of its threads. The protocol itself is
 * in gddt/gddt_device_core.h, plain C++ as well, so that host threads can play the kernel's part
 * in tests. A thread may hold at most GDDT_DEVICE_RING_SLOTS tickets at once: a request beyond
 * that waits for a slot that only its own wait would free (GDDT_DEVICE_TIMEOUT reports it). */
#if defined(__CUDACC__)
enum gddt_scope { GDDT_SCOPE_THREAD = 0, GDDT_SCOPE_WARP = 1, GDDT_SCOPE_BLOCK = 2 };

/* Implemented in gddt/gddt_device_impl.cuh, included below. */
__device__ int gddt_isend(const void *buf, int64_t count, gddt_device_type_t type, int dest, int tag,
                          gddt_device_comm_t comm, gddt_device_request_t *request,
                          gddt_scope scope = GDDT_SCOPE_THREAD);
__device__ int gddt_irecv(void *buf, int64_t count, gddt_device_type_t type, int source, int tag,
                          gddt_device_comm_t comm, gddt_device_request_t *request,
                          gddt_scope scope = GDDT_SCOPE_THREAD);
__device__ int gddt_wait(gddt_device_comm_t comm, gddt_device_request_t *request, gddt_device_status_t *status,
                         gddt_scope scope = GDDT_SCOPE_THREAD);
__device__ int gddt_waitall(gddt_device_comm_t comm, int count, gddt_device_request_t *requests,
                            gddt_device_status_t *statuses, gddt_scope scope = GDDT_SCOPE_THREAD);
__device__ int gddt_test(gddt_device_comm_t comm, gddt_device_request_t *request, int *flag,
                         gddt_device_status_t *status, gddt_scope scope = GDDT_SCOPE_THREAD);
__device__ int gddt_barrier(gddt_device_comm_t comm, gddt_scope scope = GDDT_SCOPE_THREAD);
__device__ int gddt_allreduce(const void *sendbuf, void *recvbuf, int count, gddt_device_basic_t type,
                              gddt_device_reduce_t op, gddt_device_comm_t comm, gddt_scope scope = GDDT_SCOPE_THREAD);

#include "gddt/gddt_device_impl.cuh"
#endif

#endif /* GDDT_GDDT_DEVICE_H */
