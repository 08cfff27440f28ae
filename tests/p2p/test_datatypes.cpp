// Every datatype of the catalog, sent and received as itself and against the dense type of the
// same signature in both directions, and received by the library itself, with one element and
// with many.
#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

// The catalog's typemaps are what every check relies on: they must agree with MPI's view.
void catalog_matches_mpi(const Context&, const TypeCatalog& types) {
  for (const TypeCase& type : types.all()) {
    int size = 0;
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    MPI_Type_size(type.type, &size);
    MPI_Type_get_extent(type.type, &lb, &extent);
    MPI_Type_get_true_extent(type.type, &true_lb, &true_extent);
    std::int64_t low = INT64_MAX, high = INT64_MIN;
    for (const ByteRun& run : type.runs) {
      low = std::min(low, run.offset);
      high = std::max(high, run.offset + run.length);
    }
    const std::string described =
        " (catalog size " + std::to_string(type.size) + ", lb " + std::to_string(type.lb) +
        ", extent " + std::to_string(type.extent) + ", data in [" + std::to_string(low) + ", " +
        std::to_string(high) + "); MPI size " + std::to_string(size) + ", lb " +
        std::to_string(lb) + ", extent " + std::to_string(extent) + ", true lb " +
        std::to_string(true_lb) + ", true extent " + std::to_string(true_extent) + ")";
    expect(size == type.size && lb == type.lb && extent == type.extent && true_lb == low &&
               true_extent == high - low,
           "type " + type.name + " disagrees with MPI" + described);
    expect(type.size % type.unit.bytes == 0,
           "type " + type.name + " is not a whole number of signature units" + described);
  }
}

// Sends `send_count` of `send_type` to the next rank and receives the previous rank's message
// into `recv_count` of `recv_type`, non-blocking on both sides.
void exchange(const Context& context, const TypeCase& send_type, int send_count,
              const TypeCase& recv_type, int recv_count, int index, const std::string& what) {
  RingMessage message(context, send_type, send_count, recv_type, recv_count, index);
  MPI_Request requests[2];
  MPI_Status statuses[2];
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), recv_count, recv_type.type, context.prev,
                               index, MPI_COMM_WORLD, &requests[0]));
  P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), send_count, send_type.type, context.next,
                               index, MPI_COMM_WORLD, &requests[1]));
  P2P_EXPECT_SUCCESS(MPI_Waitall(2, requests, statuses));
  message.check(&statuses[0], what);
}

// The library itself receives what this rank sends through gddt, into host memory: a peer
// without gddt (or one whose receive gddt forwards) must get the bytes as its own datatype
// declares them, also for structs of mixed basic types beyond the size where MPICH refuses
// MPI_PACKED data.
void library_receives(const Context& context, const TypeCase& type, int count, int index, const std::string& what) {
  TypedBuffer send(type, count, context.memory, message_seed(context, context.rank, -index));
  send.fill(message_seed(context, context.rank, index));
  TypedBuffer host(type, count, MemoryKind::kHost, message_seed(context, context.rank, ~index));
  MPI_Request request;
  MPI_Status status;
  P2P_EXPECT_SUCCESS(PMPI_Irecv(host.address(), count, type.type, context.prev, index, MPI_COMM_WORLD, &request));
  P2P_EXPECT_SUCCESS(MPI_Send(send.address(), count, type.type, context.next, index, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(PMPI_Wait(&request, &status));
  host.expect_message(message_seed(context, context.prev, index), host.data_bytes(), what);
  send.expect_unchanged(what + ": send buffer");
}

void each_way(const Context& context, const TypeCatalog& types, const TypeCase& type) {
  const TypeCase& dense = types.contiguous_of(type.unit);
  // Many elements: up to 256 KiB of data.
  int many = static_cast<int>(std::clamp<std::int64_t>(262144 / type.size, 2, 4096));
  if (type.max_count > 0) many = std::min(many, type.max_count);
  int index = 0;
  for (int count : {1, many}) {
    const int dense_count = count * static_cast<int>(type.units());
    const std::string elements = " x" + std::to_string(count);
    exchange(context, type, count, type, count, index++, type.name + elements + " -> itself");
    exchange(context, type, count, dense, dense_count, index++,
             type.name + elements + " -> " + dense.name);
    exchange(context, dense, dense_count, type, count, index++,
             dense.name + " -> " + type.name + elements);
    library_receives(context, type, count, index++, type.name + elements + " -> the library's own receive");
  }
}

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  Suite suite(&argc, &argv, "p2p_datatypes");
  const TypeCatalog types;
  suite.run("catalog_matches_mpi",
            [&types](const Context& context) { catalog_matches_mpi(context, types); });
  for (const TypeCase& type : types.all()) {
    suite.run(type.name.c_str(),
              [&types, &type](const Context& context) { each_way(context, types, type); });
  }
  return suite.finish();
}
