// A program that never uses CUDA must not get a CUDA context from gddt (each costs hundreds of
// MiB on a GPU, per rank): host-memory MPI_Send/MPI_Recv, a derived datatype and MPI_Pack run
// through gddt, then the driver is asked whether any context exists. Then the program does
// create one and packs device memory: gddt must notice the new context and classify the
// buffer as device memory. The driver is opened at run time; without one the test is skipped.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUdeviceptr = unsigned long long;

struct Driver {
  CUresult (*init)(unsigned int);
  CUresult (*device_count)(int*);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*primary_state)(CUdevice, unsigned int*, int*);
  CUresult (*primary_retain)(CUcontext*, CUdevice);
  CUresult (*primary_release)(CUdevice);
  CUresult (*ctx_get_current)(CUcontext*);
  CUresult (*ctx_set_current)(CUcontext);
  CUresult (*mem_alloc)(CUdeviceptr*, std::size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*copy_to_device)(CUdeviceptr, const void*, std::size_t);
};

template <typename F>
bool load(void* library, const char* name, F* function) {
  *function = reinterpret_cast<F>(dlsym(library, name));
  return *function != nullptr;
}

// Fills `driver`; false when there is no usable driver or GPU.
bool open_driver(Driver* d) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return false;
  bool ok = load(library, "cuInit", &d->init) && load(library, "cuDeviceGetCount", &d->device_count) &&
            load(library, "cuDeviceGet", &d->device_get) &&
            load(library, "cuDevicePrimaryCtxGetState", &d->primary_state) &&
            load(library, "cuDevicePrimaryCtxRetain", &d->primary_retain) &&
            load(library, "cuDevicePrimaryCtxRelease_v2", &d->primary_release) &&
            load(library, "cuCtxGetCurrent", &d->ctx_get_current) &&
            load(library, "cuCtxSetCurrent", &d->ctx_set_current) && load(library, "cuMemAlloc_v2", &d->mem_alloc) &&
            load(library, "cuMemFree_v2", &d->mem_free) && load(library, "cuMemcpyHtoD_v2", &d->copy_to_device);
  int devices = 0;
  return ok && d->init(0) == 0 && d->device_count(&devices) == 0 && devices > 0;
}

// The devices whose primary context is active, and whether one is current here.
int contexts_alive(const Driver& d) {
  int devices = 0, alive = 0;
  d.device_count(&devices);
  for (int ordinal = 0; ordinal < devices; ++ordinal) {
    CUdevice device = 0;
    unsigned int flags = 0;
    int active = 0;
    if (d.device_get(&device, ordinal) == 0 && d.primary_state(device, &flags, &active) == 0 && active) ++alive;
  }
  CUcontext current = nullptr;
  if (d.ctx_get_current(&current) == 0 && current != nullptr) ++alive;
  return alive;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Driver driver{};
  int usable = open_driver(&driver) ? 1 : 0, all_usable = 0;
  MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_usable || size != 2) {
    if (rank == 0) std::printf("host_only_context: skipped: needs 2 ranks and a CUDA driver with a GPU\n");
    MPI_Finalize();
    return 0;  // the line above skips the test (gddt_add_mpi_test)
  }
  int failures = 0;
  const int peer = 1 - rank;

  // Host-only traffic through gddt: plain and derived datatypes, blocking and not, and packing.
  std::vector<int> data(4096), got(4096, -1);
  for (int i = 0; i < 4096; ++i) data[i] = i + 1000 * rank;
  MPI_Datatype every_other;
  MPI_Type_vector(2048, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  for (int round = 0; round < 100; ++round) {
    MPI_Sendrecv(data.data(), 64, MPI_INT, peer, 1, got.data(), 64, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Request requests[2];
    MPI_Irecv(got.data(), 1, every_other, peer, 2, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(data.data(), 1, every_other, peer, 2, MPI_COMM_WORLD, &requests[1]);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  }
  std::vector<char> packed(2048 * sizeof(int));
  int position = 0;
  MPI_Pack(data.data(), 1, every_other, packed.data(), static_cast<int>(packed.size()), &position, MPI_COMM_WORLD);
  if (got[2] != 2 + 1000 * peer) {
    std::printf("rank %d: host data wrong: %d\n", rank, got[2]);
    ++failures;
  }
  const int alive = contexts_alive(driver);
  if (alive != 0) {
    std::printf("rank %d: FAIL: a host-only program has %d CUDA context(s) after MPI traffic through gddt\n", rank,
                alive);
    ++failures;
  }

  // Now the program uses CUDA: gddt must see the device buffer for what it is.
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUdeviceptr on_device = 0;
  driver.device_get(&device, 0);
  if (driver.primary_retain(&context, device) != 0 || driver.ctx_set_current(context) != 0 ||
      driver.mem_alloc(&on_device, data.size() * sizeof(int)) != 0 ||
      driver.copy_to_device(on_device, data.data(), data.size() * sizeof(int)) != 0) {
    std::printf("rank %d: FAIL: could not set up device memory\n", rank);
    ++failures;
  } else {
    std::vector<char> from_device(packed.size(), 0);
    position = 0;
    int rc = MPI_Pack(reinterpret_cast<void*>(on_device), 1, every_other, from_device.data(),
                      static_cast<int>(from_device.size()), &position, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || std::memcmp(from_device.data(), packed.data(), packed.size()) != 0) {
      std::printf("rank %d: FAIL: packing device memory after the context appeared gave other bytes\n", rank);
      ++failures;
    }
    driver.mem_free(on_device);
    driver.ctx_set_current(nullptr);
    driver.primary_release(device);
  }
  MPI_Type_free(&every_other);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("host-only context check: %s\n", total == 0 ? "passed" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
