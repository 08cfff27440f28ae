#include "mpi/opencl_types.hpp"

#include <atomic>
#include <mutex>

#include "gddt/gddt_mpi.h"
#include "mpi/classify.hpp"
#include "mpi/passage.hpp"

namespace gddt::mpi {
namespace {

struct OpenclAttribute {
  void* queue;
  MPI_Aint offset;
};

std::mutex keyval_mutex;
std::atomic<int> opencl_keyval{MPI_KEYVAL_INVALID};

// A duplicated datatype describes the same buffers, so it gets its own copy of the attribute.
int copy_attribute(MPI_Datatype, int, void*, void* value, void* copy, int* flag) {
  *static_cast<OpenclAttribute**>(copy) = new OpenclAttribute(*static_cast<OpenclAttribute*>(value));
  *flag = 1;
  return MPI_SUCCESS;
}

int delete_attribute(MPI_Datatype, int, void* value, void*) {
  delete static_cast<OpenclAttribute*>(value);
  return MPI_SUCCESS;
}

int keyval() {
  std::lock_guard<std::mutex> lock(keyval_mutex);
  int value = opencl_keyval.load();
  if (value == MPI_KEYVAL_INVALID &&
      PMPI_Type_create_keyval(copy_attribute, delete_attribute, &value, nullptr) == MPI_SUCCESS) {
    opencl_keyval.store(value, std::memory_order_release);
    p2p::note_opencl_types();
  }
  return value;
}

}  // namespace

bool opencl_memory(MPI_Datatype datatype, const void* buf, memory::OpenclBuffer* buffer) {
  const int key = opencl_keyval.load(std::memory_order_acquire);
  if (key == MPI_KEYVAL_INVALID || datatype == MPI_DATATYPE_NULL) return false;
  void* value = nullptr;
  int found = 0;
  if (PMPI_Type_get_attr(datatype, key, &value, &found) != MPI_SUCCESS || !found) return false;
  const auto* attribute = static_cast<const OpenclAttribute*>(value);
  *buffer = memory::OpenclBuffer{const_cast<void*>(buf), attribute->queue, attribute->offset};
  return true;
}

void release_opencl_keyval() {
  std::lock_guard<std::mutex> lock(keyval_mutex);
  int value = opencl_keyval.exchange(MPI_KEYVAL_INVALID);
  if (value != MPI_KEYVAL_INVALID) PMPI_Type_free_keyval(&value);
}

}  // namespace gddt::mpi

extern "C" int gddt_type_opencl(MPI_Datatype type, void* queue, MPI_Aint offset, MPI_Datatype* newtype) {
  if (newtype == nullptr || queue == nullptr || offset < 0) return MPI_ERR_ARG;
  const int key = gddt::mpi::keyval();
  if (key == MPI_KEYVAL_INVALID) return MPI_ERR_INTERN;
  int rc = PMPI_Type_dup(type, newtype);
  if (rc != MPI_SUCCESS) return rc;
  auto* attribute = new gddt::mpi::OpenclAttribute{queue, offset};
  rc = PMPI_Type_set_attr(*newtype, key, attribute);
  if (rc != MPI_SUCCESS) {
    delete attribute;
    PMPI_Type_free(newtype);
  }
  return rc;
}
