// CUDA IPC caches (internal.hpp): this process's exported allocations, its mappings of other
// processes' allocations, and the pack events of other processes it opened.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include "core/counters.hpp"
#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

namespace {

struct Exports {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, gpu::IpcExport> by_buffer;  // allocation ids never recur
};

Exports& exports() {
  static Exports* instance = new Exports;
  return *instance;
}

// Mappings of other processes' allocations, keyed by process, allocation id and the GPU that maps
// it. A mapping keeps the other process's memory allocated after it frees it, so only so many stay
// open: beyond kMostMappings the least recently used one is closed, unless gathered unpacks not yet
// launched may read it (used since `kept_from`, while any thread's gathered unpacks wait); then more
// stay open until they are launched. A mapping of an allocation the other process has freed also
// holds its addresses: the driver refuses to map a later allocation there ("already mapped") until
// it is closed.
struct Mapping {
  int device = -1;
  void* base = nullptr;
  std::uint64_t last_use = 0;
  std::uint64_t their_base = 0;  // the allocation's addresses in the other process
  std::uint64_t their_size = 0;
};
constexpr std::size_t kMostMappings = 64;

struct Mappings {
  std::mutex mutex;
  std::map<std::tuple<std::int32_t, std::uint64_t, int>, Mapping> open;
  std::uint64_t uses = 0;
  std::uint64_t kept_from = std::numeric_limits<std::uint64_t>::max();
  int gathering_threads = 0;
};

// Whether this thread has gathered unpacks that queue_gathered has not launched yet.
thread_local bool gathering = false;

Mappings& mappings() {
  static Mappings* instance = new Mappings;
  return *instance;
}

// Closes the mappings of process `pid`'s allocations that overlap its allocation at `their_base`
// (`their_size` bytes): two live allocations of one process never overlap, so those were freed. No
// wait for this GPU's work first, unlike an eviction: a sender frees nothing a receiver may still
// read (scratch after its release, a lent buffer after its read, flags at MPI_Finalize). A size of 0
// (not known) still counts the first byte, where the driver would map the new allocation.
void close_freed(Mappings& m, std::int32_t pid, std::uint64_t their_base, std::uint64_t their_size) {
  const std::uint64_t end = their_base + std::max<std::uint64_t>(their_size, 1);
  for (auto it = m.open.begin(); it != m.open.end();) {
    const Mapping& old = it->second;
    const bool overlaps = std::get<0>(it->first) == pid && old.their_base < end &&
                          their_base < old.their_base + std::max<std::uint64_t>(old.their_size, 1);
    if (!overlaps) {
      ++it;
      continue;
    }
    gpu::ipc_close(old.device, old.base);
    it = m.open.erase(it);
  }
}

Status mapping_of(std::int32_t pid, std::uint64_t buffer_id, std::uint64_t their_base, std::uint64_t their_size,
                  const unsigned char (&handle)[gpu::kIpcHandleBytes], int device, void** base) {
  Mappings& m = mappings();
  std::lock_guard<std::mutex> lock(m.mutex);
  const auto key = std::make_tuple(pid, buffer_id, device);
  auto found = m.open.find(key);
  if (found != m.open.end()) {
    found->second.last_use = ++m.uses;
    *base = found->second.base;
    return GDDT_OK;
  }
  close_freed(m, pid, their_base, their_size);
  if (m.open.size() >= kMostMappings) {
    auto oldest = std::min_element(m.open.begin(), m.open.end(), [](const auto& a, const auto& b) {
      return a.second.last_use < b.second.last_use;
    });
    if (oldest->second.last_use < m.kept_from) {
      // Kernels queued earlier (unpacks left running) may still read it.
      gpu::device_synchronize(oldest->second.device);
      gpu::ipc_close(oldest->second.device, oldest->second.base);
      m.open.erase(oldest);
    }
  }
  GDDT_CHECK(gpu::ipc_open(handle, device, base));
  counters::add(counters::Counter::kPeerIpcMappings, 1);
  m.open[key] = Mapping{device, *base, ++m.uses, their_base, their_size};
  return GDDT_OK;
}

// Other processes' pack events opened here, keyed by process, event id and the GPU that waits.
struct OpenedEvents {
  std::mutex mutex;
  std::map<std::tuple<std::int32_t, std::uint32_t, int>, gpu::Event> open;
};

OpenedEvents& opened_events() {
  static OpenedEvents* instance = new OpenedEvents;
  return *instance;
}

}  // namespace

Status export_of(const void* pointer, gpu::IpcExport* exported) {
  std::uint64_t id = 0;
  GDDT_CHECK(gpu::buffer_id(pointer, &id));
  Exports& e = exports();
  {
    std::lock_guard<std::mutex> lock(e.mutex);
    auto found = e.by_buffer.find(id);
    if (found != e.by_buffer.end()) {
      *exported = found->second;
      return GDDT_OK;
    }
  }
  GDDT_CHECK(gpu::ipc_export(pointer, exported));
  std::lock_guard<std::mutex> lock(e.mutex);
  e.by_buffer[exported->buffer_id] = *exported;
  return GDDT_OK;
}

Status name_in_export(const gpu::IpcExport& exported, const void* at, Header* header) {
  GDDT_CHECK(gpu::device_uuid(exported.device, &header->uuid));
  header->pid = static_cast<std::int32_t>(getpid());
  header->buffer_id = exported.buffer_id;
  header->base = exported.base;
  header->size = exported.size;
  header->offset = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(at) - exported.base);
  std::memcpy(header->handle, exported.handle, sizeof header->handle);
  return GDDT_OK;
}

Status user_work_done(int device) {
  gpu::DeviceGuard guard(device);
  bool idle = false;
  GDDT_CHECK(gpu::legacy_stream_idle(&idle));
  return idle ? GDDT_OK : gpu::stream_synchronize(gpu::legacy_stream());
}

namespace {

// Byte `offset` of process `pid`'s exported allocation `buffer_id` (at `base` there) for GPU
// `device` of this process: mapped through CUDA IPC, or the address itself in the process's own.
Status reach(std::int32_t pid, std::uint64_t buffer_id, std::uint64_t base, std::uint64_t size,
             const unsigned char (&handle)[gpu::kIpcHandleBytes], std::int64_t offset, int device, char** at) {
  void* mapped = reinterpret_cast<void*>(static_cast<std::uintptr_t>(base));
  if (pid != static_cast<std::int32_t>(getpid()))
    GDDT_CHECK(mapping_of(pid, buffer_id, base, size, handle, device, &mapped));
  *at = static_cast<char*>(mapped) + offset;
  return GDDT_OK;
}

}  // namespace

Status map_named(const Header& named, int device, char** at) {
  return reach(named.pid, named.buffer_id, named.base, named.size, named.handle, named.offset, device, at);
}

Status flag_of(const Header& header, int device, pack::DeviceFlag* flag) {
  char* at = nullptr;
  GDDT_CHECK(reach(header.pid, header.flag_buffer_id, header.flag_base, header.flag_size, header.flag_handle,
                   static_cast<std::int64_t>(header.flag_offset), device, &at));
  flag->at = reinterpret_cast<std::uint64_t*>(at);
  flag->value = header.flag_value;
  return GDDT_OK;
}

void keep_mappings_for_gathering() {
  if (gathering) return;
  gathering = true;
  Mappings& m = mappings();
  std::lock_guard<std::mutex> lock(m.mutex);
  ++m.gathering_threads;
  m.kept_from = std::min(m.kept_from, m.uses);
}

void end_keeping_mappings() {
  if (!gathering) return;
  gathering = false;
  Mappings& m = mappings();
  std::lock_guard<std::mutex> lock(m.mutex);
  if (--m.gathering_threads == 0) m.kept_from = std::numeric_limits<std::uint64_t>::max();
}

void close_freed_mappings(std::int32_t pid, std::uint64_t base, std::uint64_t size) {
  Mappings& m = mappings();
  std::lock_guard<std::mutex> lock(m.mutex);
  close_freed(m, pid, base, size);
}

void close_mappings() {
  Mappings& m = mappings();
  std::lock_guard<std::mutex> lock(m.mutex);
  for (auto& entry : m.open) gpu::ipc_close(entry.second.device, entry.second.base);
  m.open.clear();
}

Status pack_event_of(const Header& header, int device, gpu::Event* event) {
  if (header.pid == static_cast<std::int32_t>(getpid())) {
    *event = reinterpret_cast<gpu::Event>(static_cast<std::uintptr_t>(header.event_local));
    return GDDT_OK;
  }
  OpenedEvents& opened = opened_events();
  std::lock_guard<std::mutex> lock(opened.mutex);
  const auto key = std::make_tuple(header.pid, header.event_id, device);
  auto found = opened.open.find(key);
  if (found == opened.open.end()) {
    gpu::Event made = nullptr;
    GDDT_CHECK(gpu::ipc_event_open(header.event_handle, device, &made));
    found = opened.open.emplace(key, made).first;
  }
  *event = found->second;
  return GDDT_OK;
}

void close_opened_events() {
  OpenedEvents& opened = opened_events();
  std::lock_guard<std::mutex> lock(opened.mutex);
  for (auto& entry : opened.open) gpu::event_destroy(entry.second);
  opened.open.clear();
}

}  // namespace gddt::protocol::peers
