// The only door to CUDA for the layers above. Built from gpu_cuda.cpp when CUDA is
// enabled and from gpu_none.cpp otherwise, so no other file needs #ifdef. The CUDA runtime
// is linked statically and finds the driver at run time: a machine without a driver gets
// available() == false, never a load failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.hpp"

namespace gddt::gpu {

using Stream = void*;  // a cudaStream_t
using Event = void*;   // a cudaEvent_t

// True when CUDA is compiled in, GDDT_CUDA is not "off", a driver answers and at least one
// device exists. Decided once.
bool available();
bool compiled_in();
int device_count();
// The calling thread's current device (0 when none was set or CUDA is unusable).
int current_device();

// Driver and runtime versions as CUDA encodes them (e.g. 13000); 0 when absent.
int driver_version();
int runtime_version();
std::string device_name(int device);

// Whether `device` can address memory on `peer` directly (cudaDeviceCanAccessPeer).
bool can_access_peer(int device, int peer);

// How many processes other than this one hold a compute context on `device`, as NVML (opened
// at run time) reports it; -1 when it cannot tell. Kernels of different processes on one GPU
// take turns rather than run side by side (unless MPS merges them).
int other_compute_processes(int device);

// Whether the program reset a device gddt made objects on (cudaDeviceReset, which ends them
// all); from then on every destroy, free, close and synchronize of gddt's is a no-op, so
// finalization leaves what is already gone alone instead of crashing in the driver. Asked once,
// by MPI_Finalize.
bool abandon_if_reset();
bool objects_abandoned();

// Whether this process has a CUDA context (the primary context of a device, or one current
// on the calling thread). Asked of the driver without creating one; once true, always true.
bool context_exists();

struct PointerInfo {
  gddt_memory_type_t type = GDDT_MEMORY_HOST;
  int device = -1;               // owning device of device/managed memory, -1 otherwise
  std::uintptr_t base = 0;       // allocation range, when the driver tells it (size 0 if not)
  std::size_t size = 0;
};

// Asks the driver what `ptr` is. Pageable host memory answers type HOST, size 0.
Status query_pointer(const void* ptr, PointerInfo* info);

// Makes `device` current for the guard's lifetime and restores the previous one after; a
// negative device leaves the current one alone.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// A stream owned by gddt for `device` (created on first use, blocking with respect to the
// legacy default stream so work the user queued there is ordered before ours).
Status library_stream(int device, Stream* stream);
Status stream_synchronize(Stream stream);
// Waits for all work this process queued on `device`.
Status device_synchronize(int device);
// Sets *done to whether all work queued on `stream` has finished, without waiting.
Status stream_query(Stream stream, bool* done);

// Work to do while waiting for a stream, called between polls (the MPI layer drives the
// library's progress engine with it). Without a call the wait blocks in the driver.
struct WhileWaiting {
  void (*call)(void* context) = nullptr;
  void* context = nullptr;
};
Status stream_wait(Stream stream, const WhileWaiting& meanwhile);

// Sets *idle to whether the legacy default stream of the current device has no unfinished
// work: what the user queued there before a call is then done (one driver query, 1.7 us on an
// H200).
Status legacy_stream_idle(bool* idle);
// The legacy default stream of the current device, where the user's cudaMemcpy and
// default-stream kernels run (a cudaMemcpy from pageable memory may still be landing there
// when it returns): what work queued for a call without a stream of its own is ordered after.
Stream legacy_stream();

// Streams and events for the chunk pipelines (created once, reused by their owners).
// Streams are non-blocking with respect to the legacy default stream: pipelines order
// themselves after the user's work explicitly.
Status stream_create(int device, Stream* stream);
void stream_destroy(Stream stream);
// Without timing, for ordering only; on `device`, where the streams it is recorded on must be.
Status event_create(int device, Event* event);
// The device a stream belongs to (-1 when it cannot tell).
int stream_device(Stream stream);
void event_destroy(Event event);
Status event_record(Event event, Stream stream);
Status stream_wait_event(Stream stream, Event event);
Status event_synchronize(Event event);
// Sets *done to whether the work before `event` has finished, without waiting.
Status event_query(Event event, bool* done);
// Waits for `event` as stream_wait does for a stream.
Status event_wait(Event event, const WhileWaiting& meanwhile);

// cudaMemcpyAsync with cudaMemcpyDefault (the driver infers the direction under UVA).
Status memcpy_async(void* dst, const void* src, std::size_t bytes, Stream stream);

Status device_alloc(int device, std::size_t bytes, void** ptr);
void device_free(int device, void* ptr);
Status pinned_alloc(std::size_t bytes, void** ptr);
void pinned_free(void* ptr);
// Zeroed host memory a kernel reads and writes over the bus: *host for the host, *device for
// kernels. Without a usable GPU it is ordinary host memory and the two pointers are equal, so
// host threads can stand in for kernels.
Status mapped_alloc(std::size_t bytes, void** host, void** device);
void mapped_free(void* host);

// Page-locks host memory gddt did not allocate (a window the MPI library allocated) and maps it for
// kernels, *device being its address for them; *registered is false where something else had
// registered it already (it then stays registered: host_unregister is not called for it).
Status host_register(void* host, std::size_t bytes, void** device, bool* registered);
void host_unregister(void* host);

// A GPU's identity across processes, whatever CUDA_VISIBLE_DEVICES numbers it as.
struct DeviceUuid {
  unsigned char bytes[16] = {};
  bool operator==(const DeviceUuid& other) const;
};
// Asked of the driver, which creates no context for it.
Status device_uuid(int device, DeviceUuid* uuid);
// The ordinal of the device with `uuid` in this process; -1 when it cannot see that GPU.
int device_of(const DeviceUuid& uuid);

// CUDA IPC: what another process needs to map the allocation that holds a device pointer.
constexpr int kIpcHandleBytes = 64;
struct IpcExport {
  unsigned char handle[kIpcHandleBytes] = {};
  std::uintptr_t base = 0;     // the allocation's first byte in this process
  std::uint64_t size = 0;      // and its bytes
  std::uint64_t buffer_id = 0; // the driver's id of the allocation, never reused within a process
  int device = -1;
};
// The allocation's id alone (cheap: one driver query), to tell whether a cached export is stale.
Status buffer_id(const void* ptr, std::uint64_t* id);
Status ipc_export(const void* ptr, IpcExport* exported);
// Maps another process's exported allocation into this one, on `device`: the GPU that holds it,
// or one with peer access to it (the mapping then enables that access).
Status ipc_open(const unsigned char (&handle)[kIpcHandleBytes], int device, void** base);
void ipc_close(int device, void* base);
// An event of `device` that another process can wait for (interprocess, without timing), and the
// handle that process opens it by.
Status ipc_event_create(int device, Event* event, unsigned char (&handle)[kIpcHandleBytes]);
// Opens another process's event (not this process's own) on `device`; event_destroy closes it.
Status ipc_event_open(const unsigned char (&handle)[kIpcHandleBytes], int device, Event* event);

// Converts the last CUDA error to a Status, logging `what` with the CUDA message.
Status check_last_error(const char* what);

}  // namespace gddt::gpu
