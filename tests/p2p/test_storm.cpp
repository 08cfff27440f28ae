// The storm: thousands of random messages between random pairs of ranks, with random sizes (up
// to 1 MiB), datatypes, tags, wildcards, send modes, receive styles and completion functions,
// every byte checked. The plan derives from the run's seed alone, so every rank computes the
// same plan and a failure names the seed that reproduces it.
//
// Messages go in rounds. Within a round each rank
//   1. posts its early receives (MPI_Irecv, or MPI_Recv_init + MPI_Start),
//   2. after a barrier (ready-mode sends need their receives posted), starts its non-blocking
//      sends,
//   3. runs its blocking sends and late receives (blocking receives, probes) in plan order,
//   4. completes everything outstanding with randomly chosen completion functions,
// and ends with a barrier, followed by a round of truncated messages (truncation_phase).
// Blocking operations all run in one global order, and everything
// they could wait for was posted before, so no round can deadlock. Wildcards are used only
// where they cannot match another message of the round, and messages sharing source,
// destination and tag keep sending order equal to receive posting order, so each receive
// knows which message it must get.
// The plan: storm_plan.hpp; a round on one rank: storm_round.hpp.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "harness.hpp"
#include "message.hpp"
#include "mpi_quirks.hpp"
#include "ring.hpp"
#include "storm_plan.hpp"
#include "storm_round.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

constexpr int kDefaultMessages = 3000;
constexpr int kMessagesPerRound = 40;

// Truncated messages, after each round: every rank sends one message to the next rank, which
// receives it into room for fewer elements, by MPI_Recv, MPI_Irecv + MPI_Wait or MPI_Irecv +
// MPI_Waitall, on a communicator that returns errors. The receive gets MPI_ERR_TRUNCATE and
// nothing outside its typemap changes; the send completes. Long messages too, which Open MPI
// 4.1's shared-memory single-copy path writes past a contiguous receive buffer: that library
// alone fails this phase for contiguous receive types.
void truncation_phase(const Context& context, const TypeCatalog& types, MPI_Comm comm, int round) {
  // Some libraries raise request errors on MPI_COMM_WORLD's handler (mpi_quirks.hpp).
  const WorldErrorCounter world_errors;
  Random plan(mix_seed(context.seed, 0x7472756e + static_cast<std::uint64_t>(round)));
  struct Truncated {
    const TypeCase* send_type;
    int send_count;
    const TypeCase* recv_type;
    int recv_count;
    int how;  // 0 MPI_Recv, 1 MPI_Irecv + MPI_Wait, 2 MPI_Irecv + MPI_Waitall
  };
  std::vector<Truncated> messages;
  for (int source = 0; source < context.size; ++source) {
    const std::vector<TypeCase>& all = types.all();
    const TypeCase& send_type = all[plan.between(0, static_cast<std::int64_t>(all.size()) - 1)];
    std::vector<const TypeCase*> receivers;
    for (const TypeCase& type : all)
      if (type.unit.name == send_type.unit.name) receivers.push_back(&type);
    const TypeCase& recv_type = *receivers[plan.between(0, static_cast<std::int64_t>(receivers.size()) - 1)];
    std::int64_t bytes = plan.between(2, std::int64_t{1} << plan.between(1, 20));
    std::int64_t send_count = std::max<std::int64_t>(1, bytes / send_type.size);
    if (send_type.max_count > 0) send_count = std::min<std::int64_t>(send_count, send_type.max_count);
    send_count = std::min(send_count, kMaxMessageBytes / send_type.size);
    // Room for at least one unit of the signature fewer than the message holds.
    const std::int64_t sent_bytes = send_count * send_type.size;
    std::int64_t recv_count = (sent_bytes - send_type.unit.bytes) / recv_type.size;
    recv_count = std::max<std::int64_t>(0, recv_count - plan.between(0, 2));
    if (recv_type.max_count > 0) recv_count = std::min<std::int64_t>(recv_count, recv_type.max_count);
    messages.push_back({&send_type, static_cast<int>(send_count), &recv_type, static_cast<int>(recv_count),
                        static_cast<int>(plan.between(0, 2))});
  }
  const Truncated& out = messages[static_cast<std::size_t>(context.rank)];
  const Truncated& in = messages[static_cast<std::size_t>(context.prev)];
  const std::uint64_t seed = mix_seed(context.seed, 0x74000000 + static_cast<std::uint64_t>(round));
  TypedBuffer sent(*out.send_type, out.send_count, context.memory, mix_seed(seed, context.rank));
  sent.fill(mix_seed(seed, 100 + context.rank));
  TypedBuffer received(*in.recv_type, in.recv_count, context.memory, mix_seed(seed, 200 + context.rank));
  const std::string what = "round " + std::to_string(round) + ": " + in.send_type->name + " x" +
                           std::to_string(in.send_count) + " from rank " + std::to_string(context.prev) +
                           " truncated into " + in.recv_type->name + " x" + std::to_string(in.recv_count);
  MPI_Request send_request;
  P2P_EXPECT_SUCCESS(MPI_Isend(sent.address(), out.send_count, out.send_type->type, context.next, 90, comm,
                               &send_request));
  int error = MPI_SUCCESS;
  MPI_Status status;
  MPI_Request request;
  switch (in.how) {
    case 0:
      error = MPI_Recv(received.address(), in.recv_count, in.recv_type->type, context.prev, 90, comm, &status);
      break;
    case 1:
      P2P_EXPECT_SUCCESS(
          MPI_Irecv(received.address(), in.recv_count, in.recv_type->type, context.prev, 90, comm, &request));
      error = MPI_Wait(&request, &status);
      break;
    default:
      P2P_EXPECT_SUCCESS(
          MPI_Irecv(received.address(), in.recv_count, in.recv_type->type, context.prev, 90, comm, &request));
      error = MPI_Waitall(1, &request, &status);
      expect(error == MPI_ERR_IN_STATUS || error == MPI_ERR_TRUNCATE,
             what + ": MPI_Waitall returned " + std::to_string(error));
      error = status.MPI_ERROR;
  }
  int error_class = MPI_SUCCESS;
  MPI_Error_class(error, &error_class);
  expect(error_class == MPI_ERR_TRUNCATE, what + ": error class " + std::to_string(error_class) +
                                              ", expected MPI_ERR_TRUNCATE");
  received.expect_unchanged_outside_typemap(what);
  P2P_EXPECT_SUCCESS(MPI_Wait(&send_request, MPI_STATUS_IGNORE));
  sent.expect_unchanged(what + ", send buffer");
}

void storm(const Context& context, const TypeCatalog& types) {
  const int messages = context.messages > 0 ? static_cast<int>(context.messages) : kDefaultMessages;
  std::vector<char> attached(kAttachedBytes);
  MPI_Buffer_attach(attached.data(), kAttachedBytes);
  Planner planner(context, types);
  // Truncation errors return, on this communicator.
  MPI_Comm truncating;
  MPI_Comm_dup(MPI_COMM_WORLD, &truncating);
  MPI_Comm_set_errhandler(truncating, MPI_ERRORS_RETURN);
  Random local_random(
      mix_seed(context.seed, 0x6c6f63616c + static_cast<std::uint64_t>(context.rank)));
  std::int64_t bytes = 0;
  int round = 0;
  for (int first = 0; first < messages; first += kMessagesPerRound, ++round) {
    const std::vector<PlannedMessage> plan =
        planner.round(round, first, std::min(kMessagesPerRound, messages - first));
    StormRound storm_round(context, plan, &local_random);
    storm_round.run();
    bytes += storm_round.bytes_received();
    MPI_Barrier(MPI_COMM_WORLD);
    if (context.size > 1) truncation_phase(context, types, truncating, round);
  }
  MPI_Comm_free(&truncating);
  void* detached = nullptr;
  int detached_size = 0;
  MPI_Buffer_detach(&detached, &detached_size);
  MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (context.rank == 0) {
    std::printf("storm: %d messages in %d rounds, %.1f MiB checked\n", messages, round,
                bytes / 1048576.0);
  }
}

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_storm");
  const TypeCatalog types;
  suite.run("storm", [&types](const Context& context) { storm(context, types); });
  return suite.finish();
}
