// Landings (internal.hpp): device memory a receiver owns on a GPU, CUDA IPC exported and
// published in its node entry, with a slot and a word for each sender of the node. A sender of the
// eager path whose receiver has one on the GPU of its latest device receive maps it once, and its
// resident kernel packs straight into its slot there and sets its word across the link; the
// receiver's resident kernel then waits for a word in its own memory and unpacks its own bytes.
// Against the sender's scratch read across the link, no polling and no reads cross NVLink, and the
// sender takes no scratch: a 4 KiB message 12.4-13.6 against 14.4-15.8 us one way between two
// H200s (performance.md §4).
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include "core/config.hpp"
#include "core/log.hpp"
#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

namespace {

// The words come first, one per node slot, then the slots of senders 0, 1, ... The allocation
// is whole 2 MiB blocks: CUDA carves smaller ones out of shared blocks, and a process maps a
// block once.
constexpr std::int64_t kWordsBytes = std::int64_t{kMostLocal} * 8;
constexpr std::int64_t kBlockBytes = std::int64_t{2} << 20;

std::int64_t landing_bytes() {
  const std::int64_t used = kWordsBytes + std::int64_t{node().local_size} * kLandingSlotBytes;
  return (used + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
}

std::int64_t slot_offset(int sender) { return kWordsBytes + std::int64_t{sender} * kLandingSlotBytes; }

// This process's landings, by the GPU's index in its node entry, and that GPU's number here.
struct Own {
  std::mutex mutex;
  char* base[kMostGpus] = {};
  int device[kMostGpus] = {};
  bool broken[kMostGpus] = {};
};

Own& own() {
  static Own* instance = new Own;
  return *instance;
}

// The index of GPU `device` in this process's node entry (its landing cell), else -1.
int own_index(int device) {
  gpu::DeviceUuid uuid;
  if (gpu::device_uuid(device, &uuid) != GDDT_OK) return -1;
  return gpu_index(node().table->entries[node().slot], uuid);
}

Status make_landing(int device, int index, char** base) {
  const auto bytes = static_cast<std::size_t>(landing_bytes());
  void* memory = nullptr;
  GDDT_CHECK(gpu::device_alloc(device, bytes, &memory));
  const std::vector<char> zeros(static_cast<std::size_t>(kWordsBytes), 0);
  gpu::DeviceGuard guard(device);
  gpu::Stream stream = nullptr;
  gpu::IpcExport exported;
  Status status = gpu::library_stream(device, &stream);
  if (!is_error(status)) status = gpu::memcpy_async(memory, zeros.data(), zeros.size(), stream);
  if (!is_error(status)) status = gpu::stream_synchronize(stream);
  if (!is_error(status)) status = export_of(memory, &exported);
  if (is_error(status)) {
    gpu::device_free(device, memory);
    return status;
  }
  LandingCell& cell = node().table->entries[node().slot].landings[index];
  cell.pid = static_cast<std::int32_t>(getpid());
  cell.exported = exported;
  cell.ready.store(1, std::memory_order_release);
  *base = static_cast<char*>(memory);
  return GDDT_OK;
}

// A sender's mappings of its receivers' landings, by (receiver, index of the receiver's GPU, the
// sender's GPU that writes), those it cannot have (that GPU does not reach the landing's, or the
// driver refused the mapping: not asked again, each refusal is logged), and the value it set last
// in each receiver's word for it. Kept open to MPI_Finalize: a landing lives as long as its process.
struct Mapped {
  std::mutex mutex;
  std::map<std::tuple<int, int, int>, char*> base;
  std::set<std::tuple<int, int, int>> refused;
  std::map<std::pair<int, int>, std::uint64_t> last_value;
};

Mapped& mapped() {
  static Mapped* instance = new Mapped;
  return *instance;
}

}  // namespace

void prepare_landing(int device) {
  if (!config::settings().peer_landing || !node().all_gddt || device < 0) return;
  const int index = own_index(device);
  if (index < 0) return;
  Own& o = own();
  std::lock_guard<std::mutex> lock(o.mutex);
  if (o.base[index] != nullptr || o.broken[index]) return;
  o.device[index] = device;
  if (is_error(make_landing(device, index, &o.base[index]))) {
    o.broken[index] = true;
    GDDT_LOG(kInfo, "GPU %d has no landing for the eager path: its senders' GPUs keep the bytes", device);
  }
}

Status reach_landing(const Header& header, std::int64_t bytes, int* device, char** packed, pack::DeviceFlag* flag) {
  const int index = header.landing_gpu;
  if (index < 0 || index >= kMostGpus) return GDDT_ERR_INTERNAL;
  char* base = nullptr;
  {
    Own& o = own();
    std::lock_guard<std::mutex> lock(o.mutex);
    base = o.base[index];
    *device = o.device[index];
  }
  const std::int64_t size = landing_bytes();
  const bool inside = header.offset >= kWordsBytes && bytes <= kLandingSlotBytes && header.offset + bytes <= size &&
                      header.flag_offset % 8 == 0 && header.flag_offset + 8 <= static_cast<std::uint64_t>(kWordsBytes);
  if (base == nullptr || !inside) return GDDT_ERR_INTERNAL;
  *packed = base + header.offset;
  flag->at = reinterpret_cast<std::uint64_t*>(base + header.flag_offset);
  flag->value = header.flag_value;
  return GDDT_OK;
}

bool landing_of(int receiver, int device, std::int64_t bytes, Landing* landing) {
  const Node& n = node();
  if (!config::settings().peer_landing || bytes > kLandingSlotBytes || receiver == n.slot || receiver < 0 ||
      receiver >= n.local_size || n.slot < 0 || n.slot >= n.local_size)
    return false;
  NodeEntry& entry = n.table->entries[receiver];
  const int index = receiving_gpu_index(entry);
  if (index < 0) return false;
  LandingCell& cell = entry.landings[index];
  if (cell.ready.load(std::memory_order_acquire) == 0) return false;
  const auto key = std::make_tuple(receiver, index, device);
  Mapped& m = mapped();
  std::lock_guard<std::mutex> lock(m.mutex);
  if (m.refused.count(key) != 0) return false;
  char*& base = m.base[key];
  if (base == nullptr) {
    const int their_gpu = gpu::device_of(entry.uuids[index]);
    const bool reaches = their_gpu >= 0 && (their_gpu == device || gpu::can_access_peer(device, their_gpu));
    // A mapping of a freed allocation of that process at these addresses would make the driver
    // refuse this one ("already mapped").
    if (reaches) close_freed_mappings(cell.pid, cell.exported.base, cell.exported.size);
    void* opened = nullptr;
    if (!reaches || is_error(gpu::ipc_open(cell.exported.handle, device, &opened))) {
      m.base.erase(key);
      m.refused.insert(key);
      return false;
    }
    base = static_cast<char*>(opened);
  }
  landing->gpu_index = index;
  landing->offset = slot_offset(n.slot);
  landing->flag_offset = static_cast<std::uint64_t>(n.slot) * 8;
  landing->packed = base + landing->offset;
  landing->flag.at = reinterpret_cast<std::uint64_t*>(base + landing->flag_offset);
  landing->flag.value = ++m.last_value[{receiver, index}];
  return true;
}

void free_landings() {
  {
    Mapped& m = mapped();
    std::lock_guard<std::mutex> lock(m.mutex);
    for (const auto& open : m.base)
      if (open.second != nullptr) gpu::ipc_close(std::get<2>(open.first), open.second);
    m.base.clear();
    m.refused.clear();
  }
  Own& o = own();
  std::lock_guard<std::mutex> lock(o.mutex);
  for (int index = 0; index < kMostGpus; ++index) {
    if (o.base[index] == nullptr) continue;
    node().table->entries[node().slot].landings[index].ready.store(0, std::memory_order_release);
    if (!gpu::objects_abandoned()) gpu::device_free(o.device[index], o.base[index]);
    o.base[index] = nullptr;
  }
}

}  // namespace gddt::protocol::peers
