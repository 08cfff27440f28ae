/*
 * Operations with staging and a completion of their own, beside the ring of gddt's device API
 * (gddt_device_core.h): stream-ordered MPI posts every nonblocking message this way, so that an
 * operation waited for long after its post holds no ring slot. Include gddt/gddt_device.h first.
 */
#ifndef GDDT_GDDT_DEVICE_OWN_H
#define GDDT_GDDT_DEVICE_OWN_H

#include "gddt/gddt_device_core.h"

namespace gddt::device {

// A message whose packed bytes are in pinned host memory of the caller's (`staging`, a host
// address the proxy hands to MPI as MPI_PACKED; the caller packs before and unpacks after) and
// whose completion is its own (`completion`; `completion_host` is the proxy's address of it).
// Its ring ticket only orders it among the posts: the proxy says it took the post through the
// ring's completion of the ticket, and the ticket is freed at once, so an operation waited for
// much later holds no slot, and a caller's unwaited operations never hold the slots its next
// claim needs (stream-ordered operations, whose wait may be enqueued after many other posts).
template <class Group>
GDDT_HD int start_packed(const Group &g, bool receive, void *staging, uint64_t bytes, int peer, int tag,
                         const gddt_device_comm_t &comm, gddt_device_completion_t *completion,
                         gddt_device_completion_t *completion_host) {
  if (check_comm(comm) != MPI_SUCCESS) return MPI_ERR_COMM;
  const gddt_device_ring_t &ring = comm.ring;
  if (g.rank() == 0) store_release(&completion->stamp, 0);
  PostSpec spec{};
  spec.op = receive ? GDDT_DEVICE_OP_RECV_PACKED : GDDT_DEVICE_OP_SEND_PACKED;
  spec.peer = peer;
  spec.tag = tag;
  spec.comm = comm.index;
  spec.bytes = bytes;
  spec.buffer = staging;
  spec.count = static_cast<int64_t>(reinterpret_cast<uintptr_t>(completion_host));
  uint64_t t = 0;
  const int posted = post(
      g, comm, spec, [](unsigned char *) {}, &t);
  if (posted != MPI_SUCCESS) return posted;
  // No timeout here: the proxy takes posts in ticket order as they come, and a ticket left
  // claimed would stop every later claim of the process once the tail came round to it.
  if (g.rank() == 0) {
    const gddt_device_completion_t &taken = ring.completions[t % ring.nslots];
    while (load_acquire(&taken.stamp) != t + 1) backoff();
    store_release(&ring.slot_ticket[t % ring.nslots], t + ring.nslots);
  }
  g.sync();
  return MPI_SUCCESS;
}

// Waits for the completion of a start_packed operation; *gave_up says the timeout ended it
// (MPI may then still use the staging).
template <class Group>
GDDT_HD int wait_packed(const Group &g, const gddt_device_comm_t &comm, const gddt_device_completion_t *completion,
                        gddt_device_status_t *status, bool *gave_up) {
  int timeout = 0;
  if (g.rank() == 0) {
    const uint64_t start = now_ns();
    while (load_acquire(&completion->stamp) == 0) {
      if (timed_out(comm.ring, start)) {
        printf("gddt: device request with staging of its own not complete after %llu ns\n",
               static_cast<unsigned long long>(comm.ring.timeout_ns));
        timeout = 1;
        break;
      }
      backoff();
    }
  }
  *gave_up = g.share(static_cast<uint64_t>(timeout)) != 0;
  if (*gave_up) return MPI_ERR_OTHER;
  // Fresh loads: the completion is mapped host memory the proxy rewrites between operations.
  const bool leader = g.rank() == 0;
  const uint32_t error_word = leader ? static_cast<uint32_t>(load_fresh(&completion->error)) : 0;
  const int error = static_cast<int>(static_cast<int32_t>(g.share(error_word)));
  const int64_t bytes =
      static_cast<int64_t>(g.share(leader ? static_cast<uint64_t>(load_fresh(&completion->bytes)) : 0));
  const uint64_t source_tag =
      g.share(leader ? (static_cast<uint64_t>(static_cast<uint32_t>(load_fresh(&completion->source))) << 32) |
                           static_cast<uint32_t>(load_fresh(&completion->tag))
                     : 0);
  if (status != nullptr) {
    status->source = static_cast<int32_t>(source_tag >> 32);
    status->tag = static_cast<int32_t>(source_tag & 0xffffffffu);
    status->error = error;
    status->bytes = bytes;
  }
  return error;
}

}  // namespace gddt::device

#endif /* GDDT_GDDT_DEVICE_OWN_H */
