// What the standard promises around the data: MPI_PROC_NULL, zero counts, wildcards, ignored
// statuses, message order, truncation and untouched receive gaps.
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "mpi/entry_points.hpp"
#include "mpi_quirks.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

// A receive from MPI_PROC_NULL: source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0. When the MPI
// library underneath is measured to get source and tag wrong itself, only the count counts.
void expect_proc_null_status(const MPI_Status& status, MPI_Datatype type, const std::string& what,
                             bool library_gets_it_wrong = false) {
  if (library_gets_it_wrong &&
      (status.MPI_SOURCE != MPI_PROC_NULL || status.MPI_TAG != MPI_ANY_TAG)) {
    note(what + " from MPI_PROC_NULL: status source " + std::to_string(status.MPI_SOURCE) +
         ", tag " + std::to_string(status.MPI_TAG) +
         "; the MPI library does the same by itself (measured through PMPI), not counted");
    int count = -1;
    P2P_EXPECT_SUCCESS(MPI_Get_count(&status, type, &count));
    expect(count == 0, what + " (MPI_PROC_NULL): MPI_Get_count " + std::to_string(count));
    return;
  }
  expect_status(status, MPI_PROC_NULL, MPI_ANY_TAG, type, 0, what + " (MPI_PROC_NULL)");
}

void proc_null(const Context& context, const TypeCatalog& types) {
  const TypeCase& type = types.named("subarray3d_face_x");
  const MPI_Datatype datatype = type.type;
  TypedBuffer send(type, 2, context.memory, context.seed);
  send.fill(message_seed(context, context.rank, 0));
  TypedBuffer recv(type, 2, context.memory, ~context.seed);
  MPI_Status status;
  MPI_Request request;

  P2P_EXPECT_SUCCESS(MPI_Send(send.address(), 2, datatype, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Ssend(send.address(), 2, datatype, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Rsend(send.address(), 2, datatype, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Bsend(send.address(), 2, datatype, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(
      MPI_Isend(send.address(), 2, datatype, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &request));
  P2P_EXPECT_SUCCESS(MPI_Wait(&request, MPI_STATUS_IGNORE));

  P2P_EXPECT_SUCCESS(
      MPI_Recv(recv.address(), 2, datatype, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &status));
  expect_proc_null_status(status, datatype, "MPI_Recv");
  P2P_EXPECT_SUCCESS(
      MPI_Irecv(recv.address(), 2, datatype, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &request));
  P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
  expect_proc_null_status(status, datatype, "MPI_Irecv + MPI_Wait",
                          mpi_quirks().proc_null_irecv_status);
  P2P_EXPECT_SUCCESS(MPI_Sendrecv(send.address(), 2, datatype, MPI_PROC_NULL, 1, recv.address(), 2,
                                  datatype, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &status));
  expect_proc_null_status(status, datatype, "MPI_Sendrecv");
  P2P_EXPECT_SUCCESS(MPI_Sendrecv_replace(recv.address(), 2, datatype, MPI_PROC_NULL, 1,
                                          MPI_PROC_NULL, 1, MPI_COMM_WORLD, &status));
  expect_proc_null_status(status, datatype, "MPI_Sendrecv_replace");

  P2P_EXPECT_SUCCESS(MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &status));
  expect_proc_null_status(status, datatype, "MPI_Probe");
  int found = 0;
  P2P_EXPECT_SUCCESS(MPI_Iprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &found, &status));
  expect(found, "MPI_Iprobe(MPI_PROC_NULL) must find a message at once");
  expect_proc_null_status(status, datatype, "MPI_Iprobe");
  MPI_Message message;
  P2P_EXPECT_SUCCESS(MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &message, &status));
  expect(message == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL) must give MPI_MESSAGE_NO_PROC");
  expect_proc_null_status(status, datatype, "MPI_Mprobe");
  P2P_EXPECT_SUCCESS(MPI_Mrecv(recv.address(), 2, datatype, &message, &status));
  expect_proc_null_status(status, datatype, "MPI_Mrecv");
  P2P_EXPECT_SUCCESS(MPI_Improbe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &found, &message, &status));
  expect(found && message == MPI_MESSAGE_NO_PROC,
         "MPI_Improbe(MPI_PROC_NULL) must find MPI_MESSAGE_NO_PROC at once");
  P2P_EXPECT_SUCCESS(MPI_Imrecv(recv.address(), 2, datatype, &message, &request));
  P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
  expect_proc_null_status(status, datatype, "MPI_Imrecv");

  MPI_Request persistent[2];
  P2P_EXPECT_SUCCESS(
      MPI_Send_init(send.address(), 2, datatype, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &persistent[0]));
  P2P_EXPECT_SUCCESS(
      MPI_Recv_init(recv.address(), 2, datatype, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &persistent[1]));
  for (int round = 0; round < 2; ++round) {
    MPI_Status statuses[2];
    P2P_EXPECT_SUCCESS(MPI_Startall(2, persistent));
    P2P_EXPECT_SUCCESS(MPI_Waitall(2, persistent, statuses));
    expect_proc_null_status(statuses[1], datatype, "MPI_Recv_init + MPI_Start",
                            mpi_quirks().proc_null_persistent_status);
  }
  P2P_EXPECT_SUCCESS(MPI_Request_free(&persistent[0]));
  P2P_EXPECT_SUCCESS(MPI_Request_free(&persistent[1]));

  send.expect_unchanged("send to MPI_PROC_NULL");
  recv.expect_unchanged("receive from MPI_PROC_NULL");
}

// Empty messages still match, carry their tag and source, and write nothing.
void zero_count(const Context& context, const TypeCatalog& types) {
  const TypeCase& vector = types.named("vector_block64");
  TypedBuffer send(vector, 0, context.memory, context.seed);
  TypedBuffer recv(vector, 4, context.memory, ~context.seed);
  MPI_Status status;
  MPI_Request requests[2];

  // An empty message into a receive with room for four elements.
  P2P_EXPECT_SUCCESS(
      MPI_Irecv(recv.address(), 4, vector.type, context.prev, 1, MPI_COMM_WORLD, &requests[0]));
  P2P_EXPECT_SUCCESS(MPI_Send(send.address(), 0, vector.type, context.next, 1, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Wait(&requests[0], &status));
  expect_status(status, context.prev, 1, vector.type, 0, "empty message, receive count 4");
  recv.expect_unchanged("empty message, receive count 4");

  // Zero-count receives, from a real buffer and from NULL, of a derived and a basic type.
  P2P_EXPECT_SUCCESS(
      MPI_Irecv(recv.address(), 0, vector.type, context.prev, 2, MPI_COMM_WORLD, &requests[0]));
  P2P_EXPECT_SUCCESS(
      MPI_Isend(send.address(), 0, vector.type, context.next, 2, MPI_COMM_WORLD, &requests[1]));
  MPI_Status statuses[2];
  P2P_EXPECT_SUCCESS(MPI_Waitall(2, requests, statuses));
  expect_status(statuses[0], context.prev, 2, vector.type, 0, "MPI_Isend/MPI_Irecv, count 0");
  for (MPI_Datatype type : {vector.type, MPI_INT}) {
    P2P_EXPECT_SUCCESS(MPI_Irecv(nullptr, 0, type, context.prev, 3, MPI_COMM_WORLD, &requests[0]));
    P2P_EXPECT_SUCCESS(MPI_Ssend(nullptr, 0, type, context.next, 3, MPI_COMM_WORLD));
    P2P_EXPECT_SUCCESS(MPI_Wait(&requests[0], &status));
    expect_status(status, context.prev, 3, type, 0, "MPI_Ssend from NULL, count 0");
  }
  P2P_EXPECT_SUCCESS(MPI_Sendrecv(nullptr, 0, vector.type, context.next, 4, recv.address(), 0,
                                  vector.type, context.prev, 4, MPI_COMM_WORLD, &status));
  expect_status(status, context.prev, 4, vector.type, 0, "MPI_Sendrecv, count 0");
  recv.expect_unchanged("zero-count receives");
}

// Every rank sends one message to every other rank; receives name no source.
void any_source(const Context& context, const TypeCatalog& types) {
  const TypeCase& send_type = types.named("subarray2d_interior_f");
  const TypeCase& recv_type = types.named("indexed_block");  // 6 ints; the face has 1064
  const int others = context.size - 1;
  const int tag = 5;
  std::vector<TypedBuffer> sends, recvs;
  std::vector<MPI_Request> requests;
  for (int i = 0; i < others; ++i) {
    recvs.emplace_back(recv_type, 1064 / 6 + 1, context.memory, mix_seed(context.seed, i));
    requests.emplace_back();
    P2P_EXPECT_SUCCESS(MPI_Irecv(recvs.back().address(), recvs.back().count(), recv_type.type,
                                 MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &requests.back()));
  }
  for (int peer = 0; peer < context.size; ++peer) {
    if (peer == context.rank) continue;
    sends.emplace_back(send_type, 1, context.memory, mix_seed(context.seed, peer + 100));
    sends.back().fill(message_seed(context, context.rank, peer));
    requests.emplace_back();
    P2P_EXPECT_SUCCESS(MPI_Isend(sends.back().address(), 1, send_type.type, peer, tag,
                                 MPI_COMM_WORLD, &requests.back()));
  }
  std::vector<MPI_Status> statuses(requests.size());
  P2P_EXPECT_SUCCESS(
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data()));
  std::vector<int> seen(context.size, 0);
  for (int i = 0; i < others; ++i) {
    const int source = statuses[i].MPI_SOURCE;
    if (source < 0 || source >= context.size || source == context.rank) {
      fail("MPI_ANY_SOURCE receive reports source " + std::to_string(source));
      continue;
    }
    ++seen[source];
    const std::string what = "MPI_ANY_SOURCE receive from rank " + std::to_string(source);
    expect_status(statuses[i], source, tag, recv_type.type, MPI_UNDEFINED, what);
    recvs[i].expect_message(message_seed(context, source, context.rank), send_type.size, what);
  }
  for (int peer = 0; peer < context.size; ++peer) {
    if (peer == context.rank) continue;
    expect(seen[peer] == 1, "rank " + std::to_string(peer) + " matched " +
                                std::to_string(seen[peer]) + " MPI_ANY_SOURCE receives");
  }
  for (const TypedBuffer& send : sends) send.expect_unchanged("MPI_ANY_SOURCE send");
}

// Messages from one sender with different tags, received with MPI_ANY_TAG, arrive in the order
// they were sent.
void any_tag(const Context& context, const TypeCatalog& types) {
  const int tags[] = {7, 3, 9, 1, 5, 0};
  std::vector<RingMessage> messages;
  for (int tag : tags) {
    messages.emplace_back(context, types.named("struct_ints_gaps"), 3 + tag,
                          types.named("vector_block4"), 1, tag);
  }
  std::vector<MPI_Request> requests(messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    RingMessage& message = messages[i];
    P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(),
                                 message.send.type().type, context.next, message.index(),
                                 MPI_COMM_WORLD, &requests[i]));
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    RingMessage& message = messages[i];
    MPI_Status status;
    // With two ranks the only sender is known, so the source can be a wildcard too.
    const int source = context.size == 2 && i % 2 == 1 ? MPI_ANY_SOURCE : context.prev;
    P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                                message.recv.type().type, source, MPI_ANY_TAG, MPI_COMM_WORLD,
                                &status));
    message.check(&status, "MPI_ANY_TAG receive " + std::to_string(i));
  }
  P2P_EXPECT_SUCCESS(
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

// MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE wherever a status is written.
void status_ignore(const Context& context, const TypeCatalog& types) {
  std::vector<RingMessage> messages;
  for (int i = 0; i < 7; ++i) {
    messages.emplace_back(context, types.named("vector_block64"), 1, types.named("int"), 256, i);
  }
  auto isend = [&](RingMessage& message, MPI_Request* request) {
    P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(),
                                 message.send.type().type, context.next, message.index(),
                                 MPI_COMM_WORLD, request));
  };
  auto irecv = [&](RingMessage& message, MPI_Request* request) {
    P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), message.recv.count(),
                                 message.recv.type().type, context.prev, message.index(),
                                 MPI_COMM_WORLD, request));
  };
  std::vector<MPI_Request> sends(messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) isend(messages[i], &sends[i]);

  P2P_EXPECT_SUCCESS(MPI_Recv(messages[0].recv.address(), messages[0].recv.count(), MPI_INT,
                              context.prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  MPI_Request request;
  irecv(messages[1], &request);
  P2P_EXPECT_SUCCESS(MPI_Wait(&request, MPI_STATUS_IGNORE));
  MPI_Request pair[2];
  irecv(messages[2], &pair[0]);
  irecv(messages[3], &pair[1]);
  P2P_EXPECT_SUCCESS(MPI_Waitall(2, pair, MPI_STATUSES_IGNORE));
  irecv(messages[4], &request);
  int index = -1;
  P2P_EXPECT_SUCCESS(MPI_Waitany(1, &request, &index, MPI_STATUS_IGNORE));
  irecv(messages[5], &request);
  poll_until(
      [&] {
        int done = 0;
        P2P_EXPECT_SUCCESS(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
        return done != 0;
      },
      "MPI_Test(MPI_STATUS_IGNORE) loop");
  MPI_Message message;
  P2P_EXPECT_SUCCESS(MPI_Mprobe(context.prev, 6, MPI_COMM_WORLD, &message, MPI_STATUS_IGNORE));
  P2P_EXPECT_SUCCESS(MPI_Mrecv(messages[6].recv.address(), messages[6].recv.count(), MPI_INT,
                               &message, MPI_STATUS_IGNORE));
  P2P_EXPECT_SUCCESS(
      MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE));
  for (const RingMessage& ring_message : messages) {
    ring_message.check(nullptr, "receive with MPI_STATUS_IGNORE");
  }

  RingMessage exchanged(context, types.named("indexed"), 4, types.named("int"), 44, 7);
  P2P_EXPECT_SUCCESS(MPI_Sendrecv(
      exchanged.send.address(), exchanged.send.count(), exchanged.send.type().type, context.next,
      exchanged.index(), exchanged.recv.address(), exchanged.recv.count(), MPI_INT, context.prev,
      exchanged.index(), MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  exchanged.check(nullptr, "MPI_Sendrecv with MPI_STATUS_IGNORE");
}

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

#if GDDT_HAVE_MPI_Psend_init
// MPI-4's partitioned communication: four send partitions readied out of order by MPI_Pready,
// MPI_Pready_range and MPI_Pready_list, received as two, one of which MPI_Parrived reports before
// the receive completes; every byte lands as the library alone would place it, in each of two
// rounds of the same requests, for types whose partitions' spans overlap or leave gaps.
void partitioned(const Context& context, const TypeCatalog& types) {
  constexpr int kSendPartitions = 4, kRecvPartitions = 2, kPerPartition = 6, kCount = kSendPartitions * kPerPartition;
  int index = 40;
  for (const char* name : {"vector_block4", "struct_mixed", "negative_lb", "subarray3d_face_x"}) {
    const TypeCase& type = types.named(name);
    RingMessage message(context, type, kCount, type, kCount, ++index);
    const int tag = message.index();
    MPI_Request send = MPI_REQUEST_NULL, recv = MPI_REQUEST_NULL;
    P2P_EXPECT_SUCCESS(MPI_Precv_init(message.recv.address(), kRecvPartitions, kCount / kRecvPartitions, type.type,
                                      context.prev, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &recv));
    P2P_EXPECT_SUCCESS(MPI_Psend_init(message.send.address(), kSendPartitions, kPerPartition, type.type,
                                      context.next, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &send));
    for (int round = 0; round < 2; ++round) {
      const std::string what = std::string("partitioned ") + name + ", round " + std::to_string(round);
      if (round > 0) message.renumber(message.index() + 1000);  // other bytes, same requests and tag
      P2P_EXPECT_SUCCESS(MPI_Start(&recv));
      P2P_EXPECT_SUCCESS(MPI_Start(&send));
      P2P_EXPECT_SUCCESS(MPI_Pready(3, send));
      int listed[] = {2, 0};
      P2P_EXPECT_SUCCESS(MPI_Pready_list(2, listed, send));
      P2P_EXPECT_SUCCESS(MPI_Pready_range(1, 1, send));
      int arrived = 0;
      while (!arrived) P2P_EXPECT_SUCCESS(MPI_Parrived(recv, 1, &arrived));
      P2P_EXPECT_SUCCESS(MPI_Wait(&send, MPI_STATUS_IGNORE));
      P2P_EXPECT_SUCCESS(MPI_Wait(&recv, MPI_STATUS_IGNORE));
      message.check(nullptr, what);
    }
    P2P_EXPECT_SUCCESS(MPI_Request_free(&send));
    P2P_EXPECT_SUCCESS(MPI_Request_free(&recv));
  }
}

// Bad arguments to the partitioned calls get the error class the library gives the same call
// (through PMPI, on the same requests), and the requests then still deliver their message.
void partitioned_errors(const Context& context, const TypeCatalog& types) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const WorldErrorCounter world_errors;  // where the library raises request errors on MPI_COMM_WORLD
  const TypeCase& vector = types.named("vector_block64");
  constexpr int kPartitions = 4, kPerPartition = 2, kCount = kPartitions * kPerPartition;
  auto error_class = [](int code) {
    int error = MPI_SUCCESS;
    MPI_Error_class(code, &error);
    return error;
  };
  auto expect_library_class = [&](int code, int library_code, const std::string& what) {
    expect(code != MPI_SUCCESS && error_class(code) == error_class(library_code),
           what + ": error class " + std::to_string(error_class(code)) + ", the library's " +
               std::to_string(error_class(library_code)));
  };
  RingMessage message(context, vector, kCount, vector, kCount, 60);
  MPI_Request bad = MPI_REQUEST_NULL, library_bad = MPI_REQUEST_NULL;
  expect_library_class(
      MPI_Psend_init(message.send.address(), 0, kPerPartition, vector.type, context.next, 60, comm, MPI_INFO_NULL, &bad),
      PMPI_Psend_init(message.send.address(), 0, kPerPartition, vector.type, context.next, 60, comm, MPI_INFO_NULL,
                      &library_bad),
      "MPI_Psend_init of no partitions");
  expect_library_class(
      MPI_Precv_init(message.recv.address(), kPartitions, -1, vector.type, context.prev, 60, comm, MPI_INFO_NULL, &bad),
      PMPI_Precv_init(message.recv.address(), kPartitions, -1, vector.type, context.prev, 60, comm, MPI_INFO_NULL,
                      &library_bad),
      "MPI_Precv_init of a negative count");
  MPI_Request send = MPI_REQUEST_NULL, recv = MPI_REQUEST_NULL;
  P2P_EXPECT_SUCCESS(MPI_Precv_init(message.recv.address(), kPartitions, kPerPartition, vector.type, context.prev, 60,
                                    comm, MPI_INFO_NULL, &recv));
  P2P_EXPECT_SUCCESS(MPI_Psend_init(message.send.address(), kPartitions, kPerPartition, vector.type, context.next, 60,
                                    comm, MPI_INFO_NULL, &send));
  P2P_EXPECT_SUCCESS(MPI_Start(&recv));
  P2P_EXPECT_SUCCESS(MPI_Start(&send));
  expect_library_class(MPI_Pready(kPartitions, send), PMPI_Pready(kPartitions, send), "MPI_Pready past the last");
  expect_library_class(MPI_Pready_range(1, kPartitions + 3, send), PMPI_Pready_range(1, kPartitions + 3, send),
                       "MPI_Pready_range past the last");
  int negative[] = {-3};
  expect_library_class(MPI_Pready_list(1, negative, send), PMPI_Pready_list(1, negative, send),
                       "MPI_Pready_list of a negative partition");
  int flag = 0;
  expect_library_class(MPI_Parrived(recv, kPartitions + 1, &flag), PMPI_Parrived(recv, kPartitions + 1, &flag),
                       "MPI_Parrived past the last");
  P2P_EXPECT_SUCCESS(MPI_Pready_range(0, kPartitions - 1, send));
  P2P_EXPECT_SUCCESS(MPI_Wait(&send, MPI_STATUS_IGNORE));
  P2P_EXPECT_SUCCESS(MPI_Wait(&recv, MPI_STATUS_IGNORE));
  message.check(nullptr, "partitioned after bad arguments");
  P2P_EXPECT_SUCCESS(MPI_Request_free(&send));
  P2P_EXPECT_SUCCESS(MPI_Request_free(&recv));
  MPI_Comm_free(&comm);
}
#endif

// A receive freed with MPI_Request_free while active still receives: once a later message from
// the same sender, with the same tag, has been received, the earlier one has arrived too
// (non-overtaking), and its data must be in place as without gddt, not only at some later call.
void freed_receive_lands(const Context& context, const TypeCatalog& types) {
  const TypeCase& vector = types.named("vector_block64");
  const int tag = 8;
  RingMessage freed(context, vector, 2, vector, 2, 1), later(context, vector, 2, vector, 2, 2);
  MPI_Request request;
  P2P_EXPECT_SUCCESS(
      MPI_Irecv(freed.recv.address(), 2, vector.type, context.prev, tag, MPI_COMM_WORLD, &request));
  P2P_EXPECT_SUCCESS(MPI_Request_free(&request));
  MPI_Request sends[2];
  P2P_EXPECT_SUCCESS(MPI_Isend(freed.send.address(), 2, vector.type, context.next, tag, MPI_COMM_WORLD, &sends[0]));
  P2P_EXPECT_SUCCESS(MPI_Isend(later.send.address(), 2, vector.type, context.next, tag, MPI_COMM_WORLD, &sends[1]));
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Recv(later.recv.address(), 2, vector.type, context.prev, tag, MPI_COMM_WORLD, &status));
  freed.recv.expect_message(message_seed(context, context.prev, freed.index()), freed.bytes(),
                            "a freed receive, once a later message from its sender has arrived");
  P2P_EXPECT_SUCCESS(MPI_Waitall(2, sends, MPI_STATUSES_IGNORE));
}

// A send and a receive still pending when their communicator is freed complete, and the message
// arrives whole: MPI frees a communicator once its operations are done. (Between gddt peers the
// message may be a marker whose header and bytes travel on the communicator's private twins, and
// a device send of 2 MiB and more may lend its buffer: the twins must outlive the free.) Rank 0
// sends, rank 1 receives, each freeing a duplicate of MPI_COMM_WORLD before its wait.
void freed_communicator_delivers(const Context& context, const TypeCatalog& types) {
  const TypeCase& vector = types.named("vector_block64");
  const int count = 2048;  // 2 MiB packed, in a 3 MiB buffer
  RingMessage message(context, vector, count, vector, count, 1);
  const int tag = message.index();
  MPI_Comm comm = MPI_COMM_NULL;
  P2P_EXPECT_SUCCESS(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  if (context.rank == 0) {
    MPI_Request request;
    P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), count, vector.type, context.next, tag, comm, &request));
    P2P_EXPECT_SUCCESS(MPI_Comm_free(&comm));
    P2P_EXPECT_SUCCESS(MPI_Wait(&request, MPI_STATUS_IGNORE));
    return;
  }
  if (context.rank == 1) {
    MPI_Request request;
    MPI_Status status;
    P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), count, vector.type, context.prev, tag, comm, &request));
    P2P_EXPECT_SUCCESS(MPI_Comm_free(&comm));
    P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
    message.check(&status, "a message whose sender and receiver freed the communicator before their waits");
    return;
  }
  P2P_EXPECT_SUCCESS(MPI_Comm_free(&comm));
}

// Messages of 2 MiB between buffers of allocations of their own, each side's layout another of
// the same signature (64-byte blocks, 4-byte words, contiguous, a 3-D face), each pair in rounds
// back to back: with CUDA IPC on device memory the direct plane moves them, the receiver reading
// or the sender writing (GDDT_PEER_DIRECTION), each send waiting in MPI_Send while its receiver,
// active from the round before, resolves it.
void lent_layouts_cross(const Context& context, const TypeCatalog& types) {
  struct Pair {
    const char* send;
    int send_count;
    const char* recv;
    int recv_count;
  };
  const Pair pairs[] = {{"vector_block64", 2048, "vector_block4", 8192},
                        {"vector_block4", 8192, "int", 1 << 19},
                        {"int", 1 << 19, "subarray3d_face_y", 4096},
                        {"subarray3d_face_y", 4096, "vector_block64", 2048}};
  int index = 0;
  for (const Pair& pair : pairs) {
    const TypeCase& send_type = types.named(pair.send);
    const TypeCase& recv_type = types.named(pair.recv);
    for (int round = 0; round < 3; ++round) {
      RingMessage message(context, send_type, pair.send_count, recv_type, pair.recv_count, ++index);
      MPI_Request request;
      MPI_Status status;
      P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), pair.recv_count, recv_type.type, context.prev,
                                   message.index(), MPI_COMM_WORLD, &request));
      P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), pair.send_count, send_type.type, context.next,
                                  message.index(), MPI_COMM_WORLD));
      P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
      message.check(&status, std::string(pair.send) + " into " + pair.recv + ", round " + std::to_string(round));
    }
  }
}

// gddt counts what it does (gddt_counter, looked up so that a preloaded gddt serves too): every
// side of a derived-type message it examines counts once, and a receive it stages (every
// memory kind, GDDT_P2P_HOST=gddt) counts as staged (a send of the peer protocol counts as its
// plane); an unknown name is refused.
void counters_count_sides(const Context& context, const TypeCatalog& types) {
  using CounterFunction = int (*)(const char*, long long*);
  const auto counter = reinterpret_cast<CounterFunction>(dlsym(RTLD_DEFAULT, "gddt_counter"));
  expect(counter != nullptr, "gddt_counter is exported");
  if (counter == nullptr) return;
  const char* const staged[] = {"p2p.device-bytes.sides", "p2p.device-staged.sides", "p2p.host-span.sides",
                                "p2p.host-staged.sides", "p2p.peer-inline.sides", "p2p.peer-ipc.sides",
                                "p2p.peer-staged.sides"};
  auto sum = [&](bool with_forward) {
    long long total = 0, value = 0;
    for (const char* name : staged) total += counter(name, &value) == 0 ? value : 0;
    if (with_forward && counter("p2p.forward.sides", &value) == 0) total += value;
    return total;
  };
  const long long sides_before = sum(true), staged_before = sum(false);
  const TypeCase& vector = types.named("vector_block64");
  RingMessage message(context, vector, 2, vector, 2, 1);
  MPI_Request request;
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), 2, vector.type, context.prev, message.index(),
                               MPI_COMM_WORLD, &request));
  P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), 2, vector.type, context.next, message.index(),
                              MPI_COMM_WORLD));
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
  message.check(&status, "the counted message");
  expect(sum(true) - sides_before == 2,
         "both sides counted, got " + std::to_string(sum(true) - sides_before));
  expect(sum(false) - staged_before >= 1, "the receive counted as staged");
  long long value = 0;
  expect(counter("no.such.counter", &value) != 0, "an unknown counter refused");
}

// A size setting as the tests give it: digits and an optional K or M.
long long size_setting(const char* name, long long otherwise) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return otherwise;
  char* unit = nullptr;
  const long long value = std::strtoll(text, &unit, 10);
  return *unit == 'K' ? value << 10 : *unit == 'M' ? value << 20 : value;
}

// Between gddt peers the staged plane sends a message larger than the part size both sides agree
// on (GDDT_STAGING_CHUNK raised to GDDT_STAGING_CHUNK_MIN, here alike on every rank) as that many
// data messages, and the receiver puts them back together. A message of 9 bytes, which peers always
// send through the protocol, tells whether it is on.
void staged_parts_counted(const Context& context, const TypeCatalog& types) {
  using CounterFunction = int (*)(const char*, long long*);
  const auto counter = reinterpret_cast<CounterFunction>(dlsym(RTLD_DEFAULT, "gddt_counter"));
  expect(counter != nullptr, "gddt_counter is exported");
  if (counter == nullptr) return;
  auto value_of = [&](const char* name) {
    long long value = 0;
    return counter(name, &value) == 0 ? value : 0;
  };
  const long long inline_before = value_of("p2p.peer-inline.sides");
  char nine[9] = {}, nine_in[9];
  P2P_EXPECT_SUCCESS(MPI_Sendrecv(nine, 9, MPI_BYTE, context.next, 1, nine_in, 9, MPI_BYTE, context.prev, 1,
                                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  const bool protocol_on = value_of("p2p.peer-inline.sides") > inline_before;
  const long long staged_before = value_of("p2p.peer-staged.sides"), ipc_before = value_of("p2p.peer-ipc.sides");
  const long long parts_before = value_of("peer.staged.parts");
  const long long pack_ns_before = value_of("peer.send.pack.ns"), header_ns_before = value_of("peer.recv.header.ns");
  const long long move_ns_before = value_of("peer.recv.move.ns");
  const TypeCase& vector = types.named("vector_block64");  // 1 KiB an element
  constexpr int kCount = 1000;
  RingMessage message(context, vector, kCount, vector, kCount, 2);
  MPI_Request request;
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), kCount, vector.type, context.prev, message.index(),
                               MPI_COMM_WORLD, &request));
  P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), kCount, vector.type, context.next, message.index(),
                              MPI_COMM_WORLD));
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
  message.check(&status, "the message in parts");
  if (!protocol_on) return;
  const bool staged = value_of("p2p.peer-staged.sides") > staged_before;
  expect(staged || value_of("p2p.peer-ipc.sides") > ipc_before,
         "a message of 1,000 KiB between peers took the staged plane or CUDA IPC");
  // The stages' time counters count under GDDT_STATS=1 only.
  const char* stats = std::getenv("GDDT_STATS");
  const bool timing = stats != nullptr && std::string(stats) == "1";
  const bool timed = value_of("peer.send.pack.ns") > pack_ns_before && value_of("peer.recv.header.ns") > header_ns_before &&
                     value_of("peer.recv.move.ns") > move_ns_before;
  const bool untimed = value_of("peer.send.pack.ns") == pack_ns_before &&
                       value_of("peer.recv.header.ns") == header_ns_before;
  expect(timing ? timed : untimed, timing ? "GDDT_STATS=1: the packing, header and moving stages were timed"
                                          : "without GDDT_STATS=1 no stage was timed");
  if (!staged) return;
  const long long part =
      std::max(size_setting("GDDT_STAGING_CHUNK", 4LL << 20), size_setting("GDDT_STAGING_CHUNK_MIN", 64LL << 10));
  const long long want = (message.bytes() + part - 1) / part, got = value_of("peer.staged.parts") - parts_before;
  expect(got == want, "sent in " + std::to_string(got) + " parts of " + std::to_string(part) + " bytes, expected " +
                          std::to_string(want));
}

// MPI_BOTTOM with a datatype of absolute addresses (MPI_Get_address of the buffer, as Fortran
// codes and struct-of-arrays codes build them), on both sides: every third int of the sender's
// buffer lands in every other int of the receiver's, gaps untouched.
void bottom_with_absolute_addresses(const Context& context, const TypeCatalog&) {
  constexpr int kInts = 300;
  std::vector<int> image(kInts), poison(kInts, -1);
  for (int i = 0; i < kInts; ++i) image[static_cast<std::size_t>(i)] = context.rank * 100000 + i;
  gddt_test::Buffer send(context.memory, kInts * sizeof(int)), receive(context.memory, kInts * sizeof(int));
  send.upload(image.data(), image.size() * sizeof(int));
  receive.upload(poison.data(), poison.size() * sizeof(int));
  MPI_Aint send_at = 0, receive_at = 0;
  MPI_Get_address(send.data(), &send_at);
  MPI_Get_address(receive.data(), &receive_at);
  MPI_Datatype every_third, every_other, from_bottom, to_bottom;
  MPI_Type_vector(kInts / 3, 1, 3, MPI_INT, &every_third);
  MPI_Type_vector(kInts / 3, 1, 2, MPI_INT, &every_other);
  const int one = 1;
  MPI_Type_create_hindexed(1, &one, &send_at, every_third, &from_bottom);
  MPI_Type_create_hindexed(1, &one, &receive_at, every_other, &to_bottom);
  MPI_Type_commit(&from_bottom);
  MPI_Type_commit(&to_bottom);
  MPI_Request request;
  P2P_EXPECT_SUCCESS(MPI_Irecv(MPI_BOTTOM, 1, to_bottom, context.prev, 31, MPI_COMM_WORLD, &request));
  P2P_EXPECT_SUCCESS(MPI_Send(MPI_BOTTOM, 1, from_bottom, context.next, 31, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Wait(&request, MPI_STATUS_IGNORE));
  std::vector<int> got(kInts);
  receive.download(got.data(), got.size() * sizeof(int));
  std::vector<int> want = poison;
  for (int k = 0; k < kInts / 3; ++k) want[static_cast<std::size_t>(2 * k)] = context.prev * 100000 + 3 * k;
  expect(got == want, "the absolute-address message from MPI_BOTTOM landed at MPI_BOTTOM's addresses");
  for (MPI_Datatype* type : {&every_third, &every_other, &from_bottom, &to_bottom}) MPI_Type_free(type);
}

// A message longer than the receive buffer gives MPI_ERR_TRUNCATE through the error handler of
// its communicator (here one that returns errors), writes nothing outside the receive typemap,
// and the ranks go on afterwards.
void truncation(const Context& context, const TypeCatalog& types) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const WorldErrorCounter world_errors;  // instead of aborting, if an error lands there
  const TypeCase& gaps = types.named("struct_ints_gaps");  // 5 ints in 40 bytes
  const TypeCase& vector = types.named("vector_block4");   // 64 ints
  auto error_class = [](int code) {
    int error = MPI_SUCCESS;
    MPI_Error_class(code, &error);
    return error;
  };
  // `from_request`: the error was found completing a request (MPI_Wait, MPI_Waitall).
  int world_calls_seen = 0;
  auto expect_error = [&](int code, int expected_class, bool from_request,
                          const std::string& what) {
    expect(error_class(code) == expected_class, what + ": error class " +
                                                    std::to_string(error_class(code)) +
                                                    ", expected " + std::to_string(expected_class));
    const int world_calls = world_errors.calls() - world_calls_seen;
    world_calls_seen = world_errors.calls();
    if (world_calls == 0) return;
    const std::string message = what +
                                ": the error went to MPI_COMM_WORLD's handler, not to the"
                                " handler of the request's communicator";
    if (from_request && mpi_quirks().request_errors_on_world) {
      note(message + "; the MPI library does the same by itself (measured through PMPI)");
    } else {
      fail(message);
    }
  };
  struct Shape {
    const char* what;
    int vectors_sent;  // 256 bytes each
    int structs_posted;
  };
  // Small: one eager message. Large (1 MiB): whatever protocol large messages use.
  const Shape shapes[] = {{"small", 2, 20}, {"large", 4096, 51000}};
  int tag = 0;
  for (const Shape& shape : shapes) {
    RingMessage blocking(context, vector, shape.vectors_sent, gaps, shape.structs_posted, tag++);
    RingMessage waited(context, vector, shape.vectors_sent, gaps, shape.structs_posted, tag++);
    RingMessage waited_all(context, vector, shape.vectors_sent, gaps, shape.structs_posted, tag++);
    // Three receives completed by one MPI_Waitall, whose unpacks may share a launch: the
    // truncated one in the middle fails alone, the two around it deliver their messages.
    RingMessage before_it(context, gaps, shape.structs_posted, gaps, shape.structs_posted, tag++);
    RingMessage among(context, vector, shape.vectors_sent, gaps, shape.structs_posted, tag++);
    RingMessage after_it(context, gaps, shape.structs_posted, gaps, shape.structs_posted, tag++);
    RingMessage* const together[] = {&before_it, &among, &after_it};
    std::vector<MPI_Request> sends;
    for (RingMessage* message : {&blocking, &waited, &waited_all, &before_it, &among, &after_it}) {
      sends.emplace_back();
      P2P_EXPECT_SUCCESS(MPI_Isend(message->send.address(), message->send.count(), message->send.type().type,
                                   context.next, message->index(), comm, &sends.back()));
    }
    const std::string what = std::string("truncated ") + shape.what + " message";
    MPI_Status status;
    expect_error(MPI_Recv(blocking.recv.address(), blocking.recv.count(), gaps.type, context.prev,
                          blocking.index(), comm, &status),
                 MPI_ERR_TRUNCATE, false, what + ", MPI_Recv");
    MPI_Request request;
    P2P_EXPECT_SUCCESS(MPI_Irecv(waited.recv.address(), waited.recv.count(), gaps.type,
                                 context.prev, waited.index(), comm, &request));
    expect_error(MPI_Wait(&request, &status), MPI_ERR_TRUNCATE, true,
                 what + ", MPI_Irecv + MPI_Wait");
    P2P_EXPECT_SUCCESS(MPI_Irecv(waited_all.recv.address(), waited_all.recv.count(), gaps.type,
                                 context.prev, waited_all.index(), comm, &request));
    expect_error(MPI_Waitall(1, &request, &status), MPI_ERR_IN_STATUS, true,
                 what + ", MPI_Irecv + MPI_Waitall");
    expect_error(status.MPI_ERROR, MPI_ERR_TRUNCATE, true, what + ", MPI_Waitall status");
    MPI_Request receives[3];
    MPI_Status statuses[3];
    for (int k = 0; k < 3; ++k) {
      P2P_EXPECT_SUCCESS(MPI_Irecv(together[k]->recv.address(), together[k]->recv.count(),
                                   together[k]->recv.type().type, context.prev, together[k]->index(), comm,
                                   &receives[k]));
    }
    const std::string among_what = what + " among three in one MPI_Waitall";
    std::vector<std::string> lost;
    expect_error(MPI_Waitall(3, receives, statuses), MPI_ERR_IN_STATUS, true, among_what);
    expect_error(statuses[1].MPI_ERROR, MPI_ERR_TRUNCATE, true, among_what + ", its status");
    for (int k : {0, 2}) {
      const std::string neighbour = among_what + ", the receive " + (k == 0 ? "before" : "after") + " it";
      // The standard lets MPI_Waitall leave a request that neither failed nor finished active,
      // marked MPI_ERR_PENDING (Open MPI does once it has met the error); it completes later.
      // A request left pending must stay active. Open MPI 5 + UCX frees it here all the same,
      // with or without gddt in front (performance.md): the message is lost. A failure unless
      // the library, given the same sequence through PMPI, loses one too.
      if (statuses[k].MPI_ERROR == MPI_ERR_PENDING && receives[k] == MPI_REQUEST_NULL) {
        lost.push_back(neighbour + ": MPI_ERR_PENDING, yet its request was freed: the message is lost");
        continue;
      }
      if (statuses[k].MPI_ERROR == MPI_ERR_PENDING) {
        P2P_EXPECT_SUCCESS(MPI_Wait(&receives[k], &statuses[k]));
      } else {
        expect(statuses[k].MPI_ERROR == MPI_SUCCESS, neighbour + ": MPI_ERROR " +
                                                         std::to_string(statuses[k].MPI_ERROR) +
                                                         ", expected MPI_SUCCESS or MPI_ERR_PENDING");
        expect(receives[k] == MPI_REQUEST_NULL, neighbour + ": its request was not freed");
      }
      together[k]->check(&statuses[k], neighbour);
    }
    // Whether the library loses it too is asked only where gddt did, on any rank (collective).
    int lost_anywhere = lost.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &lost_anywhere, 1, MPI_INT, MPI_MAX, comm);
    const bool library_loses =
        lost_anywhere != 0 &&
        waitall_frees_pending_receives(vector.type, shape.vectors_sent, gaps.type, shape.structs_posted);
    world_calls_seen = world_errors.calls();  // errors the library raised on the world in there
    for (const std::string& message : lost) {
      if (library_loses) {
        note(message + "; the MPI library does the same by itself (measured through PMPI)");
      } else {
        fail(message);
      }
    }
    // The senders see no error: the receive was too short, not the send wrong.
    P2P_EXPECT_SUCCESS(MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE));
    for (const RingMessage* message : {&blocking, &waited, &waited_all, &among}) {
      message->recv.expect_unchanged_outside_typemap(what);
      message->send.expect_unchanged(what + ", send buffer");
    }
  }
  RingMessage after(context, vector, 3, gaps, 39, tag);
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Sendrecv(after.send.address(), after.send.count(), vector.type,
                                  context.next, after.index(), after.recv.address(),
                                  after.recv.count(), gaps.type, context.prev, after.index(), comm,
                                  &status));
  after.check(&status, "message after truncated ones");
  MPI_Comm_free(&comm);
}

// Receives into types with holes, a negative displacement and interleaved elements, from
// senders with other layouts: every byte outside the receive typemap keeps its poison.
void receive_gaps_untouched(const Context& context, const TypeCatalog& types) {
  const char* const receivers[] = {"struct_ints_gaps", "subarray2d_interior_f", "hvector_unaligned",
                                   "negative_lb",      "column_resized",        "subarray3d_face_x",
                                   "struct_mixed"};
  int index = 0;
  for (const char* name : receivers) {
    const TypeCase& recv_type = types.named(name);
    const TypeCase& send_type = types.contiguous_of(recv_type.unit);
    const int recv_count = recv_type.max_count > 0 ? recv_type.max_count : 7;
    RingMessage message(context, send_type, recv_count * static_cast<int>(recv_type.units()),
                        recv_type, recv_count, index++);
    MPI_Status status;
    P2P_EXPECT_SUCCESS(MPI_Sendrecv(message.send.address(), message.send.count(), send_type.type,
                                    context.next, message.index(), message.recv.address(),
                                    message.recv.count(), recv_type.type, context.prev,
                                    message.index(), MPI_COMM_WORLD, &status));
    message.check(&status, std::string("receive into ") + name);
  }
}

using Case = void (*)(const Context&, const TypeCatalog&);
const std::pair<const char*, Case> kCases[] = {
    {"proc_null", proc_null},         {"zero_count", zero_count},
    {"any_source", any_source},       {"any_tag", any_tag},
    {"status_ignore", status_ignore}, {"message_order", message_order},
    {"truncation", truncation},       {"receive_gaps_untouched", receive_gaps_untouched},
    {"order_behind_forwarded", order_behind_forwarded},
    {"freed_receive_lands", freed_receive_lands},
    {"freed_communicator_delivers", freed_communicator_delivers},
    {"lent_layouts_cross", lent_layouts_cross},
    {"counters_count_sides", counters_count_sides},
    {"staged_parts_counted", staged_parts_counted},
    {"bottom_with_absolute_addresses", bottom_with_absolute_addresses},
#if GDDT_HAVE_MPI_Isendrecv
    {"order_behind_isendrecv", order_behind_isendrecv},
#endif
#if GDDT_HAVE_MPI_Psend_init
    {"partitioned", partitioned},
    {"partitioned_errors", partitioned_errors},
#endif
};

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_semantics");
  const TypeCatalog types;
  for (const auto& [name, body] : kCases) {
    suite.run(name, [&types, body = body](const Context& context) { body(context, types); });
  }
  return suite.finish();
}
