// The CUDA build of gpu.hpp. The runtime is linked statically and opens libcuda itself at
// run time, so without a driver every query fails cleanly and available() is false.
// libcuda is never linked: the one driver call we need is fetched through the runtime.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "core/gpu_cuda_driver.hpp"
#include "core/log.hpp"

namespace gddt::gpu {
namespace driver {

// Logs a failed runtime call by name and clears the runtime's last-error slot, so a later
// check_last_error() does not report this failure twice.
Status cuda_status(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return GDDT_OK;
  cudaGetLastError();
  GDDT_LOG(kError, "%s failed: %s", call, cudaGetErrorString(error));
  return GDDT_ERR_CUDA;
}

const Probe& probe() {
  static const Probe result = [] {
    Probe found;
    if (config::cuda() == config::Cuda::kOff) return found;
    cudaError_t error = cudaGetDeviceCount(&found.devices);
    if (error != cudaSuccess) {
      cudaGetLastError();
      GDDT_LOG(kInfo, "CUDA unavailable: cudaGetDeviceCount: %s", cudaGetErrorString(error));
      found.devices = 0;
      return found;
    }
    found.usable = found.devices > 0;
    return found;
  }();
  return result;
}

bool valid_device(int device) { return available() && device >= 0 && device < probe().devices; }

PointerGetAttribute pointer_get_attribute() {
  static const auto function = driver_function<PointerGetAttribute>("cuPointerGetAttribute");
  return function;
}

// Fills base/size from the driver; leaves size 0 when it cannot tell.
void query_range(const void* ptr, PointerInfo* info) {
  PointerGetAttribute get = pointer_get_attribute();
  if (get == nullptr) return;
  CUdeviceptr address = reinterpret_cast<CUdeviceptr>(ptr);
  CUdeviceptr start = 0;
  std::size_t size = 0;
  if (get(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, address) != CUDA_SUCCESS) return;
  if (get(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, address) != CUDA_SUCCESS) return;
  info->base = static_cast<std::uintptr_t>(start);
  info->size = size;
}

// One lazily created stream per device; never destroyed, since at process exit the
// driver may already be gone.
struct StreamTable {
  std::mutex create_mutex;
  std::unique_ptr<std::atomic<cudaStream_t>[]> streams;
};

StreamTable& stream_table() {
  static StreamTable table{{}, std::make_unique<std::atomic<cudaStream_t>[]>(static_cast<std::size_t>(probe().devices))};
  return table;
}

// What a program's cudaDeviceReset ends: every stream, event, allocation and mapping gddt made on
// that device, which the driver then no longer knows (destroying one crashes inside libcuda).
// The first time gddt makes something on a device it also allocates a sentinel there, whose
// allocation id the driver never gives out again; while the sentinel answers with its id, the
// context gddt's objects live in is the one they were made in.
struct Sentinels {
  std::mutex mutex;
  std::vector<void*> pointer;
  std::vector<unsigned long long> id;
};

Sentinels& sentinels() {
  static Sentinels* table = [] {
    auto* t = new Sentinels;  // never destroyed: asked until the process ends
    t->pointer.resize(static_cast<std::size_t>(probe().devices), nullptr);
    t->id.resize(t->pointer.size(), 0);
    return t;
  }();
  return *table;
}

std::atomic<bool> abandoned{false};

// With `device` current: places its sentinel if it has none.
void keep_watch(int device) {
  if (!valid_device(device)) return;
  Sentinels& s = sentinels();
  std::lock_guard<std::mutex> lock(s.mutex);
  void*& pointer = s.pointer[static_cast<std::size_t>(device)];
  PointerGetAttribute get = pointer_get_attribute();
  if (pointer != nullptr || get == nullptr || cudaMalloc(&pointer, 1) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  if (get(&s.id[static_cast<std::size_t>(device)], CU_POINTER_ATTRIBUTE_BUFFER_ID,
          reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS) {
    cudaFree(pointer);
    pointer = nullptr;
  }
}

}  // namespace driver

using namespace driver;

bool compiled_in() { return true; }

bool abandon_if_reset() {
  if (!available()) return false;
  Sentinels& s = sentinels();
  PointerGetAttribute get = pointer_get_attribute();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (std::size_t device = 0; device < s.pointer.size() && get != nullptr; ++device) {
    unsigned long long id = 0;
    if (s.pointer[device] == nullptr ||
        (get(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, reinterpret_cast<CUdeviceptr>(s.pointer[device])) == CUDA_SUCCESS &&
         id == s.id[device]))
      continue;
    GDDT_LOG(kWarn, "device %zu was reset under gddt (cudaDeviceReset): its streams, events, memory and mappings "
                    "of gddt's are gone with it and are left alone", device);
    abandoned.store(true, std::memory_order_release);
  }
  return abandoned.load(std::memory_order_acquire);
}

bool objects_abandoned() { return abandoned.load(std::memory_order_acquire); }
bool available() { return probe().usable; }
int device_count() { return probe().usable ? probe().devices : 0; }

int current_device() {
  int device = 0;
  if (!available() || cuda_status(cudaGetDevice(&device), "cudaGetDevice") != GDDT_OK) return 0;
  return device;
}

int driver_version() {
  int version = 0;
  if (cudaDriverGetVersion(&version) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return version;
}

int runtime_version() {
  int version = 0;
  if (cudaRuntimeGetVersion(&version) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return version;
}

std::string device_name(int device) {
  if (!valid_device(device)) return "";
  cudaDeviceProp properties{};
  if (cuda_status(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties") != GDDT_OK) return "";
  return properties.name;
}

bool can_access_peer(int device, int peer) {
  if (!valid_device(device) || !valid_device(peer) || device == peer) return false;
  int can = 0;
  if (cuda_status(cudaDeviceCanAccessPeer(&can, device, peer), "cudaDeviceCanAccessPeer") != GDDT_OK) return false;
  return can != 0;
}

namespace {

// The few NVML calls gddt makes, declared here (no NVML header is needed to build): handles
// are opaque pointers, and a count query with no array answers NVML_ERROR_INSUFFICIENT_SIZE.
struct Nvml {
  using Init = int (*)();
  using HandleByBusId = int (*)(const char* bus_id, void** device);
  using RunningProcesses = int (*)(void* device, unsigned int* count, void* infos);
  static constexpr int kSuccess = 0;
  static constexpr int kInsufficientSize = 7;
  HandleByBusId handle_by_bus_id = nullptr;
  RunningProcesses running_processes = nullptr;
};

const Nvml* nvml() {
  static const Nvml* const loaded = []() -> const Nvml* {
    void* library = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (library == nullptr) return nullptr;
    auto init = reinterpret_cast<Nvml::Init>(dlsym(library, "nvmlInit_v2"));
    static Nvml functions;
    functions.handle_by_bus_id = reinterpret_cast<Nvml::HandleByBusId>(dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
    functions.running_processes =
        reinterpret_cast<Nvml::RunningProcesses>(dlsym(library, "nvmlDeviceGetComputeRunningProcesses_v3"));
    if (init == nullptr || functions.handle_by_bus_id == nullptr || functions.running_processes == nullptr ||
        init() != Nvml::kSuccess) {
      GDDT_LOG(kInfo, "NVML unusable: cannot tell whether other processes share a GPU");
      return nullptr;
    }
    return &functions;
  }();
  return loaded;
}

}  // namespace

int other_compute_processes(int device) {
  const Nvml* library = valid_device(device) ? nvml() : nullptr;
  if (library == nullptr) return -1;
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  void* handle = nullptr;
  if (library->handle_by_bus_id(bus_id, &handle) != Nvml::kSuccess) return -1;
  unsigned int count = 0;
  const int result = library->running_processes(handle, &count, nullptr);
  if (result != Nvml::kSuccess && result != Nvml::kInsufficientSize) return -1;
  // This process is listed once it has a context on the device, which the caller has.
  return count > 0 ? static_cast<int>(count) - 1 : 0;
}

Status query_pointer(const void* ptr, PointerInfo* info) {
  *info = PointerInfo{};
  if (!available() || ptr == nullptr) return GDDT_OK;
  cudaPointerAttributes attributes{};
  cudaError_t error = cudaPointerGetAttributes(&attributes, ptr);
  if (error == cudaErrorInvalidValue) {
    // Runtimes before CUDA 11 answer this for pageable host memory and leave it as the
    // last error; clear it, the answer is "host".
    cudaGetLastError();
    return GDDT_OK;
  }
  GDDT_CHECK(cuda_status(error, "cudaPointerGetAttributes"));
  switch (attributes.type) {
    case cudaMemoryTypeUnregistered:
      return GDDT_OK;
    case cudaMemoryTypeHost:
      info->type = GDDT_MEMORY_PINNED;
      break;
    case cudaMemoryTypeDevice:
      info->type = GDDT_MEMORY_DEVICE;
      info->device = attributes.device;
      break;
    case cudaMemoryTypeManaged:
      info->type = GDDT_MEMORY_MANAGED;
      info->device = attributes.device;
      break;
  }
  query_range(ptr, info);
  return GDDT_OK;
}

bool context_exists() {
  static std::atomic<bool> seen{false};
  if (seen.load(std::memory_order_acquire)) return true;
  if (!available()) return false;
  using CtxGetCurrent = CUresult (*)(CUcontext*);
  using DeviceGet = CUresult (*)(CUdevice*, int);
  using PrimaryCtxGetState = CUresult (*)(CUdevice, unsigned int*, int*);
  static const auto get_current = driver_function<CtxGetCurrent>("cuCtxGetCurrent");
  static const auto device_get = driver_function<DeviceGet>("cuDeviceGet");
  static const auto primary_state = driver_function<PrimaryCtxGetState>("cuDevicePrimaryCtxGetState");
  bool exists = get_current == nullptr || device_get == nullptr || primary_state == nullptr;  // cannot tell: assume one
  CUcontext current = nullptr;
  if (!exists) exists = get_current(&current) == CUDA_SUCCESS && current != nullptr;
  for (int ordinal = 0; !exists && ordinal < device_count(); ++ordinal) {
    CUdevice device = 0;
    unsigned int flags = 0;
    int active = 0;
    exists = device_get(&device, ordinal) == CUDA_SUCCESS && primary_state(device, &flags, &active) == CUDA_SUCCESS &&
             active != 0;
  }
  if (exists) seen.store(true, std::memory_order_release);
  return exists;
}

DeviceGuard::DeviceGuard(int device) {
  if (!available() || device < 0) return;
  int current = -1;
  if (cuda_status(cudaGetDevice(&current), "cudaGetDevice") != GDDT_OK || current == device) return;
  if (cuda_status(cudaSetDevice(device), "cudaSetDevice") == GDDT_OK) previous_ = current;
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cuda_status(cudaSetDevice(previous_), "cudaSetDevice");
}

Status library_stream(int device, Stream* stream) {
  if (!valid_device(device)) return available() ? GDDT_ERR_INVALID_ARG : GDDT_ERR_NO_DEVICE;
  StreamTable& table = stream_table();
  std::atomic<cudaStream_t>& slot = table.streams[static_cast<std::size_t>(device)];
  cudaStream_t existing = slot.load(std::memory_order_acquire);
  if (existing == nullptr) {
    std::lock_guard<std::mutex> lock(table.create_mutex);
    existing = slot.load(std::memory_order_relaxed);
    if (existing == nullptr) {
      DeviceGuard guard(device);
      // cudaStreamDefault (not NonBlocking): work the user queued on the legacy default
      // stream is ordered before ours.
      keep_watch(device);
      GDDT_CHECK(cuda_status(cudaStreamCreateWithFlags(&existing, cudaStreamDefault), "cudaStreamCreateWithFlags"));
      slot.store(existing, std::memory_order_release);
    }
  }
  *stream = existing;
  return GDDT_OK;
}

Status stream_synchronize(Stream stream) {
  if (!available()) return GDDT_ERR_NO_DEVICE;
  if (objects_abandoned()) return GDDT_OK;
  return cuda_status(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

Status device_synchronize(int device) {
  if (!valid_device(device)) return GDDT_ERR_NO_DEVICE;
  if (objects_abandoned()) return GDDT_OK;
  DeviceGuard guard(device);
  return cuda_status(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

Status stream_query(Stream stream, bool* done) {
  if (!available()) return GDDT_ERR_NO_DEVICE;
  const cudaError_t error = cudaStreamQuery(static_cast<cudaStream_t>(stream));
  *done = error != cudaErrorNotReady;
  return error == cudaErrorNotReady ? GDDT_OK : cuda_status(error, "cudaStreamQuery");
}

Status legacy_stream_idle(bool* idle) { return stream_query(cudaStreamLegacy, idle); }

Stream legacy_stream() { return cudaStreamLegacy; }

namespace {

// Polls `query` until it answers done, doing `meanwhile` between polls.
template <typename Query>
Status poll(Query&& query, const WhileWaiting& meanwhile) {
  for (;;) {
    bool done = false;
    GDDT_CHECK(query(&done));
    if (done) return GDDT_OK;
    meanwhile.call(meanwhile.context);
  }
}

}  // namespace

Status stream_wait(Stream stream, const WhileWaiting& meanwhile) {
  if (meanwhile.call == nullptr) return stream_synchronize(stream);
  return poll([stream](bool* done) { return stream_query(stream, done); }, meanwhile);
}

Status stream_create(int device, Stream* stream) {
  if (!valid_device(device)) return available() ? GDDT_ERR_INVALID_ARG : GDDT_ERR_NO_DEVICE;
  DeviceGuard guard(device);
  keep_watch(device);
  cudaStream_t created = nullptr;
  GDDT_CHECK(cuda_status(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"));
  *stream = created;
  return GDDT_OK;
}

void stream_destroy(Stream stream) {
  if (!objects_abandoned()) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

Status event_create(int device, Event* event) {
  if (!valid_device(device)) return GDDT_ERR_NO_DEVICE;
  DeviceGuard guard(device);
  keep_watch(device);
  cudaEvent_t created = nullptr;
  GDDT_CHECK(cuda_status(cudaEventCreateWithFlags(&created, cudaEventDisableTiming), "cudaEventCreateWithFlags"));
  *event = created;
  return GDDT_OK;
}

int stream_device(Stream stream) {
  if (!available()) return -1;
  int device = -1;
  if (cuda_status(cudaStreamGetDevice(static_cast<cudaStream_t>(stream), &device), "cudaStreamGetDevice") != GDDT_OK)
    return -1;
  return device;
}

void event_destroy(Event event) {
  if (!objects_abandoned()) cudaEventDestroy(static_cast<cudaEvent_t>(event));
}

Status event_record(Event event, Stream stream) {
  if (!available()) return GDDT_ERR_NO_DEVICE;
  return cuda_status(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)),
                     "cudaEventRecord");
}

Status stream_wait_event(Stream stream, Event event) {
  if (!available()) return GDDT_ERR_NO_DEVICE;
  return cuda_status(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0),
                     "cudaStreamWaitEvent");
}

Status event_synchronize(Event event) {
  if (!available()) return GDDT_ERR_NO_DEVICE;
  return cuda_status(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize");
}

Status event_query(Event event, bool* done) {
  *done = true;
  if (!available()) return GDDT_ERR_NO_DEVICE;
  const cudaError_t error = cudaEventQuery(static_cast<cudaEvent_t>(event));
  *done = error != cudaErrorNotReady;
  return error == cudaErrorNotReady ? GDDT_OK : cuda_status(error, "cudaEventQuery");
}

Status event_wait(Event event, const WhileWaiting& meanwhile) {
  if (meanwhile.call == nullptr) return event_synchronize(event);
  return poll([event](bool* done) { return event_query(event, done); }, meanwhile);
}

Status memcpy_async(void* dst, const void* src, std::size_t bytes, Stream stream) {
  if (!available()) return GDDT_ERR_NO_DEVICE;
  return cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)),
                     "cudaMemcpyAsync");
}

Status check_last_error(const char* what) { return cuda_status(cudaGetLastError(), what); }

}  // namespace gddt::gpu
