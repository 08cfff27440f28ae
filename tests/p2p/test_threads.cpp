// MPI_THREAD_MULTIPLE: several threads per rank communicate at once, each on its own tags, with
// blocking and non-blocking calls mixed. Skipped when the library does not provide the level.
#include <mpi.h>

#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

constexpr int kThreads = 4;
constexpr int kRounds = 24;

// One round of thread `thread` on tag-distinct message `index`; the round number picks the
// calls, so both ends of a message agree on them.
void thread_round(const Context& context, const TypeCatalog& types, int thread, int round) {
  const int index = thread * 1000 + round;
  const bool large = round % 6 == 5;  // 1 MiB now and then, beyond any eager limit
  RingMessage message(context, types.named(large ? "vector_block4k" : "subarray3d_face_y"),
                      large ? 64 : 3, types.named("int"), large ? 262144 : 384, index);
  const int tag = index;
  const std::string what = "thread " + std::to_string(thread) + " round " + std::to_string(round);
  MPI_Status status;
  MPI_Request requests[2];
  switch (round % 4) {
    case 0:  // non-blocking both ways
      P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), message.recv.count(), MPI_INT,
                                   context.prev, tag, MPI_COMM_WORLD, &requests[0]));
      P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(),
                                   message.send.type().type, context.next, tag, MPI_COMM_WORLD,
                                   &requests[1]));
      P2P_EXPECT_SUCCESS(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
      message.check(nullptr, what + ", MPI_Isend/MPI_Irecv");
      return;
    case 1:
      P2P_EXPECT_SUCCESS(MPI_Sendrecv(message.send.address(), message.send.count(),
                                      message.send.type().type, context.next, tag,
                                      message.recv.address(), message.recv.count(), MPI_INT,
                                      context.prev, tag, MPI_COMM_WORLD, &status));
      message.check(&status, what + ", MPI_Sendrecv");
      return;
    case 2:  // synchronous send in flight while the thread blocks in MPI_Recv
      P2P_EXPECT_SUCCESS(MPI_Issend(message.send.address(), message.send.count(),
                                    message.send.type().type, context.next, tag, MPI_COMM_WORLD,
                                    &requests[1]));
      P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(), MPI_INT,
                                  context.prev, tag, MPI_COMM_WORLD, &status));
      P2P_EXPECT_SUCCESS(MPI_Wait(&requests[1], MPI_STATUS_IGNORE));
      message.check(&status, what + ", MPI_Issend/MPI_Recv");
      return;
    default: {  // matched probe: the thread-safe way to probe
      P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), message.send.count(),
                                   message.send.type().type, context.next, tag, MPI_COMM_WORLD,
                                   &requests[1]));
      MPI_Message handle;
      P2P_EXPECT_SUCCESS(MPI_Mprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &handle, &status));
      P2P_EXPECT_SUCCESS(
          MPI_Mrecv(message.recv.address(), message.recv.count(), MPI_INT, &handle, &status));
      P2P_EXPECT_SUCCESS(MPI_Wait(&requests[1], MPI_STATUS_IGNORE));
      message.check(&status, what + ", MPI_Mprobe/MPI_Mrecv");
    }
  }
}

void threads_communicate_at_once(const Context& context, const TypeCatalog& types) {
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([&context, &types, thread] {
      try {
        for (int round = 0; round < kRounds; ++round) {
          thread_round(context, types, thread, round);
        }
      } catch (const std::exception& error) {
        fail("thread " + std::to_string(thread) + ": exception: " + error.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_threads", MPI_THREAD_MULTIPLE);
  if (suite.thread_level() < MPI_THREAD_MULTIPLE) {
    suite.skip("the MPI library provides thread level " + std::to_string(suite.thread_level()) +
               ", not MPI_THREAD_MULTIPLE");
  }
  const TypeCatalog types;
  suite.run("threads_communicate_at_once",
            [&types](const Context& context) { threads_communicate_at_once(context, types); });
  return suite.finish();
}
