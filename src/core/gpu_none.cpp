// gpu.hpp for builds without CUDA: no device, every address is host memory.
#include "core/gpu.hpp"

#include <cstdlib>
#include <cstring>

namespace gddt::gpu {

bool compiled_in() { return false; }
bool available() { return false; }
bool context_exists() { return false; }
bool abandon_if_reset() { return false; }
bool objects_abandoned() { return false; }
int device_count() { return 0; }
int current_device() { return 0; }
int driver_version() { return 0; }
int runtime_version() { return 0; }
std::string device_name(int) { return ""; }
bool can_access_peer(int, int) { return false; }
int other_compute_processes(int) { return -1; }

Status query_pointer(const void*, PointerInfo* info) {
  *info = PointerInfo{};
  return GDDT_OK;
}

DeviceGuard::DeviceGuard(int) {}
DeviceGuard::~DeviceGuard() = default;

Status library_stream(int, Stream* stream) {
  *stream = nullptr;
  return GDDT_ERR_NO_DEVICE;
}
Status stream_synchronize(Stream) { return GDDT_ERR_NO_DEVICE; }
Status device_synchronize(int) { return GDDT_ERR_NO_DEVICE; }
Status stream_wait(Stream, const WhileWaiting&) { return GDDT_ERR_NO_DEVICE; }
Status stream_query(Stream, bool* done) {
  *done = true;
  return GDDT_ERR_NO_DEVICE;
}
Status legacy_stream_idle(bool* idle) {
  *idle = false;
  return GDDT_ERR_NO_DEVICE;
}
Stream legacy_stream() { return nullptr; }
Status stream_create(int, Stream*) { return GDDT_ERR_NO_DEVICE; }
void stream_destroy(Stream) {}
Status event_create(int, Event*) { return GDDT_ERR_NO_DEVICE; }
int stream_device(Stream) { return -1; }
void event_destroy(Event) {}
Status event_record(Event, Stream) { return GDDT_ERR_NO_DEVICE; }
Status stream_wait_event(Stream, Event) { return GDDT_ERR_NO_DEVICE; }
Status event_synchronize(Event) { return GDDT_ERR_NO_DEVICE; }
Status event_query(Event, bool* done) {
  *done = true;
  return GDDT_ERR_NO_DEVICE;
}
Status event_wait(Event, const WhileWaiting&) { return GDDT_ERR_NO_DEVICE; }
Status memcpy_async(void*, const void*, std::size_t, Stream) { return GDDT_ERR_NO_DEVICE; }
Status device_alloc(int, std::size_t, void** ptr) {
  *ptr = nullptr;
  return GDDT_ERR_NO_DEVICE;
}
void device_free(int, void*) {}
Status pinned_alloc(std::size_t, void** ptr) {
  *ptr = nullptr;
  return GDDT_ERR_NO_DEVICE;
}
void pinned_free(void*) {}
Status mapped_alloc(std::size_t bytes, void** host, void** device) {
  *host = *device = std::calloc(1, bytes);
  return *host != nullptr ? GDDT_OK : GDDT_ERR_NO_MEMORY;
}
void mapped_free(void* host) { std::free(host); }
Status host_register(void*, std::size_t, void** device, bool* registered) {
  *device = nullptr;
  *registered = false;
  return GDDT_ERR_NO_DEVICE;
}
void host_unregister(void*) {}
Status check_last_error(const char*) { return GDDT_OK; }
bool DeviceUuid::operator==(const DeviceUuid& other) const {
  return std::memcmp(bytes, other.bytes, sizeof bytes) == 0;
}
Status device_uuid(int, DeviceUuid*) { return GDDT_ERR_NO_DEVICE; }
int device_of(const DeviceUuid&) { return -1; }
Status buffer_id(const void*, std::uint64_t*) { return GDDT_ERR_NO_DEVICE; }
Status ipc_export(const void*, IpcExport*) { return GDDT_ERR_NO_DEVICE; }
Status ipc_open(const unsigned char (&)[kIpcHandleBytes], int, void**) { return GDDT_ERR_NO_DEVICE; }
void ipc_close(int, void*) {}
Status ipc_event_create(int, Event*, unsigned char (&)[kIpcHandleBytes]) { return GDDT_ERR_NO_DEVICE; }
Status ipc_event_open(const unsigned char (&)[kIpcHandleBytes], int, Event*) { return GDDT_ERR_NO_DEVICE; }

}  // namespace gddt::gpu
