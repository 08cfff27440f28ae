// The eager path's flags (declared in internal.hpp): words of device memory, one lent to each
// transfer whose pack the sender posted to its running resident kernel. The pack sets the word
// once its bytes are in the sender's scratch, and the receiver's resident kernel, reading the word
// through CUDA IPC, unpacks only then: a small message crosses with no launch, no event and no
// host waiting in between. Each word only grows (its lease's generation), so a value left by an
// earlier transfer never passes for a later one.
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

namespace {

// An allocation of its own, so that the receiver maps it whole: CUDA carves smaller allocations
// out of shared 2 MiB blocks, and a process maps a block once (transports.cpp).
constexpr std::size_t kFlagAllocationBytes = std::size_t{2} << 20;
// Transfers of one GPU that hold a flag at once; beyond, sends pack the ordinary way.
constexpr int kFlagsPerDevice = 4096;

struct DeviceFlags {
  std::uint64_t* words = nullptr;
  gpu::IpcExport exported;
  bool broken = false;  // the words could not be had or exported: no flags on this GPU
  std::vector<int> idle;
  std::vector<std::uint64_t> generation;
};

struct Flags {
  std::mutex mutex;
  DeviceFlags of_device[kMostGpus];
};

Flags& flags() {
  static Flags* instance = new Flags;
  return *instance;
}

Status open_words(int device, DeviceFlags& d) {
  void* words = nullptr;
  GDDT_CHECK(gpu::device_alloc(device, kFlagAllocationBytes, &words));
  const std::vector<std::uint64_t> zeros(kFlagsPerDevice, 0);
  gpu::DeviceGuard guard(device);
  gpu::Stream stream = nullptr;
  Status status = gpu::library_stream(device, &stream);
  if (!is_error(status)) status = gpu::memcpy_async(words, zeros.data(), zeros.size() * sizeof zeros[0], stream);
  if (!is_error(status)) status = gpu::stream_synchronize(stream);
  if (!is_error(status)) status = export_of(words, &d.exported);
  if (is_error(status)) {
    gpu::device_free(device, words);
    return status;
  }
  d.words = static_cast<std::uint64_t*>(words);
  d.generation.assign(kFlagsPerDevice, 0);
  for (int slot = kFlagsPerDevice - 1; slot >= 0; --slot) d.idle.push_back(slot);
  return GDDT_OK;
}

}  // namespace

bool take_flag(int device, FlagLease* lease) {
  if (device < 0 || device >= kMostGpus) return false;
  Flags& f = flags();
  std::lock_guard<std::mutex> lock(f.mutex);
  DeviceFlags& d = f.of_device[device];
  if (d.broken) return false;
  if (d.words == nullptr && is_error(open_words(device, d))) {
    d.broken = true;
    return false;
  }
  if (d.idle.empty()) return false;
  const int slot = d.idle.back();
  d.idle.pop_back();
  lease->device = device;
  lease->slot = slot;
  lease->flag = pack::DeviceFlag{d.words + slot, ++d.generation[static_cast<std::size_t>(slot)]};
  return true;
}

void give_back(const FlagLease& lease) {
  if (lease.slot < 0) return;
  Flags& f = flags();
  std::lock_guard<std::mutex> lock(f.mutex);
  DeviceFlags& d = f.of_device[lease.device];
  if (d.words != nullptr) d.idle.push_back(lease.slot);
}

void name_flag(const FlagLease& lease, Header* header) {
  const DeviceFlags& d = flags().of_device[lease.device];  // set before the lease was taken
  header->flag_buffer_id = d.exported.buffer_id;
  header->flag_base = d.exported.base;
  header->flag_size = d.exported.size;
  header->flag_offset = reinterpret_cast<std::uintptr_t>(lease.flag.at) - d.exported.base;
  std::memcpy(header->flag_handle, d.exported.handle, sizeof header->flag_handle);
  header->flag_value = lease.flag.value;
}

void free_flags() {
  Flags& f = flags();
  std::lock_guard<std::mutex> lock(f.mutex);
  for (int device = 0; device < kMostGpus; ++device) {
    DeviceFlags& d = f.of_device[device];
    if (d.words != nullptr && !gpu::objects_abandoned()) gpu::device_free(device, d.words);
    d = DeviceFlags{};
  }
}

}  // namespace gddt::protocol::peers
