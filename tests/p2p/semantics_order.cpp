// p2p_semantics: non-overtaking, among messages of one tag and behind sends gddt may hold back.
#include <mpi.h>

#include <string>
#include <vector>

#include "harness.hpp"
#include "mpi/entry_points.hpp"
#include "ring.hpp"
#include "semantics_cases.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {

// Non-overtaking: many messages with one tag, large and small mixed, arrive in sending order
// however the receives are posted. A pipelined large message must not let a later small one
// pass it.
void message_order(const Context& context, const TypeCatalog& types) {
  const int count = 200;
  const int tag = 3;
  std::vector<RingMessage> messages;
  messages.reserve(count);
  for (int i = 0; i < count; ++i) {
    if (i % 25 == 0) {  // 2 MiB
      messages.emplace_back(context, types.named("vector_block4k"), 128, types.named("int"), 524288,
                            i);
    } else if (i % 5 == 0) {  // 64 KiB
      messages.emplace_back(context, types.named("vector_block4"), 256,
                            types.named("subarray2d_column"), 256, i);
    } else {  // a few bytes
      messages.emplace_back(context, types.named("indexed"), i % 3, types.named("int"),
                            11 * (i % 3), i);
    }
  }
  std::vector<MPI_Request> requests;
  for (RingMessage& message : messages) {
    requests.emplace_back();
    // Every fourth send in synchronous mode, the rest in standard mode.
    auto send = message.index() % 4 == 3 ? MPI_Issend : MPI_Isend;
    P2P_EXPECT_SUCCESS(send(message.send.address(), message.send.count(), message.send.type().type,
                            context.next, tag, MPI_COMM_WORLD, &requests.back()));
  }
  // Receives: the first half posted at once, the next quarter blocking, the rest posted at once.
  std::vector<MPI_Status> statuses(count);
  std::vector<MPI_Request> recv_requests(count, MPI_REQUEST_NULL);
  for (int i = 0; i < count; ++i) {
    RingMessage& message = messages[i];
    if (i >= count / 2 && i < 3 * count / 4) {
      P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                                  message.recv.type().type, context.prev, tag, MPI_COMM_WORLD,
                                  &statuses[i]));
    } else {
      P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), message.recv.count(),
                                   message.recv.type().type, context.prev, tag, MPI_COMM_WORLD,
                                   &recv_requests[i]));
    }
  }
  std::vector<MPI_Status> recv_statuses(count);
  P2P_EXPECT_SUCCESS(MPI_Waitall(count, recv_requests.data(), recv_statuses.data()));
  P2P_EXPECT_SUCCESS(
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  for (int i = 0; i < count; ++i) {
    const bool blocking = i >= count / 2 && i < 3 * count / 4;
    const RingMessage& message = messages[i];
    const std::string what =
        "message " + std::to_string(i) + " of " + std::to_string(count) + " with one tag";
    message.recv.expect_message(message_seed(context, context.prev, i), message.bytes(), what);
    expect_status(blocking ? statuses[i] : recv_statuses[i], context.prev, tag,
                  message.recv.type().type, count_of(message.recv.type(), message.bytes()), what);
  }
}

// Sends of a derived type that gddt may hold back until their packs are done (a started
// persistent send, a nonblocking send) and then sends that gddt passes to the library at once
// (count 0), all with one tag: the later ones must not overtake the earlier ones.
void order_behind_forwarded(const Context& context, const TypeCatalog& types) {
  const TypeCase& vector = types.named("vector_block64");
  const int tag = 5;
  RingMessage message(context, vector, 64, vector, 64, tag);
  MPI_Request persistent, requests[2];
  P2P_EXPECT_SUCCESS(MPI_Send_init(message.send.address(), message.send.count(), vector.type, context.next,
                                   tag, MPI_COMM_WORLD, &persistent));
  P2P_EXPECT_SUCCESS(MPI_Start(&persistent));
  P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(), vector.type, context.next,
                               tag, MPI_COMM_WORLD, &requests[0]));
  P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), 0, vector.type, context.next, tag, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), 0, vector.type, context.next, tag, MPI_COMM_WORLD,
                               &requests[1]));
  const char* const order[] = {"the first of four messages with one tag (persistent)",
                               "the second (nonblocking)", "the third (empty)", "the fourth (empty)"};
  for (int i = 0; i < 4; ++i) {
    MPI_Status status;
    P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(), vector.type, context.prev,
                                tag, MPI_COMM_WORLD, &status));
    if (i < 2) {
      message.check(&status, order[i]);
    } else {
      expect_status(status, context.prev, tag, vector.type, 0, order[i]);
    }
  }
  P2P_EXPECT_SUCCESS(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
  P2P_EXPECT_SUCCESS(MPI_Wait(&persistent, MPI_STATUS_IGNORE));
  P2P_EXPECT_SUCCESS(MPI_Request_free(&persistent));
}

#if GDDT_HAVE_MPI_Isendrecv
// MPI-4's MPI_Isendrecv and MPI_Isendrecv_replace send too: behind a nonblocking send that gddt
// may hold back, with the same tag, their message must not overtake it. Plain ints: MPICH 4.0.2
// releases the derived datatypes an MPI_Isendrecv is given when it completes, with or without
// gddt (docs/usage.md).
void order_behind_isendrecv(const Context& context, const TypeCatalog& types) {
  const TypeCase& ints = types.named("int");
  const int tag = 6;
  for (const bool replace : {false, true}) {
    const std::string how = replace ? "MPI_Isendrecv_replace" : "MPI_Isendrecv";
    RingMessage first(context, ints, 4096, ints, 4096, 1), second(context, ints, 4096, ints, 4096, 2);
    MPI_Request requests[3];
    MPI_Status statuses[3];
    P2P_EXPECT_SUCCESS(MPI_Isend(first.send.address(), 4096, ints.type, context.next, tag, MPI_COMM_WORLD,
                                 &requests[0]));
    if (replace) {
      P2P_EXPECT_SUCCESS(MPI_Isendrecv_replace(second.send.address(), 4096, ints.type, context.next, tag,
                                               context.prev, tag, MPI_COMM_WORLD, &requests[1]));
    } else {
      P2P_EXPECT_SUCCESS(MPI_Isendrecv(second.send.address(), 4096, ints.type, context.next, tag,
                                       first.recv.address(), 4096, ints.type, context.prev, tag, MPI_COMM_WORLD,
                                       &requests[1]));
    }
    P2P_EXPECT_SUCCESS(
        MPI_Irecv(second.recv.address(), 4096, ints.type, context.prev, tag, MPI_COMM_WORLD, &requests[2]));
    P2P_EXPECT_SUCCESS(MPI_Waitall(3, requests, statuses));
    const TypedBuffer& received_first = replace ? second.send : first.recv;
    received_first.expect_message(message_seed(context, context.prev, first.index()), first.bytes(),
                                  how + " receives the message sent before it");
    second.recv.expect_message(message_seed(context, context.prev, second.index()), second.bytes(),
                               how + "'s own message, second");
    expect_status(statuses[2], context.prev, tag, ints.type, 4096, how + "'s own message, second");
  }
}
#endif

}  // namespace gddt_test::p2p
