// p2p_entry_points: probes and matched probes, and the counts a receive's status gives.
#include <mpi.h>

#include <string>

#include "entry_points_cases.hpp"
#include "harness.hpp"
#include "ring.hpp"
#include "type_catalog.hpp"

namespace gddt_test::p2p {

void probe(const Context& context, const TypeCatalog& types) {
  RingMessage message = vector_to_ints(context, types, 15);
  with_ring_isend(context, message, [&] {
    MPI_Status probed, status;
    P2P_EXPECT_SUCCESS(MPI_Probe(context.prev, message.index(), MPI_COMM_WORLD, &probed));
    expect_status(probed, context.prev, message.index(), MPI_INT, 512, "MPI_Probe");
    P2P_EXPECT_SUCCESS(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &probed));
    expect_status(probed, context.prev, message.index(), message.recv.type().type, 512,
                  "MPI_Probe with wildcards");
    P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                                message.recv.type().type, probed.MPI_SOURCE, probed.MPI_TAG,
                                MPI_COMM_WORLD, &status));
    message.check(&status, "MPI_Probe then MPI_Recv");
  });
}

void iprobe(const Context& context, const TypeCatalog& types) {
  RingMessage message = ints_to_face(context, types, 16);
  with_ring_isend(context, message, [&] {
    MPI_Status probed, status;
    poll_until(
        [&] {
          int found = 0;
          P2P_EXPECT_SUCCESS(
              MPI_Iprobe(context.prev, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &probed));
          return found != 0;
        },
        "MPI_Iprobe loop");
    expect_status(probed, context.prev, message.index(), message.recv.type().type,
                  message.recv.count(), "MPI_Iprobe");
    P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(),
                                message.recv.type().type, context.prev, message.index(),
                                MPI_COMM_WORLD, &status));
    message.check(&status, "MPI_Iprobe then MPI_Recv");
  });
}

void mprobe_mrecv(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("struct_mixed_packed"), 33, types.named("struct_mixed"),
                      33, 17);
  with_ring_isend(context, message, [&] {
    MPI_Message handle;
    MPI_Status probed, status;
    P2P_EXPECT_SUCCESS(
        MPI_Mprobe(MPI_ANY_SOURCE, message.index(), MPI_COMM_WORLD, &handle, &probed));
    expect_status(probed, context.prev, message.index(), message.recv.type().type, 33,
                  "MPI_Mprobe");
    P2P_EXPECT_SUCCESS(MPI_Mrecv(message.recv.address(), message.recv.count(),
                                 message.recv.type().type, &handle, &status));
    expect(handle == MPI_MESSAGE_NULL, "MPI_Mrecv must set the message to MPI_MESSAGE_NULL");
    message.check(&status, "MPI_Mprobe then MPI_Mrecv");
  });
}

void improbe_imrecv(const Context& context, const TypeCatalog& types) {
  RingMessage message(context, types.named("vector_block4k"), 64, types.named("negative_lb"), 87382,
                      18);  // 1 MiB: 87381 whole elements and one partial
  with_ring_isend(context, message, [&] {
    MPI_Message handle;
    MPI_Status probed, status;
    poll_until(
        [&] {
          int found = 0;
          P2P_EXPECT_SUCCESS(
              MPI_Improbe(context.prev, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &handle, &probed));
          return found != 0;
        },
        "MPI_Improbe loop");
    MPI_Request request;
    P2P_EXPECT_SUCCESS(MPI_Imrecv(message.recv.address(), message.recv.count(),
                                  message.recv.type().type, &handle, &request));
    expect(handle == MPI_MESSAGE_NULL, "MPI_Imrecv must set the message to MPI_MESSAGE_NULL");
    P2P_EXPECT_SUCCESS(MPI_Wait(&request, &status));
    message.check(&status, "MPI_Improbe then MPI_Imrecv");
  });
}

// Counts of a derived type: MPI_Get_count counts whole elements (MPI_UNDEFINED for a partial
// one), MPI_Get_elements counts basic elements.
void get_count_get_elements(const Context& context, const TypeCatalog& types) {
  const TypeCase& element = types.named("struct_int_double");  // (int, double) with a gap
  const TypeCase& vector = types.named("vector_of_struct");    // 6 such structs, with gaps
  struct Shape {
    int structs_sent;
    int expected_vectors;  // whole vector elements received, or MPI_UNDEFINED
  };
  const Shape shapes[] = {{5, MPI_UNDEFINED}, {12, 2}, {0, 0}};
  int index = 20;
  for (const Shape& shape : shapes) {
    RingMessage message(context, element, shape.structs_sent, vector, 3, index++);
    const std::string what =
        "MPI_Get_count/MPI_Get_elements, " + std::to_string(shape.structs_sent) + " structs";
    MPI_Status status;
    with_ring_isend(context, message, [&] {
      P2P_EXPECT_SUCCESS(MPI_Recv(message.recv.address(), message.recv.count(), vector.type,
                                  context.prev, message.index(), MPI_COMM_WORLD, &status));
    });
    message.check(&status, what);  // checks MPI_Get_count in the vector type
    int count = -1;
    int elements = -1;
    MPI_Count elements_x = -1;
    P2P_EXPECT_SUCCESS(MPI_Get_count(&status, element.type, &count));
    expect(count == shape.structs_sent,
           what + ": MPI_Get_count in structs " + std::to_string(count));
    expect(shape.expected_vectors == count_of(vector, message.bytes()), what + ": shape");
    P2P_EXPECT_SUCCESS(MPI_Get_elements(&status, vector.type, &elements));
    P2P_EXPECT_SUCCESS(MPI_Get_elements_x(&status, vector.type, &elements_x));
    expect(elements == 2 * shape.structs_sent && elements_x == elements,
           what + ": MPI_Get_elements " + std::to_string(elements) + ", MPI_Get_elements_x " +
               std::to_string(elements_x) + ", expected " + std::to_string(2 * shape.structs_sent));
  }
}

}  // namespace gddt_test::p2p
