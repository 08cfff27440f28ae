// p2p_entry_points: MPI-4's large-count forms of the calls.
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "entry_points_cases.hpp"
#include "harness.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {

#if MPI_VERSION >= 4
// MPI-4's large-count calls (MPI_Send_c and the rest), where the library has them: gddt must
// sit in front of them as of the int ones, and a count that fits an int takes the same path.
void large_count_sends(const Context& context, const TypeCatalog& types) {
  const std::pair<const char*, const char*> twins[] = {{"MPI_Send_c", "MPI_Send"},   {"MPI_Recv_c", "MPI_Recv"},
                                                       {"MPI_Isend_c", "MPI_Isend"}, {"MPI_Irecv_c", "MPI_Irecv"},
                                                       {"MPI_Pack_c", "MPI_Pack"},   {"MPI_Unpack_c", "MPI_Unpack"}};
  for (const auto& [large, twin] : twins) {
    expect(provider_of(large) == provider_of(twin), std::string(large) + " comes from " + provider_of(large) +
                                                        ", " + twin + " from " + provider_of(twin));
  }
  using BlockingSend = int (*)(const void*, MPI_Count, MPI_Datatype, int, int, MPI_Comm);
  const std::pair<const char*, BlockingSend> blocking[] = {
      {"MPI_Send_c", MPI_Send_c}, {"MPI_Ssend_c", MPI_Ssend_c}, {"MPI_Bsend_c", MPI_Bsend_c}};
  int tag = 40;
  for (const auto& [name, call] : blocking) {
    RingMessage message = vector_to_ints(context, types, tag++);
    AttachedBuffer attached({&message.send});
    MPI_Status status;
    ring_in_order(
        context,
        [&, call = call] {
          P2P_EXPECT_SUCCESS(call(message.send.address(), message.send.count(), message.send.type().type,
                                  context.next, message.index(), MPI_COMM_WORLD));
        },
        [&] {
          P2P_EXPECT_SUCCESS(MPI_Recv_c(message.recv.address(), message.recv.count(), message.recv.type().type,
                                        context.prev, message.index(), MPI_COMM_WORLD, &status));
        });
    message.check(&status, std::string(name) + " -> MPI_Recv_c");
  }
  using RequestSend = int (*)(const void*, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  const std::pair<const char*, RequestSend> nonblocking[] = {{"MPI_Isend_c", MPI_Isend_c},
                                                             {"MPI_Issend_c", MPI_Issend_c},
                                                             {"MPI_Ibsend_c", MPI_Ibsend_c},
                                                             {"MPI_Irsend_c", MPI_Irsend_c},
                                                             {"MPI_Rsend_c", nullptr}};
  for (const auto& [name, call] : nonblocking) {
    RingMessage message = ints_to_face(context, types, tag++);
    AttachedBuffer attached({&message.send});
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status statuses[2];
    P2P_EXPECT_SUCCESS(MPI_Irecv_c(message.recv.address(), message.recv.count(), message.recv.type().type,
                                   context.prev, message.index(), MPI_COMM_WORLD, &requests[0]));
    MPI_Barrier(MPI_COMM_WORLD);  // every receive is posted: ready mode is allowed
    if (call != nullptr) {
      P2P_EXPECT_SUCCESS(call(message.send.address(), message.send.count(), message.send.type().type, context.next,
                              message.index(), MPI_COMM_WORLD, &requests[1]));
    } else {
      P2P_EXPECT_SUCCESS(MPI_Rsend_c(message.send.address(), message.send.count(), message.send.type().type,
                                     context.next, message.index(), MPI_COMM_WORLD));
    }
    P2P_EXPECT_SUCCESS(MPI_Waitall(2, requests, statuses));
    message.check(&statuses[0], std::string(name) + " -> MPI_Irecv_c");
  }
}

void large_count_persistent(const Context& context, const TypeCatalog& types) {
  using SendInit = int (*)(const void*, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  const std::pair<const char*, SendInit> inits[] = {{"MPI_Send_init_c", MPI_Send_init_c},
                                                    {"MPI_Ssend_init_c", MPI_Ssend_init_c},
                                                    {"MPI_Bsend_init_c", MPI_Bsend_init_c},
                                                    {"MPI_Rsend_init_c", MPI_Rsend_init_c}};
  int tag = 50;
  for (const auto& [name, init] : inits) {
    RingMessage message(context, types.named("negative_lb"), 8, types.named("indexed_block"), 4, tag++);
    AttachedBuffer attached({&message.send, &message.send});
    MPI_Request requests[2];
    P2P_EXPECT_SUCCESS(MPI_Recv_init_c(message.recv.address(), message.recv.count(), message.recv.type().type,
                                       context.prev, message.index(), MPI_COMM_WORLD, &requests[0]));
    P2P_EXPECT_SUCCESS(init(message.send.address(), message.send.count(), message.send.type().type, context.next,
                            message.index(), MPI_COMM_WORLD, &requests[1]));
    for (int round = 0; round < 2; ++round) {
      P2P_EXPECT_SUCCESS(MPI_Start(&requests[0]));
      MPI_Barrier(MPI_COMM_WORLD);
      P2P_EXPECT_SUCCESS(MPI_Start(&requests[1]));
      MPI_Status statuses[2];
      P2P_EXPECT_SUCCESS(MPI_Waitall(2, requests, statuses));
      message.check(&statuses[0], std::string(name) + " + MPI_Recv_init_c, round " + std::to_string(round));
    }
    for (MPI_Request& request : requests) P2P_EXPECT_SUCCESS(MPI_Request_free(&request));
  }
}

void large_count_exchanges(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("subarray3d_face_y"), 2, types.named("subarray2d_row"), 8, 60);
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Sendrecv_c(message.send.address(), message.send.count(), message.send.type().type,
                                    context.next, message.index(), message.recv.address(), message.recv.count(),
                                    message.recv.type().type, context.prev, message.index(), MPI_COMM_WORLD,
                                    &status));
  message.check(&status, "MPI_Sendrecv_c");

  const int tag = 61;
  TypedBuffer buffer(types.named("hvector_unaligned"), 5, context.memory, message_seed(context, context.rank, -tag));
  buffer.fill(message_seed(context, context.rank, tag));
  P2P_EXPECT_SUCCESS(MPI_Sendrecv_replace_c(buffer.address(), buffer.count(), buffer.type().type, context.next, tag,
                                            context.prev, tag, MPI_COMM_WORLD, &status));
  buffer.expect_message(message_seed(context, context.prev, tag), buffer.data_bytes(), "MPI_Sendrecv_replace_c");

  RingMessage matched(context, types.named("struct_mixed_packed"), 33, types.named("struct_mixed"), 33, 62);
  with_ring_isend(context, matched, [&] {
    MPI_Message handle;
    P2P_EXPECT_SUCCESS(MPI_Mprobe(context.prev, matched.index(), MPI_COMM_WORLD, &handle, MPI_STATUS_IGNORE));
    P2P_EXPECT_SUCCESS(MPI_Mrecv_c(matched.recv.address(), matched.recv.count(), matched.recv.type().type, &handle,
                                   &status));
    matched.check(&status, "MPI_Mprobe then MPI_Mrecv_c");
  });
  RingMessage probed(context, types.named("vector_block64"), 2, types.named("int"), 512, 63);
  with_ring_isend(context, probed, [&] {
    MPI_Message handle;
    P2P_EXPECT_SUCCESS(MPI_Mprobe(context.prev, probed.index(), MPI_COMM_WORLD, &handle, MPI_STATUS_IGNORE));
    MPI_Request request;
    P2P_EXPECT_SUCCESS(
        MPI_Imrecv_c(probed.recv.address(), probed.recv.count(), probed.recv.type().type, &handle, &request));
    P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
    probed.check(&status, "MPI_Mprobe then MPI_Imrecv_c");
  });
}

// Beyond an int, to and from MPI_PROC_NULL (no memory needed): host buffers go to the library.
void large_count_beyond_int(const Context& context, const TypeCatalog&) {
  const MPI_Count beyond = MPI_Count{1} << 33;
  int word = 0;
  MPI_Status status;
  P2P_EXPECT_SUCCESS(MPI_Send_c(&word, beyond, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Recv_c(&word, beyond, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &status));
  expect(status.MPI_SOURCE == MPI_PROC_NULL, "MPI_Recv_c from MPI_PROC_NULL: status source");
  (void)context;
}

void large_count_pack(const Context& context, const TypeCatalog& types) {
  // Two packs appending at a running MPI_Count position, then two unpacks; against PMPI_Pack.
  TypedBuffer first(types.named("struct_mixed"), 7, context.memory, 70);
  TypedBuffer second(types.named("subarray2d_interior_f"), 1, context.memory, 71);
  first.fill(72);
  second.fill(73);
  MPI_Count first_bytes = 0, second_bytes = 0;
  P2P_EXPECT_SUCCESS(MPI_Pack_size_c(first.count(), first.type().type, MPI_COMM_WORLD, &first_bytes));
  P2P_EXPECT_SUCCESS(MPI_Pack_size_c(second.count(), second.type().type, MPI_COMM_WORLD, &second_bytes));
  const MPI_Count total = 5 + first_bytes + second_bytes;
  std::vector<char> packed(static_cast<std::size_t>(total) + 16, 0x5a);
  MPI_Count position = 5;
  P2P_EXPECT_SUCCESS(MPI_Pack_c(first.address(), first.count(), first.type().type, packed.data(), total, &position,
                                MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Pack_c(second.address(), second.count(), second.type().type, packed.data(), total,
                                &position, MPI_COMM_WORLD));
  expect(position == total, "MPI_Pack_c position " + std::to_string(position) + ", expected " + std::to_string(total));
  if (context.memory == MemoryKind::kHost) {
    std::vector<char> reference(packed.size(), 0x5a);
    int at = 5;
    P2P_EXPECT_SUCCESS(PMPI_Pack(first.address(), first.count(), first.type().type, reference.data(),
                                 static_cast<int>(total), &at, MPI_COMM_WORLD));
    P2P_EXPECT_SUCCESS(PMPI_Pack(second.address(), second.count(), second.type().type, reference.data(),
                                 static_cast<int>(total), &at, MPI_COMM_WORLD));
    expect(reference == packed, "MPI_Pack_c bytes differ from the library's PMPI_Pack");
  }
  TypedBuffer first_back(types.named("struct_mixed"), 7, context.memory, 74);
  TypedBuffer second_back(types.named("subarray2d_interior_f"), 1, context.memory, 75);
  position = 5;
  P2P_EXPECT_SUCCESS(MPI_Unpack_c(packed.data(), total, &position, first_back.address(), first_back.count(),
                                  first_back.type().type, MPI_COMM_WORLD));
  P2P_EXPECT_SUCCESS(MPI_Unpack_c(packed.data(), total, &position, second_back.address(), second_back.count(),
                                  second_back.type().type, MPI_COMM_WORLD));
  expect(position == total, "MPI_Unpack_c position " + std::to_string(position));
  first_back.expect_message(72, first_back.data_bytes(), "MPI_Pack_c then MPI_Unpack_c");
  second_back.expect_message(73, second_back.data_bytes(), "MPI_Pack_c then MPI_Unpack_c");
}
#endif  // MPI_VERSION >= 4

}  // namespace gddt_test::p2p
