/*
 * The kernel's half of gddt's device API, written once for CUDA and for host
 * C++: the same claim, pack, post, wait and unpack code runs in kernels
 * (gddt_device_impl.cuh instantiates it for a thread, a warp and a block) and
 * in host threads that stand in for kernels in tests. The ring protocol it
 * follows is described in gddt/gddt_device.h. Include that header first.
 */
#ifndef GDDT_GDDT_DEVICE_CORE_H
#define GDDT_GDDT_DEVICE_CORE_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#if !defined(__CUDA_ARCH__)
#include <chrono>
#include <thread>
#endif

#include "gddt/gddt_device.h"
#include "gddt/gddt_device_walk.h"

namespace gddt::device {

// ---- memory operations between the calling threads and the proxy
// ---------------------------- Device: volatile accesses with system-scope
// fences (the ring is mapped host memory the host writes concurrently). Host:
// the compiler's atomics.

GDDT_HD inline uint64_t load_acquire(const uint64_t *p) {
#if defined(__CUDA_ARCH__)
  const uint64_t v = *static_cast<const volatile uint64_t *>(p);
  __threadfence_system();
  return v;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

GDDT_HD inline unsigned long long load_acquire(const unsigned long long *p) {
#if defined(__CUDA_ARCH__)
  const unsigned long long v = *static_cast<const volatile unsigned long long *>(p);
  __threadfence_system();
  return v;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

GDDT_HD inline void store_release(unsigned long long *p, unsigned long long v) {
#if defined(__CUDA_ARCH__)
  __threadfence_system();
  *static_cast<volatile unsigned long long *>(p) = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

GDDT_HD inline void store_release(uint64_t *p, uint64_t v) {
#if defined(__CUDA_ARCH__)
  __threadfence_system();
  *static_cast<volatile uint64_t *>(p) = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

GDDT_HD inline bool compare_exchange(unsigned long long *p, unsigned long long expected, unsigned long long desired) {
#if defined(__CUDA_ARCH__)
  return atomicCAS(p, expected, desired) == expected;
#else
  return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#endif
}

// Makes this thread's writes (packed bytes, the post) visible to the host
// before later ones.
GDDT_HD inline void fence_system() {
#if defined(__CUDA_ARCH__)
  __threadfence_system();
#else
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

GDDT_HD inline uint64_t now_ns() {
#if defined(__CUDA_ARCH__)
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
#endif
}

// Between polls: lets the proxy (or, on a GPU, the other warps) run.
GDDT_HD inline void backoff() {
#if defined(__CUDA_ARCH__)
  __nanosleep(200);
#else
  std::this_thread::yield();
#endif
}

// The threads of one call as seen on the host: a single thread. The GPU's
// thread, warp and block groups (gddt_device_impl.cuh) offer the same four
// members.
struct SoloGroup {
  GDDT_HD int rank() const { return 0; }
  GDDT_HD int size() const { return 1; }
  GDDT_HD void sync() const {}
  GDDT_HD uint64_t share(uint64_t v) const { return v; }
};

// ---- requests
// ---------------------------------------------------------------------------------

GDDT_HD inline const char *op_name(uint32_t op) {
  switch (op) {
    case GDDT_DEVICE_OP_SEND:
      return "send";
    case GDDT_DEVICE_OP_RECV:
      return "recv";
    case GDDT_DEVICE_OP_SEND_DIRECT:
      return "send (direct)";
    case GDDT_DEVICE_OP_RECV_DIRECT:
      return "recv (direct)";
    case GDDT_DEVICE_OP_BARRIER:
      return "barrier";
    case GDDT_DEVICE_OP_ALLREDUCE:
      return "allreduce";
    case GDDT_DEVICE_OP_SEND_PACKED:
      return "send (own staging)";
    case GDDT_DEVICE_OP_RECV_PACKED:
      return "recv (own staging)";
  }
  return "?";
}

GDDT_HD inline int basic_size(int basic) {
  switch (basic) {
    case GDDT_DEVICE_CHAR:
      return 1;
    case GDDT_DEVICE_INT:
    case GDDT_DEVICE_UNSIGNED:
    case GDDT_DEVICE_FLOAT:
      return 4;
    case GDDT_DEVICE_LONG_LONG:
    case GDDT_DEVICE_UNSIGNED_LONG_LONG:
    case GDDT_DEVICE_DOUBLE:
      return 8;
  }
  return 0;
}

GDDT_HD inline unsigned char *staging_of(const gddt_device_ring_t &ring, uint64_t ticket) {
  return ring.staging + (ticket % ring.nslots) * static_cast<uint64_t>(ring.slot_bytes);
}

GDDT_HD inline bool timed_out(const gddt_device_ring_t &ring, uint64_t start) {
  return ring.timeout_ns != 0 && now_ns() - start > ring.timeout_ns;
}

// The leader's claim of k consecutive free tickets (see the ring's comment in
// gddt_device.h).
GDDT_HD inline int claim(const gddt_device_ring_t &ring, uint32_t k, uint64_t *ticket) {
  const uint64_t start = now_ns();
  for (;;) {
    const unsigned long long t = load_acquire(ring.tail);
    bool free = true;
    for (uint32_t i = 0; i < k && free; ++i) free = load_acquire(&ring.slot_ticket[(t + i) % ring.nslots]) == t + i;
    if (free && compare_exchange(ring.tail, t, t + k)) {
      *ticket = t;
      return MPI_SUCCESS;
    }
    if (timed_out(ring, start)) {
      printf(
          "gddt: device request waited %llu ns for %u free ring slot(s) at "
          "ticket %llu (every slot is held by a "
          "request not yet waited for)\n",
          static_cast<unsigned long long>(ring.timeout_ns), k, t);
      return MPI_ERR_OTHER;
    }
    backoff();
  }
}

// What one post says, before its tickets are known.
struct PostSpec {
  uint32_t op;
  int32_t peer;
  int32_t tag;
  uint32_t comm;
  uint32_t type;
  uint64_t bytes;
  void *buffer;
  int64_t count;
  uint32_t reduce;
  const gddt_device_layout_t *layout;
};

GDDT_HD inline uint32_t slots_for(const gddt_device_ring_t &ring, uint32_t op, uint64_t bytes) {
  if (op != GDDT_DEVICE_OP_SEND && op != GDDT_DEVICE_OP_RECV && op != GDDT_DEVICE_OP_ALLREDUCE) return 1;
  const uint64_t k = (bytes + ring.slot_bytes - 1) / ring.slot_bytes;
  return k == 0 ? 1 : static_cast<uint32_t>(k);
}

// Claims the tickets, lets `fill` write the staging with every lane, and posts.
// Returns the error class to every lane; *ticket is the first ticket.
template <class Group, class Fill>
GDDT_HD int post(const Group &g, const gddt_device_comm_t &comm, const PostSpec &spec, Fill fill, uint64_t *ticket) {
  const gddt_device_ring_t &ring = comm.ring;
  const uint32_t k = slots_for(ring, spec.op, spec.bytes);
  uint64_t t = 0;
  int rc = MPI_SUCCESS;
  if (g.rank() == 0) rc = claim(ring, k, &t);
  rc = static_cast<int>(g.share(static_cast<uint64_t>(rc)));
  if (rc != MPI_SUCCESS) return rc;
  t = g.share(t);
  fill(staging_of(ring, t));
  fence_system();
  g.sync();
  if (g.rank() == 0) {
    const uint32_t s = static_cast<uint32_t>(t % ring.nslots);
    gddt_device_pending_t &pending = ring.pending[s];
    pending.ticket = t;
    pending.op = spec.op;
    pending.nslots = k;
    pending.buffer = spec.buffer;
    pending.count = spec.count;
    pending.layout = spec.layout;
    pending.peer = spec.peer;
    pending.tag = spec.tag;
    gddt_device_post_t &p = ring.posts[s];
    p.op = spec.op;
    p.nslots = k;
    p.peer = spec.peer;
    p.tag = spec.tag;
    p.comm = spec.comm;
    p.type = spec.type;
    p.bytes = spec.bytes;
    p.buffer = reinterpret_cast<uint64_t>(spec.buffer);
    p.count = spec.count;
    p.reduce = spec.reduce;
    store_release(&p.stamp, t + 1);
  }
  *ticket = t;
  return MPI_SUCCESS;
}

GDDT_HD inline int check_comm(const gddt_device_comm_t &comm) {
  return comm.ring.tail == nullptr || comm.size <= 0 ? MPI_ERR_COMM : MPI_SUCCESS;
}

// MPI's argument checks of a point-to-point call, in MPI's order.
GDDT_HD inline int check_p2p(const gddt_device_comm_t &comm, int64_t count, const gddt_device_type_t &type, int peer,
                             int tag, bool receive) {
  if (check_comm(comm) != MPI_SUCCESS) return MPI_ERR_COMM;
  if (count < 0) return MPI_ERR_COUNT;
  if (type.layout == nullptr) return MPI_ERR_TYPE;
  if (!(tag >= 0 && tag <= comm.tag_ub) && !(receive && tag == MPI_ANY_TAG)) return MPI_ERR_TAG;
  if (!(peer >= 0 && peer < comm.size) && peer != MPI_PROC_NULL && !(receive && peer == MPI_ANY_SOURCE))
    return MPI_ERR_RANK;
  return MPI_SUCCESS;
}

// Staged (packed by the calling threads) or direct: the staging's capacity
// bounds a message, and a lone thread packs only small ones.
template <class Group>
GDDT_HD bool goes_direct(const Group &g, const gddt_device_ring_t &ring, uint64_t bytes) {
  return bytes > static_cast<uint64_t>(ring.nslots) * ring.slot_bytes ||
         (g.size() == 1 && bytes > ring.thread_pack_max);
}

template <class Group>
GDDT_HD int start_p2p(const Group &g, bool receive, void *buf, int64_t count, const gddt_device_type_t &type, int peer,
                      int tag, const gddt_device_comm_t &comm, gddt_device_request_t *request) {
  const int rc = check_p2p(comm, count, type, peer, tag, receive);
  if (rc != MPI_SUCCESS) return rc;
  if (peer == MPI_PROC_NULL) {
    request->ticket = GDDT_DEVICE_REQUEST_PROC_NULL_TICKET;
    return MPI_SUCCESS;
  }
  const gddt_device_layout_t &layout = *type.layout;
  const uint64_t bytes = static_cast<uint64_t>(count) * static_cast<uint64_t>(layout.size);
  const bool direct = goes_direct(g, comm.ring, bytes);
  PostSpec spec{};
  spec.op = direct ? (receive ? GDDT_DEVICE_OP_RECV_DIRECT : GDDT_DEVICE_OP_SEND_DIRECT)
                   : (receive ? GDDT_DEVICE_OP_RECV : GDDT_DEVICE_OP_SEND);
  spec.peer = peer;
  spec.tag = tag;
  spec.comm = comm.index;
  spec.type = type.index;
  spec.bytes = bytes;
  spec.buffer = buf;
  spec.count = count;
  spec.layout = type.layout;
  const bool pack = !direct && !receive;
  uint64_t t = 0;
  const int posted = post(
      g, comm, spec,
      [&](unsigned char *staging) {
        if (pack) move_window(layout, buf, staging, static_cast<int64_t>(bytes), true, g.rank(), g.size());
      },
      &t);
  if (posted == MPI_SUCCESS) request->ticket = t;
  return posted;
}

GDDT_HD inline void proc_null_status(gddt_device_status_t *status) {
  if (status == nullptr) return;
  status->source = MPI_PROC_NULL;
  status->tag = MPI_ANY_TAG;
  status->error = MPI_SUCCESS;
  status->bytes = 0;
}

// Completes request `t` whose completion the leader has seen (done = true) or
// not (the leader polls until it comes, or the timeout). Every lane gets the
// error class.
template <class Group>
GDDT_HD int finish(const Group &g, const gddt_device_comm_t &comm, gddt_device_request_t *request,
                   gddt_device_status_t *status, bool poll) {
  const gddt_device_ring_t &ring = comm.ring;
  const uint64_t t = request->ticket;
  const uint32_t s = static_cast<uint32_t>(t % ring.nslots);
  const gddt_device_completion_t &c = ring.completions[s];
  const gddt_device_pending_t &pending = ring.pending[s];
  int timeout = 0;
  if (g.rank() == 0 && poll) {
    const uint64_t start = now_ns();
    while (load_acquire(&c.stamp) != t + 1) {
      if (timed_out(ring, start)) {
        printf(
            "gddt: device request ticket %llu (%s, peer %d, tag %d, %llu "
            "bytes) not complete after %llu ns\n",
            static_cast<unsigned long long>(t), op_name(pending.op), pending.peer, pending.tag,
            static_cast<unsigned long long>(ring.posts[s].bytes), static_cast<unsigned long long>(ring.timeout_ns));
        timeout = 1;
        break;
      }
      backoff();
    }
  }
  if (g.share(static_cast<uint64_t>(timeout)) != 0) return MPI_ERR_OTHER;
  const int error = static_cast<int>(static_cast<int32_t>(g.share(g.rank() == 0 ? static_cast<uint32_t>(c.error) : 0)));
  const int64_t bytes = static_cast<int64_t>(g.share(g.rank() == 0 ? static_cast<uint64_t>(c.bytes) : 0));
  const uint64_t source_tag = g.share(g.rank() == 0 ? (static_cast<uint64_t>(static_cast<uint32_t>(c.source)) << 32) |
                                                          static_cast<uint32_t>(c.tag)
                                                    : 0);
  if (error == MPI_SUCCESS && pending.op == GDDT_DEVICE_OP_RECV)
    move_window(*pending.layout, pending.buffer, staging_of(ring, t), bytes, false, g.rank(), g.size());
  if (error == MPI_SUCCESS && pending.op == GDDT_DEVICE_OP_ALLREDUCE)
    copy_bytes(pending.buffer, staging_of(ring, t), bytes, g.rank(), g.size());
  fence_system();
  g.sync();
  if (g.rank() == 0) {
    // The first slot goes last: once it is free another caller may claim it and rewrite its
    // pending record, nslots included.
    const uint32_t nslots = pending.nslots;
    for (uint32_t i = nslots; i-- > 0;) store_release(&ring.slot_ticket[(t + i) % ring.nslots], t + i + ring.nslots);
  }
  if (status != nullptr) {
    status->source = static_cast<int32_t>(source_tag >> 32);
    status->tag = static_cast<int32_t>(source_tag & 0xffffffffu);
    status->error = error;
    status->bytes = bytes;
  }
  g.sync();
  request->ticket = GDDT_DEVICE_REQUEST_NULL_TICKET;
  return error;
}

template <class Group>
GDDT_HD int wait(const Group &g, const gddt_device_comm_t &comm, gddt_device_request_t *request,
                 gddt_device_status_t *status) {
  if (request->ticket == GDDT_DEVICE_REQUEST_PROC_NULL_TICKET) {
    proc_null_status(status);
    g.sync();
    request->ticket = GDDT_DEVICE_REQUEST_NULL_TICKET;
    return MPI_SUCCESS;
  }
  if (request->ticket == GDDT_DEVICE_REQUEST_NULL_TICKET) {
    if (status != nullptr) *status = gddt_device_status_t{MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
    return MPI_SUCCESS;
  }
  if (check_comm(comm) != MPI_SUCCESS) return MPI_ERR_COMM;
  return finish(g, comm, request, status, true);
}

template <class Group>
GDDT_HD int test(const Group &g, const gddt_device_comm_t &comm, gddt_device_request_t *request, int *flag,
                 gddt_device_status_t *status) {
  const uint64_t t = request->ticket;
  if (t == GDDT_DEVICE_REQUEST_NULL_TICKET || t == GDDT_DEVICE_REQUEST_PROC_NULL_TICKET) {
    *flag = 1;
    return wait(g, comm, request, status);
  }
  if (check_comm(comm) != MPI_SUCCESS) return MPI_ERR_COMM;
  const gddt_device_completion_t &c = comm.ring.completions[t % comm.ring.nslots];
  const uint64_t done = g.share(g.rank() == 0 ? static_cast<uint64_t>(load_acquire(&c.stamp) == t + 1) : 0);
  g.sync();
  *flag = static_cast<int>(done);
  return done != 0 ? finish(g, comm, request, status, false) : MPI_SUCCESS;
}

// MPI_Waitall's contract: MPI_ERR_IN_STATUS when any request failed, each
// status its own error.
template <class Group>
GDDT_HD int waitall(const Group &g, const gddt_device_comm_t &comm, int count, gddt_device_request_t *requests,
                    gddt_device_status_t *statuses) {
  if (count < 0) return MPI_ERR_COUNT;
  int failed = 0;
  for (int i = 0; i < count; ++i) {
    gddt_device_status_t st{};
    if (wait(g, comm, &requests[i], &st) != MPI_SUCCESS) failed = 1;
    if (statuses != nullptr) statuses[i] = st;
  }
  return failed != 0 ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

template <class Group>
GDDT_HD int barrier(const Group &g, const gddt_device_comm_t &comm) {
  if (check_comm(comm) != MPI_SUCCESS) return MPI_ERR_COMM;
  PostSpec spec{};
  spec.op = GDDT_DEVICE_OP_BARRIER;
  spec.comm = comm.index;
  gddt_device_request_t request{};
  const int rc = post(
      g, comm, spec, [](unsigned char *) {}, &request.ticket);
  return rc != MPI_SUCCESS ? rc : wait(g, comm, &request, nullptr);
}

// sendbuf == recvbuf (or null) reduces in place.
template <class Group>
GDDT_HD int allreduce(const Group &g, const void *sendbuf, void *recvbuf, int count, int basic, int reduce,
                      const gddt_device_comm_t &comm) {
  if (check_comm(comm) != MPI_SUCCESS) return MPI_ERR_COMM;
  if (count < 0) return MPI_ERR_COUNT;
  if (basic < 0 || basic >= GDDT_DEVICE_BASIC_COUNT) return MPI_ERR_TYPE;
  if (reduce < 0 || reduce >= GDDT_DEVICE_REDUCE_COUNT) return MPI_ERR_OP;
  if (count > 0 && recvbuf == nullptr) return MPI_ERR_BUFFER;
  const uint64_t bytes = static_cast<uint64_t>(count) * basic_size(basic);
  if (bytes > static_cast<uint64_t>(comm.ring.nslots) * comm.ring.slot_bytes) return MPI_ERR_COUNT;
  PostSpec spec{};
  spec.op = GDDT_DEVICE_OP_ALLREDUCE;
  spec.comm = comm.index;
  spec.type = static_cast<uint32_t>(basic);
  spec.reduce = static_cast<uint32_t>(reduce);
  spec.bytes = bytes;
  spec.buffer = recvbuf;
  spec.count = count;
  const void *from = sendbuf != nullptr ? sendbuf : recvbuf;
  gddt_device_request_t request{};
  const int rc = post(
      g, comm, spec,
      [&](unsigned char *staging) { copy_bytes(staging, from, static_cast<int64_t>(bytes), g.rank(), g.size()); },
      &request.ticket);
  return rc != MPI_SUCCESS ? rc : wait(g, comm, &request, nullptr);
}

}  // namespace gddt::device

#endif /* GDDT_GDDT_DEVICE_CORE_H */
