// p2p_semantics: a receive freed while active, and a communicator freed under pending operations.
#include <mpi.h>

#include "harness.hpp"
#include "ring.hpp"
#include "semantics_cases.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {

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

}  // namespace gddt_test::p2p
