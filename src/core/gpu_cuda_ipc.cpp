// The CUDA build of gpu.hpp's device identities and CUDA IPC: UUIDs, allocation ids, exported
// allocations and events, and their mappings in other processes.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "core/gpu.hpp"
#include "core/gpu_cuda_driver.hpp"

namespace gddt::gpu {

using namespace driver;

bool DeviceUuid::operator==(const DeviceUuid& other) const {
  return std::memcmp(bytes, other.bytes, sizeof bytes) == 0;
}

namespace {

// Every device's UUID, asked of the driver once (the peer protocol looks them up per message); a
// device the driver would not name keeps an all-zero entry and is reported as an error.
struct Uuids {
  std::vector<DeviceUuid> of_device;
  std::vector<bool> known;
};

const Uuids& uuids() {
  static const Uuids table = [] {
    Uuids t;
    using DeviceGet = CUresult (*)(CUdevice*, int);
    using DeviceGetUuid = CUresult (*)(CUuuid*, CUdevice);
    const auto device_get = driver_function<DeviceGet>("cuDeviceGet");
    const auto get_uuid = driver_function<DeviceGetUuid>("cuDeviceGetUuid");
    const int devices = available() ? probe().devices : 0;
    t.of_device.resize(static_cast<std::size_t>(devices));
    t.known.resize(static_cast<std::size_t>(devices), false);
    for (int device = 0; device < devices && device_get != nullptr && get_uuid != nullptr; ++device) {
      CUdevice handle = 0;
      CUuuid raw{};
      if (device_get(&handle, device) != CUDA_SUCCESS || get_uuid(&raw, handle) != CUDA_SUCCESS) continue;
      static_assert(sizeof raw.bytes == sizeof(DeviceUuid::bytes), "a CUDA uuid is 16 bytes");
      std::memcpy(t.of_device[static_cast<std::size_t>(device)].bytes, raw.bytes, sizeof raw.bytes);
      t.known[static_cast<std::size_t>(device)] = true;
    }
    return t;
  }();
  return table;
}

}  // namespace

Status device_uuid(int device, DeviceUuid* uuid) {
  if (!valid_device(device)) return GDDT_ERR_NO_DEVICE;
  const Uuids& all = uuids();
  if (!all.known[static_cast<std::size_t>(device)]) return GDDT_ERR_CUDA;
  *uuid = all.of_device[static_cast<std::size_t>(device)];
  return GDDT_OK;
}

int device_of(const DeviceUuid& uuid) {
  const Uuids& all = uuids();
  for (std::size_t device = 0; device < all.of_device.size(); ++device)
    if (all.known[device] && all.of_device[device] == uuid) return static_cast<int>(device);
  return -1;
}

Status buffer_id(const void* ptr, std::uint64_t* id) {
  PointerGetAttribute get = pointer_get_attribute();
  unsigned long long value = 0;
  if (get == nullptr || get(&value, CU_POINTER_ATTRIBUTE_BUFFER_ID, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS)
    return GDDT_ERR_CUDA;
  *id = value;
  return GDDT_OK;
}

Status ipc_export(const void* ptr, IpcExport* exported) {
  PointerInfo info;
  GDDT_CHECK(query_pointer(ptr, &info));
  if (info.type != GDDT_MEMORY_DEVICE || info.size == 0) return GDDT_ERR_UNSUPPORTED;
  GDDT_CHECK(buffer_id(ptr, &exported->buffer_id));
  cudaIpcMemHandle_t handle;
  static_assert(sizeof handle == kIpcHandleBytes, "a CUDA IPC handle is 64 bytes");
  // Memory of stream-ordered pools or virtual memory management has no such handle: an ordinary
  // answer (the caller keeps the memory unshared), not an error line on every window or message.
  const cudaError_t error = cudaIpcGetMemHandle(&handle, const_cast<void*>(ptr));
  if (error != cudaSuccess) {
    cudaGetLastError();
    GDDT_LOG(kInfo, "cudaIpcGetMemHandle: %s: not shared through CUDA IPC", cudaGetErrorString(error));
    return GDDT_ERR_UNSUPPORTED;
  }
  std::memcpy(exported->handle, &handle, sizeof handle);
  exported->base = info.base;
  exported->size = info.size;
  exported->device = info.device;
  return GDDT_OK;
}

Status ipc_open(const unsigned char (&handle)[kIpcHandleBytes], int device, void** base) {
  if (!valid_device(device)) return GDDT_ERR_NO_DEVICE;
  DeviceGuard guard(device);
  keep_watch(device);
  cudaIpcMemHandle_t raw;
  std::memcpy(&raw, handle, sizeof raw);
  return cuda_status(cudaIpcOpenMemHandle(base, raw, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
}

void ipc_close(int device, void* base) {
  if (!valid_device(device) || objects_abandoned()) return;
  DeviceGuard guard(device);
  cuda_status(cudaIpcCloseMemHandle(base), "cudaIpcCloseMemHandle");
}

Status ipc_event_create(int device, Event* event, unsigned char (&handle)[kIpcHandleBytes]) {
  if (!valid_device(device)) return GDDT_ERR_NO_DEVICE;
  DeviceGuard guard(device);
  keep_watch(device);
  cudaEvent_t created = nullptr;
  GDDT_CHECK(cuda_status(cudaEventCreateWithFlags(&created, cudaEventDisableTiming | cudaEventInterprocess),
                         "cudaEventCreateWithFlags"));
  cudaIpcEventHandle_t raw;
  static_assert(sizeof raw == kIpcHandleBytes, "a CUDA IPC event handle is 64 bytes");
  const Status exported = cuda_status(cudaIpcGetEventHandle(&raw, created), "cudaIpcGetEventHandle");
  if (is_error(exported)) {
    cudaEventDestroy(created);
    return exported;
  }
  std::memcpy(handle, &raw, sizeof raw);
  *event = created;
  return GDDT_OK;
}

Status ipc_event_open(const unsigned char (&handle)[kIpcHandleBytes], int device, Event* event) {
  if (!valid_device(device)) return GDDT_ERR_NO_DEVICE;
  DeviceGuard guard(device);
  keep_watch(device);
  cudaIpcEventHandle_t raw;
  std::memcpy(&raw, handle, sizeof raw);
  cudaEvent_t opened = nullptr;
  GDDT_CHECK(cuda_status(cudaIpcOpenEventHandle(&opened, raw), "cudaIpcOpenEventHandle"));
  *event = opened;
  return GDDT_OK;
}

}  // namespace gddt::gpu
