// Progress: non-blocking operations advance inside any completion call and never deadlock,
// however many are outstanding and whichever side posts first.
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

// Every rank sends a large vector to both neighbours and receives one from each, all posted
// before any completion, in both posting orders. With two ranks both messages go to the same
// peer, told apart by their tags.
void exchange_both_ways(const Context& context, const TypeCatalog& types) {
  const TypeCase& vector = types.named("vector_block4");  // 256 bytes in 508
  const TypeCase& ints = types.named("int");
  const int elements = 16384;  // 4 MiB of data per message
  const int to_next = 0, to_prev = 1;
  for (bool receives_first : {true, false}) {
    TypedBuffer send_next(vector, elements, context.memory, mix_seed(context.seed, 1));
    TypedBuffer send_prev(vector, elements, context.memory, mix_seed(context.seed, 2));
    TypedBuffer from_prev(ints, elements * 64, context.memory, mix_seed(context.seed, 3));
    TypedBuffer from_next(ints, elements * 64, context.memory, mix_seed(context.seed, 4));
    send_next.fill(message_seed(context, context.rank, to_next));
    send_prev.fill(message_seed(context, context.rank, to_prev));
    MPI_Request requests[4];
    auto post_receives = [&] {
      P2P_EXPECT_SUCCESS(MPI_Irecv(from_prev.address(), from_prev.count(), MPI_INT, context.prev,
                                   to_next, MPI_COMM_WORLD, &requests[0]));
      P2P_EXPECT_SUCCESS(MPI_Irecv(from_next.address(), from_next.count(), MPI_INT, context.next,
                                   to_prev, MPI_COMM_WORLD, &requests[1]));
    };
    auto post_sends = [&] {
      P2P_EXPECT_SUCCESS(MPI_Isend(send_next.address(), elements, vector.type, context.next,
                                   to_next, MPI_COMM_WORLD, &requests[2]));
      P2P_EXPECT_SUCCESS(MPI_Isend(send_prev.address(), elements, vector.type, context.prev,
                                   to_prev, MPI_COMM_WORLD, &requests[3]));
    };
    if (receives_first) {
      post_receives();
      post_sends();
    } else {
      post_sends();
      post_receives();
    }
    MPI_Status statuses[4];
    P2P_EXPECT_SUCCESS(MPI_Waitall(4, requests, statuses));
    const std::string what = receives_first ? "receives posted first" : "sends posted first";
    from_prev.expect_message(message_seed(context, context.prev, to_next), send_next.data_bytes(),
                             what + ", from the previous rank");
    from_next.expect_message(message_seed(context, context.next, to_prev), send_prev.data_bytes(),
                             what + ", from the next rank");
    expect_status(statuses[0], context.prev, to_next, MPI_INT, elements * 64, what);
    expect_status(statuses[1], context.next, to_prev, MPI_INT, elements * 64, what);
    send_next.expect_unchanged(what);
    send_prev.expect_unchanged(what);
  }
}

// Hundreds of messages in flight at once from slices of one allocation: all sends posted before
// any receive, then everything completed by one call (`complete_all`).
void many_outstanding(const Context& context, const TypeCatalog& types, const std::string& how,
                      void (*complete_all)(std::vector<MPI_Request>*)) {
  const TypeCase& vector = types.named("vector_block64");  // 1 KiB in 1504 bytes
  const int messages = 500;
  const int elements = 64;  // 64 KiB of data per message
  TypedBuffer sends(vector, messages * elements, context.memory, mix_seed(context.seed, 1));
  TypedBuffer recvs(types.named("int"), messages * elements * 256, context.memory,
                    mix_seed(context.seed, 2));
  sends.fill(message_seed(context, context.rank, 0));
  std::vector<MPI_Request> requests(2 * messages);
  for (int i = 0; i < messages; ++i) {
    const char* slice = static_cast<const char*>(sends.address()) + i * elements * vector.extent;
    P2P_EXPECT_SUCCESS(
        MPI_Isend(slice, elements, vector.type, context.next, i, MPI_COMM_WORLD, &requests[i]));
  }
  for (int i = 0; i < messages; ++i) {
    char* slice = static_cast<char*>(recvs.address()) + i * elements * vector.size;
    P2P_EXPECT_SUCCESS(MPI_Irecv(slice, elements * 256, MPI_INT, context.prev, i, MPI_COMM_WORLD,
                                 &requests[messages + i]));
  }
  complete_all(&requests);
  for (MPI_Request request : requests) {
    expect(request == MPI_REQUEST_NULL, how + " left a request that is not MPI_REQUEST_NULL");
  }
  recvs.expect_message(message_seed(context, context.prev, 0), sends.data_bytes(),
                       std::to_string(messages) + " messages completed by " + how);
  sends.expect_unchanged(std::to_string(messages) + " sends completed by " + how);
}

void many_outstanding_waitall(const Context& context, const TypeCatalog& types) {
  many_outstanding(context, types, "MPI_Waitall", [](std::vector<MPI_Request>* requests) {
    P2P_EXPECT_SUCCESS(
        MPI_Waitall(static_cast<int>(requests->size()), requests->data(), MPI_STATUSES_IGNORE));
  });
}

void many_outstanding_testsome(const Context& context, const TypeCatalog& types) {
  many_outstanding(context, types, "MPI_Testsome", [](std::vector<MPI_Request>* requests) {
    const int count = static_cast<int>(requests->size());
    std::vector<int> indices(count);
    int completed = 0;
    poll_until(
        [&] {
          int done = 0;
          P2P_EXPECT_SUCCESS(
              MPI_Testsome(count, requests->data(), &done, indices.data(), MPI_STATUSES_IGNORE));
          if (done != MPI_UNDEFINED) completed += done;
          return done == MPI_UNDEFINED || completed == count;
        },
        "MPI_Testsome over 1000 requests");
    expect(completed == count, "MPI_Testsome completed " + std::to_string(completed) + " of " +
                                   std::to_string(count) + " requests");
  });
}

// Large messages that only ever see MPI_Test on both sides: whatever pipelining a large message
// needs must advance inside MPI_Test alone.
void progress_in_test_only(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("vector_block64"), 4096, types.named("vector_block4"),
                      16384, 1);  // 4 MiB
  MPI_Request requests[2];
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), message.recv.count(),
                               message.recv.type().type, context.prev, message.index(),
                               MPI_COMM_WORLD, &requests[0]));
  P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(),
                               message.send.type().type, context.next, message.index(),
                               MPI_COMM_WORLD, &requests[1]));
  MPI_Status status;
  int pending = 2;
  poll_until(
      [&] {
        for (int i = 0; i < 2; ++i) {
          if (requests[i] == MPI_REQUEST_NULL) continue;
          int done = 0;
          MPI_Status this_status;
          P2P_EXPECT_SUCCESS(MPI_Test(&requests[i], &done, &this_status));
          if (!done) continue;
          --pending;
          if (i == 0) status = this_status;
        }
        return pending == 0;
      },
      "MPI_Test loop over a 4 MiB exchange");
  message.check(&status, "completed by MPI_Test alone");
}

// A nonblocking send followed by a call that returns only once the receiver has the message:
// the receiver takes it first and joins the call after. gddt may hold a send back until its
// pack is done, so every such call must post it first, or both ranks wait forever.
void send_then_block(const Context& context, const TypeCatalog& types) {
  const TypeCase& vector = types.named("vector_block64");
  const bool sender = context.rank == 0, receiver = context.rank == 1;
  const char* const calls[] = {"MPI_Barrier", "MPI_Allreduce", "MPI_Probe", "MPI_Iprobe"};
  for (int k = 0; k < 4; ++k) {
    const std::string what = std::string("a send held across ") + calls[k];
    RingMessage message(context, vector, 64, vector, 64, k);
    MPI_Request request = MPI_REQUEST_NULL;
    if (sender) {
      P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(), vector.type,
                                   context.next, k, MPI_COMM_WORLD, &request));
    }
    if (receiver) {
      MPI_Status status;
      P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(), vector.type,
                                  context.prev, k, MPI_COMM_WORLD, &status));
      message.check(&status, what);
    }
    int one = 1, sum = 0;
    if (k == 0) P2P_EXPECT_SUCCESS(MPI_Barrier(MPI_COMM_WORLD));
    if (k == 1) {
      P2P_EXPECT_SUCCESS(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
      expect(sum == context.size, what + ": the sum of ones is " + std::to_string(sum));
    }
    const int reply_tag = 100 + k;
    if (k >= 2 && receiver) {
      P2P_EXPECT_SUCCESS(MPI_Send(&one, 1, MPI_INT, context.prev, reply_tag, MPI_COMM_WORLD));
    }
    if (k >= 2 && sender) {
      MPI_Status status;
      if (k == 2) {
        P2P_EXPECT_SUCCESS(MPI_Probe(context.next, reply_tag, MPI_COMM_WORLD, &status));
      } else {
        poll_until(
            [&] {
              int found = 0;
              P2P_EXPECT_SUCCESS(MPI_Iprobe(context.next, reply_tag, MPI_COMM_WORLD, &found, &status));
              return found != 0;
            },
            what);
      }
      P2P_EXPECT_SUCCESS(MPI_Recv(&sum, 1, MPI_INT, context.next, reply_tag, MPI_COMM_WORLD, &status));
    }
    P2P_EXPECT_SUCCESS(MPI_Wait(&request, MPI_STATUS_IGNORE));
    expect(request == MPI_REQUEST_NULL, what + ": MPI_Wait must free the request");
  }
}

using Case = void (*)(const Context&, const TypeCatalog&);
const std::pair<const char*, Case> kCases[] = {
    {"exchange_both_ways", exchange_both_ways},
    {"many_outstanding_waitall", many_outstanding_waitall},
    {"many_outstanding_testsome", many_outstanding_testsome},
    {"progress_in_test_only", progress_in_test_only},
    {"send_then_block", send_then_block},
};

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_progress");
  const TypeCatalog types;
  for (const auto& [name, body] : kCases) {
    suite.run(name, [&types, body = body](const Context& context) { body(context, types); });
  }
  return suite.finish();
}
