// Every point-to-point entry point, on messages around the ring of ranks.
#include <mpi.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

// Rank 0 sends first and everybody else receives first, so blocking calls that wait for their
// partner (Ssend, or Send of a large message) cannot deadlock around the ring.
void ring_in_order(const Context& context, const std::function<void()>& send,
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
RingMessage vector_to_ints(const Context& context, const TypeCatalog& types, int index) {
  return RingMessage(context, types.named("vector_block64"), 2, types.named("int"), 512, index);
}

// Plain ints sent, received into a face of a 3-D array.
RingMessage ints_to_face(const Context& context, const TypeCatalog& types, int index) {
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

// Pairs of send and receive sides with the same signature and byte count.
struct Pairing {
  const char* send_type;
  int send_count;
  const char* recv_type;
  int recv_count;
};
constexpr Pairing kPairings[] = {
    {"vector_block64", 2, "int", 512},
    {"int", 288, "subarray3d_face_x", 3},
    {"struct_mixed", 10, "struct_mixed_packed", 10},
    {"subarray2d_interior_f", 1, "int", 1064},
    {"vector_block4k", 64, "vector_block4k", 64},  // 1 MiB: beyond any eager limit
    {"indexed", 6, "column_resized", 22},
};

// Messages in flight at once, plus an MPI_Ibarrier: a request gddt never creates, which the
// completion functions must handle among gddt's own. requests[2i] receives message i,
// requests[2i+1] sends it, the last one is the barrier.
class InFlight {
 public:
  InFlight(const Context& context, const TypeCatalog& types) : context_(context) {
    for (const Pairing& pairing : kPairings) {
      messages_.emplace_back(context, types.named(pairing.send_type), pairing.send_count,
                             types.named(pairing.recv_type), pairing.recv_count,
                             static_cast<int>(messages_.size()));
    }
    requests.resize(2 * messages_.size() + 1);
    for (std::size_t i = 0; i < messages_.size(); ++i) {
      RingMessage& message = messages_[i];
      P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), message.recv.count(),
                                   message.recv.type().type, context.prev, message.index(),
                                   MPI_COMM_WORLD, &requests[2 * i]));
      P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(),
                                   message.send.type().type, context.next, message.index(),
                                   MPI_COMM_WORLD, &requests[2 * i + 1]));
    }
    P2P_EXPECT_SUCCESS(MPI_Ibarrier(MPI_COMM_WORLD, &requests.back()));
    completions_.assign(requests.size(), 0);
  }

  int size() const { return static_cast<int>(requests.size()); }
  bool all_done() const {
    for (int count : completions_) {
      if (count == 0) return false;
    }
    return true;
  }

  // Records that the completion function `how` reported request `index` complete.
  void completed(int index, const MPI_Status* status, const std::string& how) {
    if (index < 0 || index >= size()) {
      fail(how + " reported index " + std::to_string(index) + " of " + std::to_string(size()));
      return;
    }
    ++completions_[index];
    expect(requests[index] == MPI_REQUEST_NULL,
           how + " must set completed request " + std::to_string(index) + " to MPI_REQUEST_NULL");
    const bool is_receive = index % 2 == 0 && index + 1 < size();
    if (is_receive && status != nullptr) {
      const RingMessage& message = messages_[index / 2];
      expect_status(*status, context_.prev, message.index(), message.recv.type().type,
                    count_of(message.recv.type(), message.bytes()), how);
    }
  }

  // Expects every request completed exactly once and every message delivered intact.
  void check(const std::string& how) const {
    for (int i = 0; i < size(); ++i) {
      expect(completions_[i] == 1, how + ": request " + std::to_string(i) + " completed " +
                                       std::to_string(completions_[i]) + " times");
    }
    for (const RingMessage& message : messages_) message.check(nullptr, how);
  }

  std::vector<MPI_Request> requests;

 private:
  const Context& context_;
  std::vector<RingMessage> messages_;
  std::vector<int> completions_;
};

void wait(const Context& context, const TypeCatalog& types) {
  InFlight flight(context, types);
  for (int i = flight.size() - 1; i >= 0; --i) {  // against the order of posting
    MPI_Status status;
    P2P_EXPECT_SUCCESS(MPI_Wait(&flight.requests[i], &status));
    flight.completed(i, &status, "MPI_Wait");
  }
  flight.check("MPI_Wait");
}

void waitall(const Context& context, const TypeCatalog& types) {
  InFlight flight(context, types);
  std::vector<MPI_Status> statuses(flight.size());
  P2P_EXPECT_SUCCESS(MPI_Waitall(flight.size(), flight.requests.data(), statuses.data()));
  for (int i = 0; i < flight.size(); ++i) flight.completed(i, &statuses[i], "MPI_Waitall");
  flight.check("MPI_Waitall");
}

void waitany(const Context& context, const TypeCatalog& types) {
  InFlight flight(context, types);
  for (int n = 0; n < flight.size(); ++n) {
    int index = -1;
    MPI_Status status;
    P2P_EXPECT_SUCCESS(MPI_Waitany(flight.size(), flight.requests.data(), &index, &status));
    flight.completed(index, &status, "MPI_Waitany");
  }
  int index = -1;
  P2P_EXPECT_SUCCESS(MPI_Waitany(flight.size(), flight.requests.data(), &index, MPI_STATUS_IGNORE));
  expect(index == MPI_UNDEFINED, "MPI_Waitany on only null requests must give MPI_UNDEFINED");
  flight.check("MPI_Waitany");
}

void waitsome(const Context& context, const TypeCatalog& types) {
  InFlight flight(context, types);
  std::vector<int> indices(flight.size());
  std::vector<MPI_Status> statuses(flight.size());
  while (!flight.all_done()) {
    int done = 0;
    P2P_EXPECT_SUCCESS(MPI_Waitsome(flight.size(), flight.requests.data(), &done, indices.data(),
                                    statuses.data()));
    if (done == MPI_UNDEFINED || done < 1) {
      fail("MPI_Waitsome with active requests returned outcount " + std::to_string(done));
      break;
    }
    for (int i = 0; i < done; ++i) flight.completed(indices[i], &statuses[i], "MPI_Waitsome");
  }
  int done = 0;
  P2P_EXPECT_SUCCESS(MPI_Waitsome(flight.size(), flight.requests.data(), &done, indices.data(),
                                  MPI_STATUSES_IGNORE));
  expect(done == MPI_UNDEFINED, "MPI_Waitsome on only null requests must give MPI_UNDEFINED");
  flight.check("MPI_Waitsome");
}

void test(const Context& context, const TypeCatalog& types) {
  InFlight flight(context, types);
  poll_until(
      [&] {
        for (int i = 0; i < flight.size(); ++i) {
          if (flight.requests[i] == MPI_REQUEST_NULL) continue;
          int done = 0;
          MPI_Status status;
          P2P_EXPECT_SUCCESS(MPI_Test(&flight.requests[i], &done, &status));
          if (done) flight.completed(i, &status, "MPI_Test");
        }
        return flight.all_done();
      },
      "MPI_Test loop");
  int done = 0;
  MPI_Request null_request = MPI_REQUEST_NULL;
  P2P_EXPECT_SUCCESS(MPI_Test(&null_request, &done, MPI_STATUS_IGNORE));
  expect(done, "MPI_Test of MPI_REQUEST_NULL must report completion");
  flight.check("MPI_Test");
}

void testall(const Context& context, const TypeCatalog& types) {
  InFlight flight(context, types);
  std::vector<MPI_Status> statuses(flight.size());
  poll_until(
      [&] {
        int done = 0;
        P2P_EXPECT_SUCCESS(
            MPI_Testall(flight.size(), flight.requests.data(), &done, statuses.data()));
        if (!done) return false;
        for (int i = 0; i < flight.size(); ++i) flight.completed(i, &statuses[i], "MPI_Testall");
        return true;
      },
      "MPI_Testall loop");
  flight.check("MPI_Testall");
}

void testany(const Context& context, const TypeCatalog& types) {
  InFlight flight(context, types);
  poll_until(
      [&] {
        int index = -1;
        int done = 0;
        MPI_Status status;
        P2P_EXPECT_SUCCESS(
            MPI_Testany(flight.size(), flight.requests.data(), &index, &done, &status));
        if (done && index != MPI_UNDEFINED) flight.completed(index, &status, "MPI_Testany");
        return flight.all_done();
      },
      "MPI_Testany loop");
  int index = -1;
  int done = 0;
  P2P_EXPECT_SUCCESS(
      MPI_Testany(flight.size(), flight.requests.data(), &index, &done, MPI_STATUS_IGNORE));
  expect(done && index == MPI_UNDEFINED,
         "MPI_Testany on only null requests must give flag true and MPI_UNDEFINED");
  flight.check("MPI_Testany");
}

void testsome(const Context& context, const TypeCatalog& types) {
  InFlight flight(context, types);
  std::vector<int> indices(flight.size());
  std::vector<MPI_Status> statuses(flight.size());
  poll_until(
      [&] {
        int done = 0;
        P2P_EXPECT_SUCCESS(MPI_Testsome(flight.size(), flight.requests.data(), &done,
                                        indices.data(), statuses.data()));
        if (done == MPI_UNDEFINED) {
          fail("MPI_Testsome with active requests returned MPI_UNDEFINED");
          return true;
        }
        for (int i = 0; i < done; ++i) flight.completed(indices[i], &statuses[i], "MPI_Testsome");
        return flight.all_done();
      },
      "MPI_Testsome loop");
  int done = 0;
  P2P_EXPECT_SUCCESS(MPI_Testsome(flight.size(), flight.requests.data(), &done, indices.data(),
                                  MPI_STATUSES_IGNORE));
  expect(done == MPI_UNDEFINED, "MPI_Testsome on only null requests must give MPI_UNDEFINED");
  flight.check("MPI_Testsome");
}

void request_free_completed_persistent(const Context& context, const TypeCatalog& types) {
  RingMessage message = vector_to_ints(context, types, 11);
  MPI_Request send_request;
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Send_init(message.send.address(), message.send.count(),
                                   message.send.type().type, context.next, message.index(),
                                   MPI_COMM_WORLD, &send_request));
  P2P_EXPECT_SUCCESS(MPI_Start(&send_request));
  P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                              message.recv.type().type, context.prev, message.index(),
                              MPI_COMM_WORLD, &status));
  P2P_EXPECT_SUCCESS(MPI_Wait(&send_request, MPI_STATUS_IGNORE));
  P2P_EXPECT_SUCCESS(MPI_Request_free(&send_request));
  expect(send_request == MPI_REQUEST_NULL, "MPI_Request_free must set MPI_REQUEST_NULL");
  message.check(&status, "MPI_Request_free of a completed persistent send");
}

// Freeing an active send lets it run to completion on its own; the receiver's barrier tells
// the sender when its buffer may go.
void request_free_active_send(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("vector_block4k"), 64, types.named("int"), 262144, 12);
  MPI_Request send_request;
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(),
                               message.send.type().type, context.next, message.index(),
                               MPI_COMM_WORLD, &send_request));
  P2P_EXPECT_SUCCESS(MPI_Request_free(&send_request));
  expect(send_request == MPI_REQUEST_NULL, "MPI_Request_free must set MPI_REQUEST_NULL");
  P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                              message.recv.type().type, context.prev, message.index(),
                              MPI_COMM_WORLD, &status));
  message.check(&status, "MPI_Request_free of an active MPI_Isend");
  MPI_Barrier(MPI_COMM_WORLD);
}

// MPI_Request_get_status reports completion without freeing the request.
void request_get_status(const Context& context, const TypeCatalog& types) {
  RingMessage message = ints_to_face(context, types, 13);
  MPI_Request recv_request, send_request;
  MPI_Status status;
  int done = 1;
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), message.recv.count(),
                               message.recv.type().type, context.prev, message.index(),
                               MPI_COMM_WORLD, &recv_request));
  P2P_EXPECT_SUCCESS(MPI_Request_get_status(recv_request, &done, &status));
  expect(!done, "MPI_Request_get_status reported a receive complete before anything was sent");
  MPI_Barrier(MPI_COMM_WORLD);
  P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(),
                               message.send.type().type, context.next, message.index(),
                               MPI_COMM_WORLD, &send_request));
  poll_until(
      [&] {
        P2P_EXPECT_SUCCESS(MPI_Request_get_status(recv_request, &done, &status));
        return done != 0;
      },
      "MPI_Request_get_status loop");
  expect(recv_request != MPI_REQUEST_NULL, "MPI_Request_get_status must not free the request");
  message.check(&status, "MPI_Request_get_status");
  P2P_EXPECT_SUCCESS(MPI_Wait(&recv_request, &status));
  expect(recv_request == MPI_REQUEST_NULL, "MPI_Wait after MPI_Request_get_status must free");
  message.check(&status, "MPI_Wait after MPI_Request_get_status");
  P2P_EXPECT_SUCCESS(MPI_Wait(&send_request, MPI_STATUS_IGNORE));
  MPI_Request null_request = MPI_REQUEST_NULL;
  P2P_EXPECT_SUCCESS(MPI_Request_get_status(null_request, &done, MPI_STATUS_IGNORE));
  expect(done, "MPI_Request_get_status of MPI_REQUEST_NULL must report completion");
}

// A receive nobody will match is cancelled, leaves its buffer alone, and the ranks go on
// communicating.
void cancel_receive(const Context& context, const TypeCatalog& types) {
  const int never_sent_tag = 999;
  RingMessage message = vector_to_ints(context, types, 14);
  TypedBuffer orphan(types.named("subarray3d_face_y"), 2, context.memory,
                     message_seed(context, context.rank, never_sent_tag));
  MPI_Request orphan_request, recv_request;
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Irecv(orphan.address(), orphan.count(), orphan.type().type, context.prev,
                               never_sent_tag, MPI_COMM_WORLD, &orphan_request));
  P2P_EXPECT_SUCCESS(MPI_Cancel(&orphan_request));
  P2P_EXPECT_SUCCESS(MPI_Wait(&orphan_request, &status));
  int cancelled = 0;
  P2P_EXPECT_SUCCESS(MPI_Test_cancelled(&status, &cancelled));
  expect(cancelled, "MPI_Test_cancelled must be true for a cancelled unmatched receive");
  orphan.expect_unchanged("cancelled receive");

  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), message.recv.count(),
                               message.recv.type().type, context.prev, message.index(),
                               MPI_COMM_WORLD, &recv_request));
  P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), message.send.count(),
                              message.send.type().type, context.next, message.index(),
                              MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Wait(&recv_request, &status));
  P2P_EXPECT_SUCCESS(MPI_Test_cancelled(&status, &cancelled));
  expect(!cancelled, "MPI_Test_cancelled must be false for a completed receive");
  message.check(&status, "receive after a cancelled one");
}

// MPI_Cancel of a nonblocking send (which gddt may still hold): the send either is cancelled,
// and then never arrives, or completes and arrives whole. Each rank tells the next which.
void cancel_send(const Context& context, const TypeCatalog& types) {
  RingMessage message = vector_to_ints(context, types, 16);
  MPI_Request send_request;
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(), message.send.type().type,
                               context.next, message.index(), MPI_COMM_WORLD, &send_request));
  P2P_EXPECT_SUCCESS(MPI_Cancel(&send_request));
  P2P_EXPECT_SUCCESS(MPI_Wait(&send_request, &status));
  expect(send_request == MPI_REQUEST_NULL, "MPI_Wait must free a cancelled send's request");
  int cancelled = 0, previous_cancelled = 0;
  P2P_EXPECT_SUCCESS(MPI_Test_cancelled(&status, &cancelled));
  const int verdict_tag = 1000;
  P2P_EXPECT_SUCCESS(MPI_Sendrecv(&cancelled, 1, MPI_INT, context.next, verdict_tag, &previous_cancelled, 1,
                                  MPI_INT, context.prev, verdict_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  if (!previous_cancelled) {
    P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(), message.recv.type().type,
                                context.prev, message.index(), MPI_COMM_WORLD, &status));
    message.check(&status, "a send that MPI_Cancel did not cancel");
  }
  int stray = 0;
  P2P_EXPECT_SUCCESS(MPI_Iprobe(context.prev, message.index(), MPI_COMM_WORLD, &stray, MPI_STATUS_IGNORE));
  expect(!stray, "a cancelled send must not arrive");
}

// Sends message `index` to the next rank in the background while `receive` takes the previous
// rank's one.
void with_ring_isend(const Context& context, RingMessage& message,
                     const std::function<void()>& receive) {
  MPI_Request send_request;
  P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(),
                               message.send.type().type, context.next, message.index(),
                               MPI_COMM_WORLD, &send_request));
  receive();
  P2P_EXPECT_SUCCESS(MPI_Wait(&send_request, MPI_STATUS_IGNORE));
}

void probe(const Context& context, const TypeCatalog& types) {
  RingMessage message = vector_to_ints(context, types, 15);
  with_ring_isend(context, message, [&] {
    MPI_Status probed, status;
    P2P_EXPECT_SUCCESS(MPI_Probe(context.prev, message.index(), MPI_COMM_WORLD, &probed));
    expect_status(probed, context.prev, message.index(), MPI_INT, 512, "MPI_Probe");
    P2P_EXPECT_SUCCESS(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &probed));
    expect_status(probed, context.prev, message.index(), message.recv.type().type, 512,
                  "MPI_Probe with wildcards");
    P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                                message.recv.type().type, probed.MPI_SOURCE, probed.MPI_TAG,
                                MPI_COMM_WORLD, &status));
    message.check(&status, "MPI_Probe then MPI_Recv");
  });
}

void iprobe(const Context& context, const TypeCatalog& types) {
  RingMessage message = ints_to_face(context, types, 16);
  with_ring_isend(context, message, [&] {
    MPI_Status probed, status;
    poll_until(
        [&] {
          int found = 0;
          P2P_EXPECT_SUCCESS(
              MPI_Iprobe(context.prev, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &probed));
          return found != 0;
        },
        "MPI_Iprobe loop");
    expect_status(probed, context.prev, message.index(), message.recv.type().type,
                  message.recv.count(), "MPI_Iprobe");
    P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                                message.recv.type().type, context.prev, message.index(),
                                MPI_COMM_WORLD, &status));
    message.check(&status, "MPI_Iprobe then MPI_Recv");
  });
}

void mprobe_mrecv(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("struct_mixed_packed"), 33, types.named("struct_mixed"),
                      33, 17);
  with_ring_isend(context, message, [&] {
    MPI_Message handle;
    MPI_Status probed, status;
    P2P_EXPECT_SUCCESS(
        MPI_Mprobe(MPI_ANY_SOURCE, message.index(), MPI_COMM_WORLD, &handle, &probed));
    expect_status(probed, context.prev, message.index(), message.recv.type().type, 33,
                  "MPI_Mprobe");
    P2P_EXPECT_SUCCESS(MPI_Mrecv(message.recv.address(), message.recv.count(),
                                 message.recv.type().type, &handle, &status));
    expect(handle == MPI_MESSAGE_NULL, "MPI_Mrecv must set the message to MPI_MESSAGE_NULL");
    message.check(&status, "MPI_Mprobe then MPI_Mrecv");
  });
}

void improbe_imrecv(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("vector_block4k"), 64, types.named("negative_lb"), 87382,
                      18);  // 1 MiB: 87381 whole elements and one partial
  with_ring_isend(context, message, [&] {
    MPI_Message handle;
    MPI_Status probed, status;
    poll_until(
        [&] {
          int found = 0;
          P2P_EXPECT_SUCCESS(
              MPI_Improbe(context.prev, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &handle, &probed));
          return found != 0;
        },
        "MPI_Improbe loop");
    MPI_Request request;
    P2P_EXPECT_SUCCESS(MPI_Imrecv(message.recv.address(), message.recv.count(),
                                  message.recv.type().type, &handle, &request));
    expect(handle == MPI_MESSAGE_NULL, "MPI_Imrecv must set the message to MPI_MESSAGE_NULL");
    P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
    message.check(&status, "MPI_Improbe then MPI_Imrecv");
  });
}

// Counts of a derived type: MPI_Get_count counts whole elements (MPI_UNDEFINED for a partial
// one), MPI_Get_elements counts basic elements.
void get_count_get_elements(const Context& context, const TypeCatalog& types) {
  const TypeCase& element = types.named("struct_int_double");  // (int, double) with a gap
  const TypeCase& vector = types.named("vector_of_struct");    // 6 such structs, with gaps
  struct Shape {
    int structs_sent;
    int expected_vectors;  // whole vector elements received, or MPI_UNDEFINED
  };
  const Shape shapes[] = {{5, MPI_UNDEFINED}, {12, 2}, {0, 0}};
  int index = 20;
  for (const Shape& shape : shapes) {
    RingMessage message(context, element, shape.structs_sent, vector, 3, index++);
    const std::string what =
        "MPI_Get_count/MPI_Get_elements, " + std::to_string(shape.structs_sent) + " structs";
    MPI_Status status;
    with_ring_isend(context, message, [&] {
      P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(), vector.type,
                                  context.prev, message.index(), MPI_COMM_WORLD, &status));
    });
    message.check(&status, what);  // checks MPI_Get_count in the vector type
    int count = -1;
    int elements = -1;
    MPI_Count elements_x = -1;
    P2P_EXPECT_SUCCESS(MPI_Get_count(&status, element.type, &count));
    expect(count == shape.structs_sent,
           what + ": MPI_Get_count in structs " + std::to_string(count));
    expect(shape.expected_vectors == count_of(vector, message.bytes()), what + ": shape");
    P2P_EXPECT_SUCCESS(MPI_Get_elements(&status, vector.type, &elements));
    P2P_EXPECT_SUCCESS(MPI_Get_elements_x(&status, vector.type, &elements_x));
    expect(elements == 2 * shape.structs_sent && elements_x == elements,
           what + ": MPI_Get_elements " + std::to_string(elements) + ", MPI_Get_elements_x " +
               std::to_string(elements_x) + ", expected " + std::to_string(2 * shape.structs_sent));
  }
}

#if MPI_VERSION >= 4
// MPI-4's large-count calls (MPI_Send_c and the rest), where the library has them: gddt must
// sit in front of them as of the int ones, and a count that fits an int takes the same path.
void large_count_sends(const Context& context, const TypeCatalog& types) {
  const std::pair<const char*, const char*> twins[] = {{"MPI_Send_c", "MPI_Send"},   {"MPI_Recv_c", "MPI_Recv"},
                                                       {"MPI_Isend_c", "MPI_Isend"}, {"MPI_Irecv_c", "MPI_Irecv"},
                                                       {"MPI_Pack_c", "MPI_Pack"},   {"MPI_Unpack_c", "MPI_Unpack"}};
  for (const auto& [large, twin] : twins) {
    expect(provider_of(large) == provider_of(twin), std::string(large) + " comes from " + provider_of(large) +
                                                        ", " + twin + " from " + provider_of(twin));
  }
  using BlockingSend = int (*)(const void*, MPI_Count, MPI_Datatype, int, int, MPI_Comm);
  const std::pair<const char*, BlockingSend> blocking[] = {
      {"MPI_Send_c", MPI_Send_c}, {"MPI_Ssend_c", MPI_Ssend_c}, {"MPI_Bsend_c", MPI_Bsend_c}};
  int tag = 40;
  for (const auto& [name, call] : blocking) {
    RingMessage message = vector_to_ints(context, types, tag++);
    AttachedBuffer attached({&message.send});
    MPI_Status status;
    ring_in_order(
        context,
        [&, call = call] {
          P2P_EXPECT_SUCCESS(call(message.send.address(), message.send.count(), message.send.type().type,
                                  context.next, message.index(), MPI_COMM_WORLD));
        },
        [&] {
          P2P_EXPECT_SUCCESS(MPI_Recv_c(message.recv.address(), message.recv.count(), message.recv.type().type,
                                        context.prev, message.index(), MPI_COMM_WORLD, &status));
        });
    message.check(&status, std::string(name) + " -> MPI_Recv_c");
  }
  using RequestSend = int (*)(const void*, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  const std::pair<const char*, RequestSend> nonblocking[] = {{"MPI_Isend_c", MPI_Isend_c},
                                                             {"MPI_Issend_c", MPI_Issend_c},
                                                             {"MPI_Ibsend_c", MPI_Ibsend_c},
                                                             {"MPI_Irsend_c", MPI_Irsend_c},
                                                             {"MPI_Rsend_c", nullptr}};
  for (const auto& [name, call] : nonblocking) {
    RingMessage message = ints_to_face(context, types, tag++);
    AttachedBuffer attached({&message.send});
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status statuses[2];
    P2P_EXPECT_SUCCESS(MPI_Irecv_c(message.recv.address(), message.recv.count(), message.recv.type().type,
                                   context.prev, message.index(), MPI_COMM_WORLD, &requests[0]));
    MPI_Barrier(MPI_COMM_WORLD);  // every receive is posted: ready mode is allowed
    if (call != nullptr) {
      P2P_EXPECT_SUCCESS(call(message.send.address(), message.send.count(), message.send.type().type, context.next,
                              message.index(), MPI_COMM_WORLD, &requests[1]));
    } else {
      P2P_EXPECT_SUCCESS(MPI_Rsend_c(message.send.address(), message.send.count(), message.send.type().type,
                                     context.next, message.index(), MPI_COMM_WORLD));
    }
    P2P_EXPECT_SUCCESS(MPI_Waitall(2, requests, statuses));
    message.check(&statuses[0], std::string(name) + " -> MPI_Irecv_c");
  }
}

void large_count_persistent(const Context& context, const TypeCatalog& types) {
  using SendInit = int (*)(const void*, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  const std::pair<const char*, SendInit> inits[] = {{"MPI_Send_init_c", MPI_Send_init_c},
                                                    {"MPI_Ssend_init_c", MPI_Ssend_init_c},
                                                    {"MPI_Bsend_init_c", MPI_Bsend_init_c},
                                                    {"MPI_Rsend_init_c", MPI_Rsend_init_c}};
  int tag = 50;
  for (const auto& [name, init] : inits) {
    RingMessage message(context, types.named("negative_lb"), 8, types.named("indexed_block"), 4, tag++);
    AttachedBuffer attached({&message.send, &message.send});
    MPI_Request requests[2];
    P2P_EXPECT_SUCCESS(MPI_Recv_init_c(message.recv.address(), message.recv.count(), message.recv.type().type,
                                       context.prev, message.index(), MPI_COMM_WORLD, &requests[0]));
    P2P_EXPECT_SUCCESS(init(message.send.address(), message.send.count(), message.send.type().type, context.next,
                            message.index(), MPI_COMM_WORLD, &requests[1]));
    for (int round = 0; round < 2; ++round) {
      P2P_EXPECT_SUCCESS(MPI_Start(&requests[0]));
      MPI_Barrier(MPI_COMM_WORLD);
      P2P_EXPECT_SUCCESS(MPI_Start(&requests[1]));
      MPI_Status statuses[2];
      P2P_EXPECT_SUCCESS(MPI_Waitall(2, requests, statuses));
      message.check(&statuses[0], std::string(name) + " + MPI_Recv_init_c, round " + std::to_string(round));
    }
    for (MPI_Request& request : requests) P2P_EXPECT_SUCCESS(MPI_Request_free(&request));
  }
}

void large_count_exchanges(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("subarray3d_face_y"), 2, types.named("subarray2d_row"), 8, 60);
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Sendrecv_c(message.send.address(), message.send.count(), message.send.type().type,
                                    context.next, message.index(), message.recv.address(), message.recv.count(),
                                    message.recv.type().type, context.prev, message.index(), MPI_COMM_WORLD,
                                    &status));
  message.check(&status, "MPI_Sendrecv_c");

  const int tag = 61;
  TypedBuffer buffer(types.named("hvector_unaligned"), 5, context.memory, message_seed(context, context.rank, -tag));
  buffer.fill(message_seed(context, context.rank, tag));
  P2P_EXPECT_SUCCESS(MPI_Sendrecv_replace_c(buffer.address(), buffer.count(), buffer.type().type, context.next, tag,
                                            context.prev, tag, MPI_COMM_WORLD, &status));
  buffer.expect_message(message_seed(context, context.prev, tag), buffer.data_bytes(), "MPI_Sendrecv_replace_c");

  RingMessage matched(context, types.named("struct_mixed_packed"), 33, types.named("struct_mixed"), 33, 62);
  with_ring_isend(context, matched, [&] {
    MPI_Message handle;
    P2P_EXPECT_SUCCESS(MPI_Mprobe(context.prev, matched.index(), MPI_COMM_WORLD, &handle, MPI_STATUS_IGNORE));
    P2P_EXPECT_SUCCESS(MPI_Mrecv_c(matched.recv.address(), matched.recv.count(), matched.recv.type().type, &handle,
                                   &status));
    matched.check(&status, "MPI_Mprobe then MPI_Mrecv_c");
  });
  RingMessage probed(context, types.named("vector_block64"), 2, types.named("int"), 512, 63);
  with_ring_isend(context, probed, [&] {
    MPI_Message handle;
    P2P_EXPECT_SUCCESS(MPI_Mprobe(context.prev, probed.index(), MPI_COMM_WORLD, &handle, MPI_STATUS_IGNORE));
    MPI_Request request;
    P2P_EXPECT_SUCCESS(
        MPI_Imrecv_c(probed.recv.address(), probed.recv.count(), probed.recv.type().type, &handle, &request));
    P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
    probed.check(&status, "MPI_Mprobe then MPI_Imrecv_c");
  });
}

// Beyond an int, to and from MPI_PROC_NULL (no memory needed): host buffers go to the library.
void large_count_beyond_int(const Context& context, const TypeCatalog&) {
  const MPI_Count beyond = MPI_Count{1} << 33;
  int word = 0;
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Send_c(&word, beyond, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Recv_c(&word, beyond, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &status));
  expect(status.MPI_SOURCE == MPI_PROC_NULL, "MPI_Recv_c from MPI_PROC_NULL: status source");
  (void)context;
}

void large_count_pack(const Context& context, const TypeCatalog& types) {
  // Two packs appending at a running MPI_Count position, then two unpacks; against PMPI_Pack.
  TypedBuffer first(types.named("struct_mixed"), 7, context.memory, 70);
  TypedBuffer second(types.named("subarray2d_interior_f"), 1, context.memory, 71);
  first.fill(72);
  second.fill(73);
  MPI_Count first_bytes = 0, second_bytes = 0;
  P2P_EXPECT_SUCCESS(MPI_Pack_size_c(first.count(), first.type().type, MPI_COMM_WORLD, &first_bytes));
  P2P_EXPECT_SUCCESS(MPI_Pack_size_c(second.count(), second.type().type, MPI_COMM_WORLD, &second_bytes));
  const MPI_Count total = 5 + first_bytes + second_bytes;
  std::vector<char> packed(static_cast<std::size_t>(total) + 16, 0x5a);
  MPI_Count position = 5;
  P2P_EXPECT_SUCCESS(MPI_Pack_c(first.address(), first.count(), first.type().type, packed.data(), total, &position,
                                MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Pack_c(second.address(), second.count(), second.type().type, packed.data(), total,
                                &position, MPI_COMM_WORLD));
  expect(position == total, "MPI_Pack_c position " + std::to_string(position) + ", expected " + std::to_string(total));
  if (context.memory == MemoryKind::kHost) {
    std::vector<char> reference(packed.size(), 0x5a);
    int at = 5;
    P2P_EXPECT_SUCCESS(PMPI_Pack(first.address(), first.count(), first.type().type, reference.data(),
                                 static_cast<int>(total), &at, MPI_COMM_WORLD));
    P2P_EXPECT_SUCCESS(PMPI_Pack(second.address(), second.count(), second.type().type, reference.data(),
                                 static_cast<int>(total), &at, MPI_COMM_WORLD));
    expect(reference == packed, "MPI_Pack_c bytes differ from the library's PMPI_Pack");
  }
  TypedBuffer first_back(types.named("struct_mixed"), 7, context.memory, 74);
  TypedBuffer second_back(types.named("subarray2d_interior_f"), 1, context.memory, 75);
  position = 5;
  P2P_EXPECT_SUCCESS(MPI_Unpack_c(packed.data(), total, &position, first_back.address(), first_back.count(),
                                  first_back.type().type, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Unpack_c(packed.data(), total, &position, second_back.address(), second_back.count(),
                                  second_back.type().type, MPI_COMM_WORLD));
  expect(position == total, "MPI_Unpack_c position " + std::to_string(position));
  first_back.expect_message(72, first_back.data_bytes(), "MPI_Pack_c then MPI_Unpack_c");
  second_back.expect_message(73, second_back.data_bytes(), "MPI_Pack_c then MPI_Unpack_c");
}
#endif  // MPI_VERSION >= 4

using Case = void (*)(const Context&, const TypeCatalog&);
const std::pair<const char*, Case> kCases[] = {
    {"send_recv", send_recv},
    {"isend_irecv_wait", isend_irecv_wait},
    {"ssend", ssend},
    {"issend", issend},
    {"bsend", bsend},
    {"ibsend", ibsend},
    {"rsend", rsend},
    {"irsend", irsend},
    {"sendrecv", sendrecv},
    {"sendrecv_replace", sendrecv_replace},
    {"persistent", persistent},
    {"wait", wait},
    {"waitall", waitall},
    {"waitany", waitany},
    {"waitsome", waitsome},
    {"test", test},
    {"testall", testall},
    {"testany", testany},
    {"testsome", testsome},
    {"request_free_completed_persistent", request_free_completed_persistent},
    {"request_free_active_send", request_free_active_send},
    {"request_get_status", request_get_status},
    {"cancel_receive", cancel_receive}, {"cancel_send", cancel_send},
    {"probe", probe},
    {"iprobe", iprobe},
    {"mprobe_mrecv", mprobe_mrecv},
    {"improbe_imrecv", improbe_imrecv},
    {"get_count_get_elements", get_count_get_elements},
#if MPI_VERSION >= 4
    {"large_count_sends", large_count_sends},
    {"large_count_persistent", large_count_persistent},
    {"large_count_exchanges", large_count_exchanges},
    {"large_count_beyond_int", large_count_beyond_int},
    {"large_count_pack", large_count_pack},
#endif
};

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_entry_points");
  const TypeCatalog types;
  for (const auto& [name, body] : kCases) {
    suite.run(name, [&types, body = body](const Context& context) { body(context, types); });
  }
  return suite.finish();
}
