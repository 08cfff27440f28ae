// p2p_entry_points: the send modes, blocking and nonblocking, MPI_Sendrecv, MPI_Sendrecv_replace
// and persistent requests.
#include <mpi.h>

#include <string>
#include <vector>

#include "entry_points_cases.hpp"
#include "harness.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {

void send_recv(const Context& context, const TypeCatalog& types) {
  RingMessage message = vector_to_ints(context, types, 1);
  MPI_Status status;
  ring_in_order(
      context,
      [&] {
        P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), message.send.count(),
                                    message.send.type().type, context.next, message.index(),
                                    MPI_COMM_WORLD));
      },
      [&] {
        P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                                    message.recv.type().type, context.prev, message.index(),
                                    MPI_COMM_WORLD, &status));
      });
  message.check(&status, "MPI_Send -> MPI_Recv");
}

void isend_irecv_wait(const Context& context, const TypeCatalog& types) {
  RingMessage message = ints_to_face(context, types, 2);
  MPI_Request recv_request, send_request;
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), message.recv.count(),
                               message.recv.type().type, context.prev, message.index(),
                               MPI_COMM_WORLD, &recv_request));
  P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(),
                               message.send.type().type, context.next, message.index(),
                               MPI_COMM_WORLD, &send_request));
  P2P_EXPECT_SUCCESS(MPI_Wait(&recv_request, &status));
  P2P_EXPECT_SUCCESS(MPI_Wait(&send_request, MPI_STATUS_IGNORE));
  expect(recv_request == MPI_REQUEST_NULL && send_request == MPI_REQUEST_NULL,
         "MPI_Wait must set completed requests to MPI_REQUEST_NULL");
  message.check(&status, "MPI_Isend -> MPI_Irecv, MPI_Wait");
}

void ssend(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("indexed"), 5, types.named("struct_ints_gaps"), 11, 3);
  MPI_Status status;
  ring_in_order(
      context,
      [&] {
        P2P_EXPECT_SUCCESS(MPI_Ssend(message.send.address(), message.send.count(),
                                     message.send.type().type, context.next, message.index(),
                                     MPI_COMM_WORLD));
      },
      [&] {
        P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                                    message.recv.type().type, context.prev, message.index(),
                                    MPI_COMM_WORLD, &status));
      });
  message.check(&status, "MPI_Ssend -> MPI_Recv");
}

// A synchronous send cannot complete before its receive is posted, which happens only after
// the barrier here.
void issend(const Context& context, const TypeCatalog& types) {
  RingMessage message = vector_to_ints(context, types, 4);
  MPI_Request send_request, recv_request;
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Issend(message.send.address(), message.send.count(),
                                message.send.type().type, context.next, message.index(),
                                MPI_COMM_WORLD, &send_request));
  for (int attempt = 0; attempt < 10; ++attempt) {
    int done = 1;
    P2P_EXPECT_SUCCESS(MPI_Test(&send_request, &done, MPI_STATUS_IGNORE));
    expect(!done, "MPI_Issend completed before the receiver posted its receive");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), message.recv.count(),
                               message.recv.type().type, context.prev, message.index(),
                               MPI_COMM_WORLD, &recv_request));
  P2P_EXPECT_SUCCESS(MPI_Wait(&send_request, MPI_STATUS_IGNORE));
  P2P_EXPECT_SUCCESS(MPI_Wait(&recv_request, &status));
  message.check(&status, "MPI_Issend -> MPI_Irecv");
}

// A buffered send completes before its receive is posted (after the barrier).
void bsend(const Context& context, const TypeCatalog& types) {
  RingMessage message = ints_to_face(context, types, 5);
  AttachedBuffer attached({&message.send});
  P2P_EXPECT_SUCCESS(MPI_Bsend(message.send.address(), message.send.count(),
                               message.send.type().type, context.next, message.index(),
                               MPI_COMM_WORLD));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                              message.recv.type().type, context.prev, message.index(),
                              MPI_COMM_WORLD, &status));
  message.check(&status, "MPI_Bsend -> MPI_Recv");
}

void ibsend(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("subarray2d_column"), 2, types.named("vector_block4"), 2,
                      6);
  AttachedBuffer attached({&message.send});
  MPI_Request send_request;
  P2P_EXPECT_SUCCESS(MPI_Ibsend(message.send.address(), message.send.count(),
                                message.send.type().type, context.next, message.index(),
                                MPI_COMM_WORLD, &send_request));
  P2P_EXPECT_SUCCESS(MPI_Wait(&send_request, MPI_STATUS_IGNORE));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                              message.recv.type().type, context.prev, message.index(),
                              MPI_COMM_WORLD, &status));
  message.check(&status, "MPI_Ibsend -> MPI_Recv");
}

// Ready mode: the receive is posted before the barrier, the send after it.
void rsend(const Context& context, const TypeCatalog& types) {
  RingMessage message = vector_to_ints(context, types, 7);
  MPI_Request recv_request;
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), message.recv.count(),
                               message.recv.type().type, context.prev, message.index(),
                               MPI_COMM_WORLD, &recv_request));
  MPI_Barrier(MPI_COMM_WORLD);
  P2P_EXPECT_SUCCESS(MPI_Rsend(message.send.address(), message.send.count(),
                               message.send.type().type, context.next, message.index(),
                               MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Wait(&recv_request, &status));
  message.check(&status, "MPI_Rsend -> MPI_Irecv");
}

void irsend(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("struct_mixed"), 40, types.named("struct_mixed_packed"),
                      40, 8);
  MPI_Request requests[2];
  MPI_Status statuses[2];
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), message.recv.count(),
                               message.recv.type().type, context.prev, message.index(),
                               MPI_COMM_WORLD, &requests[0]));
  MPI_Barrier(MPI_COMM_WORLD);
  P2P_EXPECT_SUCCESS(MPI_Irsend(message.send.address(), message.send.count(),
                                message.send.type().type, context.next, message.index(),
                                MPI_COMM_WORLD, &requests[1]));
  P2P_EXPECT_SUCCESS(MPI_Waitall(2, requests, statuses));
  message.check(&statuses[0], "MPI_Irsend -> MPI_Irecv");
}

void sendrecv(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("subarray3d_face_y"), 2, types.named("subarray2d_row"),
                      8, 9);
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Sendrecv(
      message.send.address(), message.send.count(), message.send.type().type, context.next,
      message.index(), message.recv.address(), message.recv.count(), message.recv.type().type,
      context.prev, message.index(), MPI_COMM_WORLD, &status));
  message.check(&status, "MPI_Sendrecv");
}

// The buffer goes out along its typemap and the previous rank's data comes back into the same
// places; the gaps keep what they held.
void sendrecv_replace(const Context& context, const TypeCatalog& types) {
  const int tag = 10;
  TypedBuffer buffer(types.named("hvector_unaligned"), 5, context.memory,
                     message_seed(context, context.rank, -tag));
  buffer.fill(message_seed(context, context.rank, tag));
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Sendrecv_replace(buffer.address(), buffer.count(), buffer.type().type,
                                          context.next, tag, context.prev, tag, MPI_COMM_WORLD,
                                          &status));
  buffer.expect_message(message_seed(context, context.prev, tag), buffer.data_bytes(),
                        "MPI_Sendrecv_replace");
  expect_status(status, context.prev, tag, buffer.type().type, buffer.count(),
                "MPI_Sendrecv_replace");
}

// All five persistent kinds, started again and again on the same buffers with new contents.
void persistent(const Context& context, const TypeCatalog& types) {
  std::vector<RingMessage> messages;
  messages.push_back(vector_to_ints(context, types, 0));
  messages.push_back(ints_to_face(context, types, 1));
  messages.emplace_back(context, types.named("negative_lb"), 8, types.named("indexed_block"), 4, 2);
  messages.emplace_back(context, types.named("column_resized"), 100, types.named("int"), 300, 3);
  // Room for two copies: the space of the previous round's message may not be reclaimed yet.
  AttachedBuffer attached({&messages[2].send, &messages[2].send});

  using SendInit = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  const SendInit send_inits[] = {MPI_Send_init, MPI_Ssend_init, MPI_Bsend_init, MPI_Rsend_init};
  const char* const names[] = {"MPI_Send_init", "MPI_Ssend_init", "MPI_Bsend_init",
                               "MPI_Rsend_init"};
  std::vector<MPI_Request> recvs(4), sends(4);
  for (int i = 0; i < 4; ++i) {
    RingMessage& message = messages[i];
    P2P_EXPECT_SUCCESS(MPI_Recv_init(message.recv.address(), message.recv.count(),
                                     message.recv.type().type, context.prev, i, MPI_COMM_WORLD,
                                     &recvs[i]));
    P2P_EXPECT_SUCCESS(send_inits[i](message.send.address(), message.send.count(),
                                     message.send.type().type, context.next, i, MPI_COMM_WORLD,
                                     &sends[i]));
  }
  const int rounds = 4;
  for (int round = 0; round < rounds; ++round) {
    if (round > 0) {
      for (RingMessage& message : messages) message.renumber(message.index() + 4);
    }
    P2P_EXPECT_SUCCESS(MPI_Startall(4, recvs.data()));
    MPI_Barrier(MPI_COMM_WORLD);  // every receive is posted: ready mode is allowed
    if (round % 2 == 0) {
      P2P_EXPECT_SUCCESS(MPI_Start(&sends[0]));
      P2P_EXPECT_SUCCESS(MPI_Start(&sends[1]));
      P2P_EXPECT_SUCCESS(MPI_Startall(2, &sends[2]));
    } else {
      P2P_EXPECT_SUCCESS(MPI_Startall(4, sends.data()));  // device sends pack in one set
    }
    MPI_Status statuses[4];
    P2P_EXPECT_SUCCESS(MPI_Waitall(4, recvs.data(), statuses));
    P2P_EXPECT_SUCCESS(MPI_Waitall(4, sends.data(), MPI_STATUSES_IGNORE));
    for (int i = 0; i < 4; ++i) {
      expect(recvs[i] != MPI_REQUEST_NULL && sends[i] != MPI_REQUEST_NULL,
             "completing a persistent request must leave it allocated (inactive)");
      // The tag on the wire stays the one given to *_init; the message number moves on.
      const std::string what = std::string(names[i]) + " round " + std::to_string(round);
      messages[i].check(nullptr, what);
      expect_status(statuses[i], context.prev, i, messages[i].recv.type().type,
                    count_of(messages[i].recv.type(), messages[i].bytes()), what);
    }
  }
  for (int i = 0; i < 4; ++i) {
    P2P_EXPECT_SUCCESS(MPI_Request_free(&recvs[i]));
    P2P_EXPECT_SUCCESS(MPI_Request_free(&sends[i]));
    expect(recvs[i] == MPI_REQUEST_NULL && sends[i] == MPI_REQUEST_NULL,
           "MPI_Request_free must set the handle to MPI_REQUEST_NULL");
  }
}

}  // namespace gddt_test::p2p
