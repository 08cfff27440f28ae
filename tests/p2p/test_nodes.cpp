// One machine as several nodes (GDDT_NODE_SPLIT=N: runs of N consecutive world ranks; ctest also
// switches the MPI library's shared memory off, usage.md "Testing a multi-node job on one machine").
// A communicator of one node's ranks takes the peer protocol where the library allows it (not
// MPICH 4.0, where gddt keeps it off); messages to another node, and every message on a
// communicator spanning nodes, take the raw format, and no CUDA IPC mapping is made for them.
// gddt's counters (gddt_counter) prove which path each message took; every message is checked
// byte for byte, gaps and margins untouched. A plain MPI process understands a gddt process of
// another node: the library's own calls (PMPI_*) on one side, and with --plain-rank R a whole
// process without gddt (it starts itself again with GDDT_DISABLE=1 before MPI_Init), whose node
// then stays off the peer protocol while the other keeps it.
#include <dlfcn.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness.hpp"
#include "message.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

// What the launcher says of this process before MPI_Init (the world rank), -1 where it does not.
int launcher_rank() {
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* text = std::getenv(variable)) return std::atoi(text);
  }
  return -1;
}

long long counter(const char* name) {
  using CounterFunction = int (*)(const char*, long long*);
  static const auto function = reinterpret_cast<CounterFunction>(dlsym(RTLD_DEFAULT, "gddt_counter"));
  long long value = 0;
  return function != nullptr && function(name, &value) == 0 ? value : 0;
}

long long sum(std::initializer_list<const char*> names) {
  long long total = 0;
  for (const char* name : names) total += counter(name);
  return total;
}

// The counters that tell the paths apart.
struct Paths {
  long long peer_sends = sum({"p2p.peer-inline.sides", "p2p.peer-ipc.sides", "p2p.peer-staged.sides"});
  // Sides gddt handed to the library in the raw format, staged or unchanged (under MPICH a host
  // send keeps the user's datatype, which the library packs itself).
  long long raw_sides = sum({"p2p.forward.sides", "p2p.device-bytes.sides", "p2p.device-staged.sides",
                             "p2p.host-span.sides", "p2p.host-staged.sides"});
  long long markers = counter("peer.markers");
  long long ipc = sum({"p2p.peer-ipc.sides", "peer.direct.sends", "peer.ipc.mappings", "peer.ipc.bytes"});
  long long agreed = counter("peer.agreed.comms");
};

struct Nodes {
  int split = 0;
  int node = 0;
  int plain_rank = -1;
  bool plain = false;  // this process runs without gddt
  // Whether this process's node takes the peer protocol: gddt in all its processes, a library
  // where gddt allows the protocol.
  bool protocol = false;
};

Nodes nodes_of(const Context& context, int plain_rank) {
  Nodes n;
  const char* split = std::getenv("GDDT_NODE_SPLIT");
  n.split = split != nullptr ? std::atoi(split) : 0;
  n.node = n.split > 0 ? context.rank / n.split : 0;
  n.plain_rank = plain_rank;
  n.plain = context.rank == plain_rank;
#if defined(MPICH_VERSION)
  const bool library_allows = false;  // MPICH 4.0's MPI_Isendrecv status is empty: gddt keeps it off
#else
  const bool library_allows = true;
#endif
  n.protocol = library_allows && (plain_rank < 0 || plain_rank / n.split != n.node);
  return n;
}

// The communicator context of `comm`: its rank, and the neighbours this process sends to and
// receives from.
Context on(const Context& world, MPI_Comm comm, int to, int from) {
  Context context = world;
  MPI_Comm_rank(comm, &context.rank);
  MPI_Comm_size(comm, &context.size);
  context.next = to;
  context.prev = from;
  return context;
}

// Messages small enough for the peer protocol's header, a 3-D face, and a large vector (its staged
// plane, or CUDA IPC on device memory).
struct Shape {
  const char* type;
  int count;
};
constexpr Shape kShapes[] = {{"vector_block64", 1}, {"subarray3d_face_y", 8}, {"vector_block4k", 16}};

// Sends every shape to `context.next` and receives it from `context.prev` on `comm`, checking each;
// returns how many messages this process sent.
long exchange(const Context& context, const TypeCatalog& types, MPI_Comm comm, const std::string& what) {
  long sent = 0;
  int index = 0;
  for (const Shape& shape : kShapes) {
    const TypeCase& type = types.named(shape.type);
    RingMessage message(context, type, shape.count, type, shape.count, ++index);
    MPI_Request request;
    MPI_Status status;
    P2P_EXPECT_SUCCESS(
        MPI_Irecv(message.recv.address(), shape.count, type.type, context.prev, message.index(), comm, &request));
    P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), shape.count, type.type, context.next, message.index(), comm));
    P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
    message.check(&status, what + ", " + shape.type);
    ++sent;
  }
  return sent;
}

void expect_delta(long long got, long long want, const std::string& what) {
  expect(got == want, what + ": " + std::to_string(got) + ", expected " + std::to_string(want));
}

// Constructors agree (protocol/peer/channels.cpp) on a communicator of one node's ranks only.
void agreement(const Context& context, const TypeCatalog&, const Nodes& n) {
  const Paths before;
  MPI_Comm node = MPI_COMM_NULL, across = MPI_COMM_NULL, world = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, n.node, context.rank, &node);
  const long long after_node = Paths().agreed;
  MPI_Comm_split(MPI_COMM_WORLD, context.rank % n.split, context.rank, &across);
  MPI_Comm_dup(MPI_COMM_WORLD, &world);
  const long long after_all = Paths().agreed;
  expect_delta(after_node - before.agreed, n.protocol && !n.plain ? 1 : 0, "communicators of one node agreed");
  expect_delta(after_all - after_node, 0, "communicators spanning nodes agreed");
  MPI_Comm_free(&node);
  MPI_Comm_free(&across);
  MPI_Comm_free(&world);
}

// Within a node: a ring over its own communicator takes the peer protocol; over MPI_COMM_WORLD,
// which spans nodes, the same pairs take the raw format.
void within_node(const Context& world, const TypeCatalog& types, const Nodes& n) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, n.node, world.rank, &node);
  int rank = 0, size = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);
  const Context local = on(world, node, (rank + 1) % size, (rank + size - 1) % size);
  const Paths before;
  const long sent = exchange(local, types, node, "node communicator");
  const Paths middle;
  const bool peers = n.protocol && !n.plain;
  expect_delta(middle.peer_sends - before.peer_sends, peers ? sent : 0, "peer-protocol sends within the node");
  expect_delta(middle.markers - before.markers, peers ? sent : 0, "markers resolved within the node");
  // A watched receive lands in staging to read the marker, so it counts as a raw side either way.
  expect_delta(middle.raw_sides - before.raw_sides, n.plain ? 0 : peers ? sent : 2 * sent,
               "raw-format sides within the node");
  const int first = n.node * n.split;
  const Context spanning = on(world, MPI_COMM_WORLD, first + local.next, first + local.prev);
  exchange(spanning, types, MPI_COMM_WORLD, "MPI_COMM_WORLD within the node");
  const Paths after;
  expect_delta(after.peer_sends - middle.peer_sends, 0, "peer-protocol sends on MPI_COMM_WORLD");
  expect_delta(after.raw_sides - middle.raw_sides, n.plain ? 0 : 2 * sent, "raw-format sides on MPI_COMM_WORLD");
  MPI_Comm_free(&node);
}

// Between nodes: each process sends to the process at its place in the next node and receives from
// the previous node, on MPI_COMM_WORLD and on a communicator of one rank per node. Nothing takes
// the peer protocol or CUDA IPC.
void between_nodes(const Context& world, const TypeCatalog& types, const Nodes& n) {
  const Paths before;
  const int to = (world.rank + n.split) % world.size, from = (world.rank + world.size - n.split) % world.size;
  const long sent = exchange(on(world, MPI_COMM_WORLD, to, from), types, MPI_COMM_WORLD, "to the next node");
  MPI_Comm across = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world.rank % n.split, world.rank, &across);
  int rank = 0, size = 0;
  MPI_Comm_rank(across, &rank);
  MPI_Comm_size(across, &size);
  exchange(on(world, across, (rank + 1) % size, (rank + size - 1) % size), types, across, "one rank per node");
  MPI_Comm_free(&across);
  const Paths after;
  expect_delta(after.peer_sends - before.peer_sends, 0, "peer-protocol sends between nodes");
  expect_delta(after.markers - before.markers, 0, "markers between nodes");
  expect_delta(after.ipc - before.ipc, 0, "CUDA IPC sends, lent buffers, mappings and bytes between nodes");
  expect_delta(after.raw_sides - before.raw_sides, n.plain ? 0 : 4 * sent, "raw-format sides between nodes");
}

// A process of node 0 and its counterpart of node 1: one side through gddt on the run's memory, the
// other the library's own call on host memory, as a process without gddt would make it; each way.
void plain_counterpart(const Context& world, const TypeCatalog& types, const Nodes& n) {
  if (world.rank >= 2 * n.split) return;
  const bool first = n.node == 0;
  const int other = first ? world.rank + n.split : world.rank - n.split;
  int index = 100;
  for (const Shape& shape : kShapes) {
    const TypeCase& type = types.named(shape.type);
    for (const bool gddt_sends : {true, false}) {
      ++index;
      const bool sending = first == gddt_sends;  // node 0 runs gddt's side
      const MemoryKind kind = first ? world.memory : MemoryKind::kHost;
      const int source = sending ? world.rank : other;
      TypedBuffer buffer(type, shape.count, kind, message_seed(world, world.rank, -index));
      const std::string what = std::string(shape.type) + (gddt_sends ? " from gddt" : " from the library");
      const auto send = first ? MPI_Send : PMPI_Send;
      const auto receive = first ? MPI_Recv : PMPI_Recv;
      if (sending) {
        buffer.fill(message_seed(world, source, index));
        P2P_EXPECT_SUCCESS(send(buffer.address(), shape.count, type.type, other, index, MPI_COMM_WORLD));
        buffer.expect_unchanged(what + ", send buffer");
      } else {
        MPI_Status status;
        P2P_EXPECT_SUCCESS(receive(buffer.address(), shape.count, type.type, other, index, MPI_COMM_WORLD, &status));
        buffer.expect_message(message_seed(world, source, index), buffer.data_bytes(), what);
        expect_status(status, other, index, type.type, shape.count, what);
      }
    }
  }
}

// Takes --plain-rank R out of the arguments; where this process is world rank R and has not yet,
// starts itself again without gddt.
int plain_rank_option(int* argc, char** argv) {
  int plain_rank = -1;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp(argv[i], "--plain-rank") == 0 && i + 1 < *argc) {
      plain_rank = std::atoi(argv[++i]);
    } else {
      argv[kept++] = argv[i];
    }
  }
  if (plain_rank >= 0 && launcher_rank() == plain_rank && std::getenv("GDDT_DISABLE") == nullptr) {
    setenv("GDDT_DISABLE", "1", 1);
    std::vector<char*> again(argv, argv + *argc);
    again.push_back(nullptr);
    execv("/proc/self/exe", again.data());
    std::perror("p2p_nodes: execv");
    std::exit(1);
  }
  *argc = kept;
  argv[kept] = nullptr;
  return plain_rank;
}

}  // namespace
}  // namespace gddt_test::p2p

int main(int argc, char** argv) {
  using namespace gddt_test::p2p;
  const int plain_rank = plain_rank_option(&argc, argv);
  Suite suite(&argc, &argv, "p2p_nodes");
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* split = std::getenv("GDDT_NODE_SPLIT");
  const int per_node = split != nullptr ? std::atoi(split) : 0;
  if (per_node < 2 || size < 2 * per_node) {
    if (rank == 0) std::fprintf(stderr, "p2p_nodes: needs GDDT_NODE_SPLIT >= 2 and two nodes of that many ranks\n");
    return 2;
  }
  TypeCatalog types;
  suite.run("plain_rank_is_plain", [plain_rank](const Context& context) {
    const char* disabled = std::getenv("GDDT_DISABLE");
    const bool plain = disabled != nullptr && std::strcmp(disabled, "1") == 0;
    expect(plain == (context.rank == plain_rank), "GDDT_DISABLE=1 in exactly the process of --plain-rank");
  });
  auto with_nodes = [&](void (*body)(const Context&, const TypeCatalog&, const Nodes&)) {
    return [&types, plain_rank, body](const Context& context) { body(context, types, nodes_of(context, plain_rank)); };
  };
  suite.run("agreement", with_nodes(agreement));
  suite.run("within_node", with_nodes(within_node));
  suite.run("between_nodes", with_nodes(between_nodes));
  suite.run("plain_counterpart", with_nodes(plain_counterpart));
  return suite.finish();
}
