#include "mpi/call_buffers.hpp"


namespace gddt::mpi::call_buffers {
bool significant(MPI_Comm comm, int root, Side side) {
  if (root == kNotRooted || side == Side::kAny) return root != MPI_PROC_NULL;
  int inter = 0, rank = -1;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return false;
  bool at_root = false;
  if (inter) {
    at_root = root == MPI_ROOT;
  } else if (PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS) {
    at_root = rank == root;
  }
  const bool at_leaf = inter ? root >= 0 : true;
  return side == Side::kRoot ? at_root : at_leaf;
}

int datatypes_of(MPI_Comm comm, Per per) {
  if (per == Per::kCall) return 1;
  if (comm == MPI_COMM_NULL) return 0;
  if (per == Per::kPeer) {
    int inter = 0, processes = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(comm, &processes) != MPI_SUCCESS)
      return 0;
    return processes;
  }
  int topology = MPI_UNDEFINED, in = 0, out = 0;
  if (PMPI_Topo_test(comm, &topology) != MPI_SUCCESS) return 0;
  if (topology == MPI_CART) {
    int dimensions = 0;
    if (PMPI_Cartdim_get(comm, &dimensions) != MPI_SUCCESS) return 0;
    in = out = 2 * dimensions;
  } else if (topology == MPI_GRAPH) {
    int rank = 0;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Graph_neighbors_count(comm, rank, &in) != MPI_SUCCESS)
      return 0;
    out = in;
  } else if (topology == MPI_DIST_GRAPH) {
    int weighted = 0;
    if (PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted) != MPI_SUCCESS) return 0;
  }
  return per == Per::kInNeighbor ? in : out;
}

}  // namespace gddt::mpi::call_buffers
