// The flood: one sender, one receiver, blocking sends of small nested datatypes message after
// message, as MPICH's pingping test does it: in batches, each on a communicator of its own and
// with the datatypes made anew (duplicates of the catalog's, so gddt meets new handles), counts 1
// to 512, a barrier between batches; every message's bytes are checked. It prints the time per
// message beside a contiguous message of the same bytes through the library alone (PMPI_Send of
// MPI_BYTE from the same memory kind where the library takes it), never asserted: the speed
// target lives in gddt-bench's flood table. Ranks beyond the first two wait at the barriers.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "harness.hpp"
#include "message.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

constexpr int kBatches = 3;
constexpr int kTag = 11;
const char* const kNested[] = {"vector_of_struct", "struct_mixed", "subarray3d_face_x", "indexed"};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Per message, the seconds of the flood through gddt and of the same bytes contiguous through the
// library, summed over the batches.
struct Times {
  double nested = 0, contiguous = 0;
  long messages = 0;
};

void flood(const Context& context, const TypeCatalog& types) {
  if (context.size < 2) return;
  const bool sender = context.rank == 0, receiver = context.rank == 1;
  // Contiguous device bytes go to the library only where it takes device pointers; elsewhere that
  // comparison runs on host memory.
  Times times;
  for (int batch = 0; batch < kBatches; ++batch) {
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, context.rank < 2 ? 0 : MPI_UNDEFINED, context.rank, &comm);
    for (const char* name : kNested) {
      const TypeCase& original = types.named(name);
      TypeCase fresh = original;
      MPI_Type_dup(original.type, &fresh.type);  // a new handle: analysed anew
      for (int count = 1; count <= 512 && (sender || receiver); count *= 2) {
        if (original.max_count > 0 && count > original.max_count) break;
        const int index = batch * 10000 + count;
        TypedBuffer message(fresh, count, context.memory, message_seed(context, 0, -index));
        if (sender) message.fill(message_seed(context, 0, index));
        const double start = now();
        if (sender) {
          P2P_EXPECT_SUCCESS(MPI_Send(message.address(), count, fresh.type, 1, kTag, comm));
        } else {
          MPI_Status status;
          P2P_EXPECT_SUCCESS(MPI_Recv(message.address(), count, fresh.type, 0, kTag, comm, &status));
          message.expect_message(message_seed(context, 0, index), message.data_bytes(),
                                 std::string("flood batch ") + std::to_string(batch) + ", " + name + " x" +
                                     std::to_string(count));
        }
        times.nested += now() - start;
        std::vector<char> bytes(static_cast<std::size_t>(message.data_bytes()));
        const double contiguous_start = now();
        if (sender)
          PMPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 1, kTag, comm);
        else
          PMPI_Recv(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kTag, comm, MPI_STATUS_IGNORE);
        times.contiguous += now() - contiguous_start;
        ++times.messages;
      }
      MPI_Type_free(&fresh.type);
    }
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (receiver && times.messages > 0) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "flood: %ld messages, %.2f us each through gddt (%s memory), %.2f us each as the same bytes "
                  "contiguous from host memory through the library: %.2fx",
                  times.messages, times.nested / times.messages * 1e6, gddt_test::memory_kind_name(context.memory),
                  times.contiguous / times.messages * 1e6, times.nested / times.contiguous);
    std::printf("%s\n", text);
  }
}

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_flood");
  const TypeCatalog types;
  suite.run("flood", [&types](const Context& context) { flood(context, types); });
  return suite.finish();
}
