// p2p_entry_points: the completion functions on messages in flight, freeing, querying and
// cancelling requests.
#include <mpi.h>

#include <string>
#include <vector>

#include "entry_points_cases.hpp"
#include "harness.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

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

}  // namespace

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

}  // namespace gddt_test::p2p
