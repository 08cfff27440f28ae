// gddt's implementations of MPI_Init and of the communicator constructors and destructors: where
// gddt processes agree on their peer protocol (protocol/peer/peers.hpp). Each constructor is the
// library's call, then the agreement on the new communicator, which is collective over it as the
// constructor is.
#include <mpi.h>

#include "mpi/entry_points.hpp"
#include "mpi/interpose.hpp"
#include "protocol/peer/peers.hpp"

namespace gddt::mpi::entry {

namespace {

int made(int rc, const MPI_Comm* newcomm) {
  if (rc == MPI_SUCCESS && newcomm != nullptr) protocol::peers::on_comm_created(*newcomm);
  return rc;
}

int init_with(int rc) {
  if (rc == MPI_SUCCESS) protocol::peers::after_init();
  return rc;
}

}  // namespace

int Init(int* argc, char*** argv) {
  protocol::peers::before_init();
  return init_with(PMPI_Init(argc, argv));
}

int Init_thread(int* argc, char*** argv, int required, int* provided) {
  protocol::peers::before_init();
  return init_with(PMPI_Init_thread(argc, argv, required, provided));
}

int Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const BlockingCall blocking;
  return made(PMPI_Comm_dup(comm, newcomm), newcomm);
}

int Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  const BlockingCall blocking;
  return made(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}

int Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  const BlockingCall blocking;
  return made(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

int Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  const BlockingCall blocking;
  return made(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

int Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  const BlockingCall blocking;
  return made(PMPI_Comm_create(comm, group, newcomm), newcomm);
}

int Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  const BlockingCall blocking;
  return made(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}

int Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                MPI_Comm* comm_cart) {
  const BlockingCall blocking;
  return made(PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart), comm_cart);
}

int Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  const BlockingCall blocking;
  return made(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}

int Graph_create(MPI_Comm comm_old, int nnodes, const int indx[], const int edges[], int reorder,
                 MPI_Comm* comm_graph) {
  const BlockingCall blocking;
  return made(PMPI_Graph_create(comm_old, nnodes, indx, edges, reorder, comm_graph), comm_graph);
}

int Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[],
                      const int weights[], MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  const BlockingCall blocking;
  return made(PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info, reorder,
                                     comm_dist_graph),
              comm_dist_graph);
}

int Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                               int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                               int reorder, MPI_Comm* comm_dist_graph) {
  const BlockingCall blocking;
  return made(PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                              destweights, info, reorder, comm_dist_graph),
              comm_dist_graph);
}

int Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  const BlockingCall blocking;
  return made(PMPI_Intercomm_merge(intercomm, high, newintracomm), newintracomm);
}

int Comm_free(MPI_Comm* comm) {
  const BlockingCall blocking;
  if (comm != nullptr) protocol::peers::on_comm_freed(*comm);
  return PMPI_Comm_free(comm);
}

int Comm_disconnect(MPI_Comm* comm) {
  const BlockingCall blocking;
  if (comm != nullptr) protocol::peers::on_comm_freed(*comm);
  return PMPI_Comm_disconnect(comm);
}

}  // namespace gddt::mpi::entry
