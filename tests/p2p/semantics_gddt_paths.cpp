// p2p_semantics: gddt's own paths: layouts crossing the direct plane, lent sends completed after
// MPI_Isend, the counters, the staged plane's parts, types readied at commit, windows and lone
// messages in turn.
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "harness.hpp"
#include "ring.hpp"
#include "semantics_cases.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {
namespace {

using CounterFunction = int (*)(const char*, long long*);

// gddt_counter, looked up so that a preloaded gddt serves too; null, and a failed expectation,
// where gddt is not in the process.
CounterFunction exported_counter() {
  const auto counter = reinterpret_cast<CounterFunction>(dlsym(RTLD_DEFAULT, "gddt_counter"));
  expect(counter != nullptr, "gddt_counter is exported");
  return counter;
}

// Counter `name`, 0 where gddt has none of that name.
long long counter_value(CounterFunction counter, const char* name) {
  long long value = 0;
  return counter(name, &value) == 0 ? value : 0;
}

}  // namespace

// Messages of 2 MiB between buffers of allocations of their own, each side's layout another of
// the same signature (64-byte blocks, 4-byte words, contiguous, a 3-D face), each pair in rounds
// back to back: with CUDA IPC on device memory the direct plane moves them, the receiver reading
// or the sender writing (GDDT_PEER_DIRECTION), each send waiting in MPI_Send while its receiver,
// active from the round before, resolves it.
void lent_layouts_cross(const Context& context, const TypeCatalog& types) {
  struct Pair {
    const char* send;
    int send_count;
    const char* recv;
    int recv_count;
  };
  const Pair pairs[] = {{"vector_block64", 2048, "vector_block4", 8192},
                        {"vector_block4", 8192, "int", 1 << 19},
                        {"int", 1 << 19, "subarray3d_face_y", 4096},
                        {"subarray3d_face_y", 4096, "vector_block64", 2048}};
  int index = 0;
  for (const Pair& pair : pairs) {
    const TypeCase& send_type = types.named(pair.send);
    const TypeCase& recv_type = types.named(pair.recv);
    for (int round = 0; round < 3; ++round) {
      RingMessage message(context, send_type, pair.send_count, recv_type, pair.recv_count, ++index);
      MPI_Request request;
      MPI_Status status;
      P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), pair.recv_count, recv_type.type, context.prev,
                                   message.index(), MPI_COMM_WORLD, &request));
      P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), pair.send_count, send_type.type, context.next,
                                  message.index(), MPI_COMM_WORLD));
      P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
      message.check(&status, std::string(pair.send) + " into " + pair.recv + ", round " + std::to_string(round));
    }
  }
}

// A send that lends its buffer (the direct plane) is done once its receiver has read it, which its
// MPI_Isend does not wait for: each rank posts the receive of its previous rank's message only once
// its own MPI_Isend has returned, and answers that rank once the message is in; only then does
// anyone wait for a send. A send completed inside MPI_Isend would have found its receiver not
// reading yet and been taken back for a copy (peer.direct.copies). A first message, received as
// usual, shows each sender its receiver's GPU (GDDT_IPC=auto lends only then).
void lent_isend_returns_unread(const Context& context, const TypeCatalog& types) {
  const CounterFunction counter = exported_counter();
  if (counter == nullptr) return;
  const auto value_of = [counter](const char* name) { return counter_value(counter, name); };
  const TypeCase& vector = types.named("vector_block64");
  constexpr int kCount = 2048;  // 2 MiB packed, large enough to be lent on one GPU
  {
    RingMessage first(context, vector, kCount, vector, kCount, 1);
    MPI_Request request;
    MPI_Status status;
    P2P_EXPECT_SUCCESS(MPI_Irecv(first.recv.address(), kCount, vector.type, context.prev, first.index(),
                                 MPI_COMM_WORLD, &request));
    P2P_EXPECT_SUCCESS(MPI_Send(first.send.address(), kCount, vector.type, context.next, first.index(),
                                MPI_COMM_WORLD));
    P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
    first.check(&status, "the first message");
  }
  const long long lent_before = value_of("peer.direct.sends"), copies_before = value_of("peer.direct.copies");
  RingMessage message(context, vector, kCount, vector, kCount, 2);
  MPI_Request request;
  P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), kCount, vector.type, context.next, message.index(),
                               MPI_COMM_WORLD, &request));
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), kCount, vector.type, context.prev, message.index(),
                              MPI_COMM_WORLD, &status));
  constexpr int kAnswerTag = 3;
  int answer = 1, answered = 0;
  P2P_EXPECT_SUCCESS(MPI_Sendrecv(&answer, 1, MPI_INT, context.prev, kAnswerTag, &answered, 1, MPI_INT, context.next,
                                  kAnswerTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  P2P_EXPECT_SUCCESS(MPI_Wait(&request, MPI_STATUS_IGNORE));
  message.check(&status, "a message received after the MPI_Isend that lent it returned");
  if (value_of("peer.direct.sends") > lent_before)
    expect(value_of("peer.direct.copies") == copies_before,
           "a lent send read by its receiver, not taken back for a copy (" +
               std::to_string(value_of("peer.direct.copies") - copies_before) + " copies)");
}

// gddt counts what it does (gddt_counter, looked up so that a preloaded gddt serves too): every
// side of a derived-type message it examines counts once, and a receive it stages (every
// memory kind, GDDT_P2P_HOST=gddt) counts as staged (a send of the peer protocol counts as its
// plane); an unknown name is refused.
void counters_count_sides(const Context& context, const TypeCatalog& types) {
  const CounterFunction counter = exported_counter();
  if (counter == nullptr) return;
  const char* const staged[] = {"p2p.device-bytes.sides", "p2p.device-staged.sides", "p2p.host-span.sides",
                                "p2p.host-staged.sides", "p2p.peer-inline.sides", "p2p.peer-ipc.sides",
                                "p2p.peer-staged.sides"};
  auto sum = [&](bool with_forward) {
    long long total = 0, value = 0;
    for (const char* name : staged) total += counter(name, &value) == 0 ? value : 0;
    if (with_forward && counter("p2p.forward.sides", &value) == 0) total += value;
    return total;
  };
  const long long sides_before = sum(true), staged_before = sum(false);
  const TypeCase& vector = types.named("vector_block64");
  RingMessage message(context, vector, 2, vector, 2, 1);
  MPI_Request request;
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), 2, vector.type, context.prev, message.index(),
                               MPI_COMM_WORLD, &request));
  P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), 2, vector.type, context.next, message.index(),
                              MPI_COMM_WORLD));
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
  message.check(&status, "the counted message");
  expect(sum(true) - sides_before == 2,
         "both sides counted, got " + std::to_string(sum(true) - sides_before));
  expect(sum(false) - staged_before >= 1, "the receive counted as staged");
  long long value = 0;
  expect(counter("no.such.counter", &value) != 0, "an unknown counter refused");
}

namespace {

// A size setting as the tests give it: digits and an optional K or M.
long long size_setting(const char* name, long long otherwise) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return otherwise;
  char* unit = nullptr;
  const long long value = std::strtoll(text, &unit, 10);
  return *unit == 'K' ? value << 10 : *unit == 'M' ? value << 20 : value;
}

}  // namespace

// Between gddt peers the staged plane sends a message larger than the part size both sides agree
// on (GDDT_STAGING_CHUNK raised to GDDT_STAGING_CHUNK_MIN, here alike on every rank) as that many
// data messages, and the receiver puts them back together. A message of 9 bytes, which peers always
// send through the protocol, tells whether it is on.
void staged_parts_counted(const Context& context, const TypeCatalog& types) {
  const CounterFunction counter = exported_counter();
  if (counter == nullptr) return;
  const auto value_of = [counter](const char* name) { return counter_value(counter, name); };
  const long long inline_before = value_of("p2p.peer-inline.sides");
  char nine[9] = {}, nine_in[9];
  P2P_EXPECT_SUCCESS(MPI_Sendrecv(nine, 9, MPI_BYTE, context.next, 1, nine_in, 9, MPI_BYTE, context.prev, 1,
                                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  const bool protocol_on = value_of("p2p.peer-inline.sides") > inline_before;
  const long long staged_before = value_of("p2p.peer-staged.sides"), ipc_before = value_of("p2p.peer-ipc.sides");
  const long long parts_before = value_of("peer.staged.parts");
  const long long pack_ns_before = value_of("peer.send.pack.ns"), header_ns_before = value_of("peer.recv.header.ns");
  const long long move_ns_before = value_of("peer.recv.move.ns");
  const TypeCase& vector = types.named("vector_block64");  // 1 KiB an element
  constexpr int kCount = 1000;
  RingMessage message(context, vector, kCount, vector, kCount, 2);
  MPI_Request request;
  P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), kCount, vector.type, context.prev, message.index(),
                               MPI_COMM_WORLD, &request));
  P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), kCount, vector.type, context.next, message.index(),
                              MPI_COMM_WORLD));
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
  message.check(&status, "the message in parts");
  if (!protocol_on) return;
  const bool staged = value_of("p2p.peer-staged.sides") > staged_before;
  expect(staged || value_of("p2p.peer-ipc.sides") > ipc_before,
         "a message of 1,000 KiB between peers took the staged plane or CUDA IPC");
  // The stages' time counters count under GDDT_STATS=1 only.
  const char* stats = std::getenv("GDDT_STATS");
  const bool timing = stats != nullptr && std::string(stats) == "1";
  const bool timed = value_of("peer.send.pack.ns") > pack_ns_before && value_of("peer.recv.header.ns") > header_ns_before &&
                     value_of("peer.recv.move.ns") > move_ns_before;
  const bool untimed = value_of("peer.send.pack.ns") == pack_ns_before &&
                       value_of("peer.recv.header.ns") == header_ns_before;
  expect(timing ? timed : untimed, timing ? "GDDT_STATS=1: the packing, header and moving stages were timed"
                                          : "without GDDT_STATS=1 no stage was timed");
  if (!staged) return;
  const long long part =
      std::max(size_setting("GDDT_STAGING_CHUNK", 4LL << 20), size_setting("GDDT_STAGING_CHUNK_MIN", 64LL << 10));
  const long long want = (message.bytes() + part - 1) / part, got = value_of("peer.staged.parts") - parts_before;
  expect(got == want, "sent in " + std::to_string(got) + " parts of " + std::to_string(part) + " bytes, expected " +
                          std::to_string(want));
}

// A datatype committed once this process has moved device data is readied at MPI_Type_commit
// (mpi/classify.hpp): a block list's piece table is made then, on this rank's GPU, and its first
// message makes none and carries the same bytes. A rank whose buffers are host memory makes none.
void types_readied_at_commit(const Context& context, const TypeCatalog& types) {
  const CounterFunction counter = exported_counter();
  if (counter == nullptr) return;
  auto tables = [&] {
    long long value = 0;
    return counter("pack.piece-tables", &value) == 0 ? value : 0;
  };
  // Three elements of `type` around the ring, as message `index`, checked.
  auto pass_around = [&](const TypeCase& type, int index, const std::string& what) {
    RingMessage message(context, type, 3, type, 3, index);
    MPI_Request request;
    MPI_Status status;
    P2P_EXPECT_SUCCESS(MPI_Irecv(message.recv.address(), 3, type.type, context.prev, index, MPI_COMM_WORLD, &request));
    P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), 3, type.type, context.next, index, MPI_COMM_WORLD));
    P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
    message.check(&status, what);
  };
  const TypeCase& indexed = types.named("indexed");
  pass_around(indexed, 1, "indexed, before the new type");
  const bool device = context.memory == MemoryKind::kDevice || context.memory == MemoryKind::kManaged;
  const long long gpu_tables_before = tables();
  // Device memory always moves through the CUDA backend, whose block lists need a table.
  if (context.memory == MemoryKind::kDevice)
    expect(gpu_tables_before > 0, "a block list moved on device memory made a piece table");
  TypeCase fresh = indexed;  // the same typemap and extent under a handle of its own
  fresh.name = "indexed as a contiguous of one";
  P2P_EXPECT_SUCCESS(MPI_Type_contiguous(1, indexed.type, &fresh.type));
  P2P_EXPECT_SUCCESS(MPI_Type_commit(&fresh.type));
  const long long at_commit = tables();
  if (!device) {
    expect(at_commit == gpu_tables_before, "no piece table at commit on a rank without device buffers");
  } else if (gpu_tables_before > 0) {  // gddt's GPU path in use (a GPU, GDDT_CUDA not off)
    expect(at_commit == gpu_tables_before + 1, "the new block list's piece table is made at MPI_Type_commit");
  }
  pass_around(fresh, 2, "a type readied at commit");
  if (device && gpu_tables_before > 0) expect(tables() == at_commit, "its first message makes no second table");
  P2P_EXPECT_SUCCESS(MPI_Type_free(&fresh.type));
}

// Windows of messages and lone ones in turn, the same sizes both ways: a window's receives
// complete in one MPI_Waitall (gddt may leave their reads running together), a lone message goes
// to a blocking MPI_Recv (which may probe first, its sender then taking CUDA IPC); through a
// CUDA-aware library a window's packed bytes may cross in device scratch the library maps into
// the receiving process, which must never be what a later lone message's CUDA IPC maps again
// (a process maps an allocation once). Every message is checked.
void windows_and_lone_messages(const Context& context, const TypeCatalog& types) {
  const TypeCase& vector = types.named("vector_block4");
  constexpr int kWindow = 6;
  int index = 0;
  for (const int count : {4096, 65536}) {  // 16 and 256 KiB packed
    for (int turn = 0; turn < 2; ++turn) {
      std::vector<std::unique_ptr<RingMessage>> window;
      std::vector<MPI_Request> requests(2 * kWindow);
      for (int i = 0; i < kWindow; ++i) {
        window.push_back(std::make_unique<RingMessage>(context, vector, count, vector, count, ++index));
        P2P_EXPECT_SUCCESS(MPI_Irecv(window.back()->recv.address(), count, vector.type, context.prev,
                                     window.back()->index(), MPI_COMM_WORLD, &requests[static_cast<std::size_t>(i)]));
      }
      for (int i = 0; i < kWindow; ++i) {
        RingMessage& message = *window[static_cast<std::size_t>(i)];
        P2P_EXPECT_SUCCESS(MPI_Isend(message.send.address(), count, vector.type, context.next, message.index(),
                                     MPI_COMM_WORLD, &requests[static_cast<std::size_t>(kWindow + i)]));
      }
      std::vector<MPI_Status> statuses(requests.size());
      P2P_EXPECT_SUCCESS(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data()));
      for (int i = 0; i < kWindow; ++i)
        window[static_cast<std::size_t>(i)]->check(&statuses[static_cast<std::size_t>(i)],
                                                   "window message " + std::to_string(i) + " of " +
                                                       std::to_string(count) + " elements, turn " + std::to_string(turn));
      for (int lone = 0; lone < 3; ++lone) {
        RingMessage message(context, vector, count, vector, count, ++index);
        MPI_Status status;
        // Even ranks send first, odd ones receive first: blocking calls around any ring.
        for (int step = 0; step < 2; ++step) {
          if ((context.rank + step) % 2 == 0) {
            P2P_EXPECT_SUCCESS(MPI_Send(message.send.address(), count, vector.type, context.next, message.index(),
                                        MPI_COMM_WORLD));
          } else {
            P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), count, vector.type, context.prev, message.index(),
                                        MPI_COMM_WORLD, &status));
          }
        }
        message.check(&status, "lone message " + std::to_string(lone) + " of " + std::to_string(count) +
                                   " elements, turn " + std::to_string(turn));
      }
    }
  }
}

}  // namespace gddt_test::p2p
