// Not communication code of the app: whether its "cartesian" version can be right on this library
// (exchange.hpp).
#include "exchange.hpp"

namespace halo3d {

// A one-rank periodic ring: both of its neighbours are the rank itself.
bool library_orders_cartesian_blocks() {
  const int one = 1, periodic = 1;
  MPI_Comm ring;
  MPI_Cart_create(MPI_COMM_SELF, 1, &one, &periodic, 0, &ring);
  const int counts[2] = {1, 1};
  const MPI_Aint displacements[2] = {0, sizeof(int)};
  const MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  int sent[2] = {0, 1}, received[2] = {-1, -1};
  MPI_Neighbor_alltoallw(sent, counts, displacements, types, received, counts, displacements, types, ring);
  MPI_Comm_free(&ring);
  return received[0] == 1 && received[1] == 0;
}

}  // namespace halo3d
