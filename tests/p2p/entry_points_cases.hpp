// What the cases of p2p_entry_points share, and the cases, each group declared by the file that
// holds it.
#pragma once

#include <mpi.h>

#include <functional>
#include <vector>

#include "harness.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {

// Rank 0 sends first and everybody else receives first, so blocking calls that wait for their
// partner (Ssend, or Send of a large message) cannot deadlock around the ring.
inline void ring_in_order(const Context& context, const std::function<void()>& send,
                          const std::function<void()>& recv) {
  if (context.rank == 0) {
    send();
    recv();
  } else {
    recv();
    send();
  }
}

// A vector sent, received as plain ints: different datatypes with the same signature.
inline RingMessage vector_to_ints(const Context& context, const TypeCatalog& types, int index) {
  return RingMessage(context, types.named("vector_block64"), 2, types.named("int"), 512, index);
}

// Plain ints sent, received into a face of a 3-D array.
inline RingMessage ints_to_face(const Context& context, const TypeCatalog& types, int index) {
  return RingMessage(context, types.named("int"), 3 * 96, types.named("subarray3d_face_x"), 3,
                     index);
}

// Room for Bsend: every message that may sit in the buffer at once.
class AttachedBuffer {
 public:
  AttachedBuffer(const std::vector<const TypedBuffer*>& messages) {
    int total = 0;
    for (const TypedBuffer* message : messages) {
      int packed = 0;
      MPI_Pack_size(message->count(), message->type().type, MPI_COMM_WORLD, &packed);
      total += packed + MPI_BSEND_OVERHEAD;
    }
    storage_.resize(total);
    P2P_EXPECT_SUCCESS(MPI_Buffer_attach(storage_.data(), total));
  }
  ~AttachedBuffer() {
    void* address = nullptr;
    int size = 0;
    MPI_Buffer_detach(&address, &size);  // waits until every buffered message has left
  }

 private:
  std::vector<char> storage_;
};

// Sends message `index` to the next rank in the background while `receive` takes the previous
// rank's one.
inline void with_ring_isend(const Context& context, RingMessage& message, const std::function<void()>& receive) {
  MPI_Request send_request;
  P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(),
                               message.send.type().type, context.next, message.index(),
                               MPI_COMM_WORLD, &send_request));
  receive();
  P2P_EXPECT_SUCCESS(MPI_Wait(&send_request, MPI_STATUS_IGNORE));
}

// entry_points_sends.cpp
void send_recv(const Context& context, const TypeCatalog& types);
void isend_irecv_wait(const Context& context, const TypeCatalog& types);
void ssend(const Context& context, const TypeCatalog& types);
void issend(const Context& context, const TypeCatalog& types);
void bsend(const Context& context, const TypeCatalog& types);
void ibsend(const Context& context, const TypeCatalog& types);
void rsend(const Context& context, const TypeCatalog& types);
void irsend(const Context& context, const TypeCatalog& types);
void sendrecv(const Context& context, const TypeCatalog& types);
void sendrecv_replace(const Context& context, const TypeCatalog& types);
void persistent(const Context& context, const TypeCatalog& types);

// entry_points_completion.cpp
void wait(const Context& context, const TypeCatalog& types);
void waitall(const Context& context, const TypeCatalog& types);
void waitany(const Context& context, const TypeCatalog& types);
void waitsome(const Context& context, const TypeCatalog& types);
void test(const Context& context, const TypeCatalog& types);
void testall(const Context& context, const TypeCatalog& types);
void testany(const Context& context, const TypeCatalog& types);
void testsome(const Context& context, const TypeCatalog& types);
void request_free_completed_persistent(const Context& context, const TypeCatalog& types);
void request_free_active_send(const Context& context, const TypeCatalog& types);
void request_get_status(const Context& context, const TypeCatalog& types);
void cancel_receive(const Context& context, const TypeCatalog& types);
void cancel_send(const Context& context, const TypeCatalog& types);

// entry_points_probe.cpp
void probe(const Context& context, const TypeCatalog& types);
void iprobe(const Context& context, const TypeCatalog& types);
void mprobe_mrecv(const Context& context, const TypeCatalog& types);
void improbe_imrecv(const Context& context, const TypeCatalog& types);
void get_count_get_elements(const Context& context, const TypeCatalog& types);

#if MPI_VERSION >= 4
// entry_points_large_count.cpp
void large_count_sends(const Context& context, const TypeCatalog& types);
void large_count_persistent(const Context& context, const TypeCatalog& types);
void large_count_exchanges(const Context& context, const TypeCatalog& types);
void large_count_beyond_int(const Context& context, const TypeCatalog&);
void large_count_pack(const Context& context, const TypeCatalog& types);
#endif  // MPI_VERSION >= 4

}  // namespace gddt_test::p2p
