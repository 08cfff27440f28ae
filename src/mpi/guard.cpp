#include "mpi/guard.hpp"

#include "core/log.hpp"
#include "mpi/classify.hpp"
#include "protocol/cuda_awareness.hpp"
#include "mpi/errors.hpp"
#include "mpi/pack_api.hpp"
#include "type/contents.hpp"
#include "type/datatype.hpp"

namespace gddt::mpi::guard {
namespace {

// A named type whose element is its bytes: a CUDA-aware library moves it from device memory
// as plain bytes.
bool moved_as_bytes(MPI_Datatype datatype) {
  type::LayoutPtr layout;
  return type::combiner_of(datatype) == MPI_COMBINER_NAMED && resolve_datatype(datatype, &layout) == GDDT_OK &&
         layout->shape == type::Shape::kContiguous && layout->lb == 0 && layout->extent == layout->size;
}

// Managed memory is the CPU's to touch too; only device memory is refused.
bool refused(const void* address, MPI_Datatype datatype) {
  if (address == nullptr || address == MPI_IN_PLACE || datatype == MPI_DATATYPE_NULL || type::is_freed(datatype))
    return false;
  memory::Kind kind;
  if (classify_typed(datatype, address, &kind) != GDDT_OK || kind.type != GDDT_MEMORY_DEVICE) return false;
  return !(protocol::library_cuda_aware() && moved_as_bytes(datatype));
}

}  // namespace

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

namespace {

bool any_refused(MPI_Comm comm, int root, std::initializer_list<Buffer> buffers) {
  for (const Buffer& buffer : buffers) {
    if (buffer.types == nullptr || !significant(comm, root, buffer.side)) continue;
    const int count = datatypes_of(comm, buffer.per);
    for (int i = 0; i < count; ++i)
      if (refused(buffer.address, buffer.types[i])) return true;
  }
  return false;
}

void log_refusal() {
  GDDT_LOG(kError, "device memory that the MPI library would pack with the CPU, in a call whose data gddt does "
                   "not move yet (docs/usage.md): refused");
}

}  // namespace

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

int on_comm(MPI_Comm comm, int root, std::initializer_list<Buffer> buffers) {
  if (!any_refused(comm, root, buffers)) return MPI_SUCCESS;
  log_refusal();
  return raise(comm, GDDT_ERR_UNSUPPORTED);
}

int on_file(MPI_File file, std::initializer_list<Buffer> buffers) {
  if (!any_refused(MPI_COMM_NULL, kNotRooted, buffers)) return MPI_SUCCESS;
  log_refusal();
  return raise_on_file(file, GDDT_ERR_UNSUPPORTED);
}

}  // namespace gddt::mpi::guard
