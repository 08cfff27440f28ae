#include "device_api/stream_ordered_pool.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/gpu.hpp"
#include "core/gpu_capture.hpp"

namespace gddt::device_api {
namespace {

constexpr int kRecordsPerSlab = 256;

// The pool, the operations in flight, the retired handles and the named-type table; host
// functions take it too, so no CUDA call is made while it is held.
std::mutex mutex;
std::mutex setup_mutex;  // the keyvals and the error word
std::vector<Slot> free_slots;
// Operations without a status, outside capture: their last kernel sets the mirror's done flag,
// which the next enqueue call sees, so the stream pays no host function for them.
std::vector<std::pair<Slot, TypeRef*>> in_flight;
std::vector<TypeRef*> retired;
// Staging of the operations that do not go through the ring, kept for reuse (never freed: a
// host function gives it back, where no CUDA call is allowed).
std::vector<OwnStaging> free_staging;
std::unordered_map<MPI_Datatype, TypeRef*> named_types;  // predefined types take no attributes
int comm_keyval = MPI_KEYVAL_INVALID;
int type_keyval = MPI_KEYVAL_INVALID;
// An error a kernel met while its stream ran an operation (mapped host memory, never freed:
// graphs may outlive every communicator); the next enqueue call returns it.
int* error_word = nullptr;
int* error_word_device = nullptr;

int make_error_word() {
  if (error_word != nullptr) return MPI_SUCCESS;
  gpu::RelaxedCapture relaxed;
  if (cudaHostAlloc(&error_word, sizeof(int), cudaHostAllocMapped) != cudaSuccess) return MPI_ERR_NO_MEM;
  *error_word = MPI_SUCCESS;
  if (cudaHostGetDevicePointer(&error_word_device, error_word, 0) != cudaSuccess) return MPI_ERR_OTHER;
  return MPI_SUCCESS;
}

int delete_comm_attribute(MPI_Comm, int, void* value, void*) {
  auto* comm = static_cast<StreamComm*>(value);
  gddt_device_comm_free(&comm->device);
  delete comm;
  reap();
  return MPI_SUCCESS;
}

int delete_type_attribute(MPI_Datatype, int, void* value, void*) {
  release_type(static_cast<TypeRef*>(value));
  return MPI_SUCCESS;
}

}  // namespace

void release_type(TypeRef* ref) {
  if (ref == nullptr || ref->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  std::lock_guard<std::mutex> lock(mutex);
  retired.push_back(ref);
}

// Releases what the streams have passed; called on host threads only.
void reap() {
  std::vector<std::pair<Slot, TypeRef*>> finished;
  std::vector<TypeRef*> done;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto pending = [](const std::pair<Slot, TypeRef*>& op) {
      return __atomic_load_n(&op.first.mirror->done, __ATOMIC_ACQUIRE) == 0;
    };
    auto first = std::stable_partition(in_flight.begin(), in_flight.end(), pending);
    finished.assign(first, in_flight.end());
    in_flight.erase(first, in_flight.end());
  }
  for (const auto& [slot, type] : finished) {
    give_slot(slot);
    release_type(type);
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    done.swap(retired);
  }
  for (TypeRef* ref : done) {
    gddt_device_type_free(&ref->type);
    delete ref;
  }
}

int take_slot(Slot* slot) {
  auto take = [&]() {
    *slot = free_slots.back();
    free_slots.pop_back();
    slot->mirror->done = 0;
    slot->mirror->abandoned = 0;
  };
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!free_slots.empty()) return take(), MPI_SUCCESS;
  }
  // Allocated without the lock: a host function waiting for it must not wait for a CUDA call.
  gpu::RelaxedCapture relaxed;
  Record* records = nullptr;
  Mirror* mirrors = nullptr;
  Mirror* mirrors_device = nullptr;
  if (cudaMalloc(&records, sizeof(Record) * kRecordsPerSlab) != cudaSuccess) return MPI_ERR_NO_MEM;
  if (cudaHostAlloc(&mirrors, sizeof(Mirror) * kRecordsPerSlab, cudaHostAllocMapped) != cudaSuccess ||
      cudaHostGetDevicePointer(&mirrors_device, mirrors, 0) != cudaSuccess) {
    cudaFree(records);
    return MPI_ERR_NO_MEM;
  }
  std::lock_guard<std::mutex> lock(mutex);
  for (int i = 0; i < kRecordsPerSlab; ++i)
    free_slots.push_back(Slot{records + i, mirrors + i, mirrors_device + i, OwnStaging{}});
  take();
  return MPI_SUCCESS;
}

void give_slot(const Slot& slot) {
  if (__atomic_load_n(&slot.mirror->abandoned, __ATOMIC_ACQUIRE) != 0) return;
  std::lock_guard<std::mutex> lock(mutex);
  if (slot.staging.host != nullptr) free_staging.push_back(slot.staging);
  free_slots.push_back(slot);
  free_slots.back().staging = OwnStaging{};
}

int take_staging(std::size_t bytes, Slot* slot) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto best = free_staging.end();
    for (auto it = free_staging.begin(); it != free_staging.end(); ++it)
      if (it->bytes >= bytes && (best == free_staging.end() || it->bytes < best->bytes)) best = it;
    if (best != free_staging.end()) {
      slot->staging = *best;
      free_staging.erase(best);
      return MPI_SUCCESS;
    }
  }
  gpu::RelaxedCapture relaxed;
  OwnStaging staging;
  staging.bytes = bytes;
  if (is_error(gpu::mapped_alloc(bytes, &staging.host, &staging.device))) return MPI_ERR_NO_MEM;
  slot->staging = staging;
  return MPI_SUCCESS;
}

int take_error() {
  if (error_word == nullptr) return MPI_SUCCESS;
  return __atomic_exchange_n(error_word, MPI_SUCCESS, __ATOMIC_ACQ_REL);
}

int make_keyvals() {
  std::lock_guard<std::mutex> lock(setup_mutex);
  if (comm_keyval == MPI_KEYVAL_INVALID &&
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_comm_attribute, &comm_keyval, nullptr) != MPI_SUCCESS)
    return MPI_ERR_OTHER;
  if (type_keyval == MPI_KEYVAL_INVALID &&
      PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_type_attribute, &type_keyval, nullptr) != MPI_SUCCESS)
    return MPI_ERR_OTHER;
  return make_error_word();
}

int stream_comm_of(MPI_Comm comm, StreamComm** out) {
  if (comm == MPI_COMM_NULL || comm_keyval == MPI_KEYVAL_INVALID) return MPI_ERR_COMM;
  int found = 0;
  void* value = nullptr;
  if (PMPI_Comm_get_attr(comm, comm_keyval, &value, &found) != MPI_SUCCESS || !found) return MPI_ERR_COMM;
  *out = static_cast<StreamComm*>(value);
  return MPI_SUCCESS;
}

// The device handle of `datatype` with a reference for the caller: made once per datatype and
// kept on it as an attribute (freed with it), predefined ones in a table.
int type_ref_of(MPI_Datatype datatype, TypeRef** out) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (PMPI_Type_get_envelope(datatype, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return MPI_ERR_TYPE;
  const bool named = combiner == MPI_COMBINER_NAMED;
  TypeRef* ref = nullptr;
  if (named) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = named_types.find(datatype);
    if (it != named_types.end()) ref = it->second;
  } else {
    int found = 0;
    void* value = nullptr;
    if (PMPI_Type_get_attr(datatype, type_keyval, &value, &found) != MPI_SUCCESS) return MPI_ERR_TYPE;
    if (found) ref = static_cast<TypeRef*>(value);
  }
  if (ref == nullptr) {
    ref = new TypeRef{};
    ref->refs.store(1, std::memory_order_relaxed);  // the attribute's or the table's
    int rc;
    {
      gpu::RelaxedCapture relaxed;
      rc = gddt_device_type_create(datatype, &ref->type);
    }
    if (rc != MPI_SUCCESS) {
      delete ref;
      return rc;
    }
    if (named) {
      std::lock_guard<std::mutex> lock(mutex);
      named_types.emplace(datatype, ref);
    } else if (PMPI_Type_set_attr(datatype, type_keyval, ref) != MPI_SUCCESS) {
      gddt_device_type_free(&ref->type);
      delete ref;
      return MPI_ERR_TYPE;
    }
  }
  ref->refs.fetch_add(1, std::memory_order_relaxed);
  *out = ref;
  return MPI_SUCCESS;
}

void release_when_done(const Slot& slot, TypeRef* type) {
  std::lock_guard<std::mutex> lock(mutex);
  in_flight.emplace_back(slot, type);
}

int* error_word_on_device() { return error_word_device; }

int attach_stream_comm(MPI_Comm comm, StreamComm* stream_comm) {
  return PMPI_Comm_set_attr(comm, comm_keyval, stream_comm);
}

}  // namespace gddt::device_api
