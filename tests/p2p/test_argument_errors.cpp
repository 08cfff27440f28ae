// Bad arguments of the send calls get the library's own error class, whatever path gddt would
// give the message (the peer protocol between gddt ranks, the raw format, staging): each call is
// made through gddt and through PMPI_* with the same arguments, on a communicator that returns
// errors, in every send mode, and a good message must still go through afterwards.
#include <mpi.h>

#include <climits>
#include <string>
#include <vector>

#include "harness.hpp"
#include "mpi_quirks.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

int error_class(int code) {
  int error = MPI_SUCCESS;
  MPI_Error_class(code, &error);
  return error;
}

// One send mode, called through gddt (the MPI_ name) or the library (PMPI_).
struct SendMode {
  const char* name;
  int (*through_gddt)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  int (*through_library)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
};

#define GDDT_BLOCKING_MODE(mode)                                                                   \
  SendMode {                                                                                      \
    "MPI_" #mode,                                                                                 \
        [](const void* b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request*) {       \
          return MPI_##mode(b, n, t, d, g, c);                                                     \
        },                                                                                        \
        [](const void* b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request*) {       \
          return PMPI_##mode(b, n, t, d, g, c);                                                    \
        }                                                                                         \
  }
#define GDDT_REQUEST_MODE(mode) SendMode{"MPI_" #mode, MPI_##mode, PMPI_##mode}

const std::vector<SendMode>& send_modes() {
  static const std::vector<SendMode> modes = {
      GDDT_BLOCKING_MODE(Send),  GDDT_BLOCKING_MODE(Ssend), GDDT_BLOCKING_MODE(Rsend),
      GDDT_BLOCKING_MODE(Bsend), GDDT_REQUEST_MODE(Isend),  GDDT_REQUEST_MODE(Issend),
      GDDT_REQUEST_MODE(Irsend), GDDT_REQUEST_MODE(Ibsend)};
  return modes;
}

void bad_send_envelopes(const Context& context, const TypeCatalog& types) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const WorldErrorCounter world_errors;
  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &found);
  std::vector<int> bad_tags = {-5, MPI_ANY_TAG};
  if (found && *tag_ub < INT_MAX) bad_tags.push_back(*tag_ub + 1);
  const std::vector<int> bad_ranks = {context.size, -7};
  const TypeCase& vector = types.named("vector_block64");
  std::vector<char> attached(1 << 16);
  MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
  RingMessage message(context, vector, 2, vector, 2, 70);
  for (const SendMode& mode : send_modes()) {
    auto compare = [&](int dest, int tag, const std::string& what) {
      MPI_Request request = MPI_REQUEST_NULL, library_request = MPI_REQUEST_NULL;
      const int rc = mode.through_gddt(message.send.address(), 2, vector.type, dest, tag, comm, &request);
      const int library_rc =
          mode.through_library(message.send.address(), 2, vector.type, dest, tag, comm, &library_request);
      expect(rc != MPI_SUCCESS && error_class(rc) == error_class(library_rc),
             std::string(mode.name) + " " + what + ": error class " + std::to_string(error_class(rc)) +
                 ", the library's " + std::to_string(error_class(library_rc)));
    };
    for (int tag : bad_tags) compare(context.next, tag, "with tag " + std::to_string(tag));
    for (int rank : bad_ranks) compare(rank, 70, "to rank " + std::to_string(rank));
  }
  // Nothing was sent: the ring's message arrives as the only one.
  MPI_Request recv;
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), 2, vector.type, context.prev, 70, comm, &recv));
  P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), 2, vector.type, context.next, 70, comm));
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Wait(&recv, &status));
  message.check(&status, "the ring's message after the refused sends");
  void* detached = nullptr;
  int detached_size = 0;
  MPI_Buffer_detach(&detached, &detached_size);
  MPI_Comm_free(&comm);
}

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_argument_errors");
  const TypeCatalog types;
  suite.run("bad_send_envelopes", [&types](const Context& context) { bad_send_envelopes(context, types); });
  return suite.finish();
}
