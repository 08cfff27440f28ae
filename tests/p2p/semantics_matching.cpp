// p2p_semantics: what receives match and what statuses say: MPI_PROC_NULL, zero counts, wildcards,
// ignored statuses.
#include <mpi.h>

#include <string>
#include <vector>

#include "harness.hpp"
#include "mpi_quirks.hpp"
#include "ring.hpp"
#include "semantics_cases.hpp"
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

}  // namespace

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

}  // namespace gddt_test::p2p
