#include "mpi/classify.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>

#include "gddt/gddt_mpi.h"
#include "pack/engine.hpp"

namespace gddt::mpi {
namespace {

std::mutex probe_mutex;
MPI_Comm probe_comm = MPI_COMM_NULL;

std::mutex keyval_mutex;
std::atomic<int> memory_keyval{MPI_KEYVAL_INVALID};

// Asks the library whether a datatype gddt never saw committed (committed before gddt was
// loaded, or through a path gddt does not intercept) is committed: a zero-count PMPI_Pack on
// a private communicator that returns errors instead of raising them.
bool library_accepts(MPI_Datatype datatype) {
  std::lock_guard<std::mutex> lock(probe_mutex);
  if (probe_comm == MPI_COMM_NULL) {
    if (PMPI_Comm_dup(MPI_COMM_SELF, &probe_comm) != MPI_SUCCESS) return false;
    PMPI_Comm_set_errhandler(probe_comm, MPI_ERRORS_RETURN);
  }
  char in = 0, out = 0;
  int position = 0;
  return PMPI_Pack(&in, 0, datatype, &out, 1, &position, probe_comm) == MPI_SUCCESS;
}

}  // namespace

Status resolve_datatype(MPI_Datatype datatype, type::LayoutPtr* layout) {
  if (datatype == MPI_DATATYPE_NULL) return GDDT_ERR_INVALID_TYPE;
  Status status = GDDT_OK;
  if (type::find_committed(datatype, &status, layout)) return status;
  // First sight: a named type, or one committed where gddt could not see it, is registered
  // as committed once the library vouches for it.
  if (type::is_freed(datatype)) return GDDT_ERR_INVALID_TYPE;
  if (!type::is_known_committed(datatype) && !library_accepts(datatype)) return GDDT_ERR_INVALID_TYPE;
  type::on_commit(datatype);
  return type::lookup(datatype, layout);
}

// The largest element readied at commit: at most one piece a byte (a piece takes 144 bytes, so at
// most 2.3 MiB of layout), so that a large type a program only uses on host memory (an
// unstructured mesh's file view, say) is never decoded there; a larger one is decoded at its
// first use on device memory, as before.
constexpr MPI_Count kReadiedMostBytes = 16 << 10;

void prepare_for_device(MPI_Datatype datatype) {
  const int device = memory::device_memory_seen();
  if (device < 0) return;
  MPI_Count size = 0;
  if (PMPI_Type_size_x(datatype, &size) != MPI_SUCCESS || size > kReadiedMostBytes) return;
  type::LayoutPtr layout;
  if (is_error(resolve_datatype(datatype, &layout)) || !layout) return;
  pack::prepare_layout(*layout, device);
}

Status classify_typed(MPI_Datatype datatype, const void* first, memory::Kind* kind) {
  const int keyval = memory_keyval.load(std::memory_order_acquire);
  if (keyval != MPI_KEYVAL_INVALID) {
    void* value = nullptr;
    int found = 0;
    if (PMPI_Type_get_attr(datatype, keyval, &value, &found) == MPI_SUCCESS && found) {
      const auto code = reinterpret_cast<std::intptr_t>(value);
      kind->type = static_cast<gddt_memory_type_t>(code % 16);
      kind->device = static_cast<int>(code / 16) - 1;
      memory::note_device_memory(*kind);
      return GDDT_OK;
    }
  }
  return memory::classify(first, kind);
}

bool on_library_memory(const void* buf, MPI_Datatype datatype) {
  MPI_Aint true_lb = 0, true_extent = 0;
  if (datatype == MPI_DATATYPE_NULL || type::is_freed(datatype) || !type::is_known_committed(datatype) ||
      PMPI_Type_get_true_extent(datatype, &true_lb, &true_extent) != MPI_SUCCESS)
    return false;
  if (true_extent <= 0) return true;  // no bytes (Open MPI then reports a true lb of LONG_MAX)
  memory::Kind kind;
  const auto first = reinterpret_cast<std::uintptr_t>(buf) + static_cast<std::uintptr_t>(true_lb);
  return classify_typed(datatype, reinterpret_cast<const void*>(first), &kind) == GDDT_OK && !kind.is_device();
}

void release_resources() {
  {
    std::lock_guard<std::mutex> lock(probe_mutex);
    if (probe_comm != MPI_COMM_NULL) PMPI_Comm_free(&probe_comm);
  }
  std::lock_guard<std::mutex> lock(keyval_mutex);
  int keyval = memory_keyval.exchange(MPI_KEYVAL_INVALID);
  if (keyval != MPI_KEYVAL_INVALID) PMPI_Type_free_keyval(&keyval);
}

}  // namespace gddt::mpi

using namespace gddt;

extern "C" int gddt_memory_keyval(void) {
  std::lock_guard<std::mutex> lock(mpi::keyval_mutex);
  int keyval = mpi::memory_keyval.load();
  if (keyval == MPI_KEYVAL_INVALID &&
      PMPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &keyval, nullptr) == MPI_SUCCESS)
    mpi::memory_keyval.store(keyval, std::memory_order_release);
  return keyval;
}
