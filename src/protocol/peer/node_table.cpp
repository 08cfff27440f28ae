// The node's table in shared memory (node_table.hpp): this process's view of it and its lent slots
// (the direct plane), and the table's name and the checks before a process trusts it.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/log.hpp"
#include "protocol/peer/node_table.hpp"
#include "protocol/route.hpp"

namespace gddt::protocol::peers {

namespace {

// This process's lent slots (the direct plane) not in use, and the generation each had last.
struct LentSlots {
  LentSlots() {
    for (int i = kLentSlots - 1; i >= 0; --i) idle.push_back(i);
  }
  std::mutex mutex;
  std::vector<int> idle;
  std::uint32_t generation[kLentSlots] = {};
};

LentSlots& lent_slots() {
  static auto* instance = new LentSlots;
  return *instance;
}

// The version of the protocol's messages (the header's layout and what each plane does): processes
// of different versions register in different tables, so that neither reaches the launcher's count
// and both keep the raw format. Raise it with every change to them.
constexpr int kProtocolVersion = 8;

}  // namespace

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Node& node() {
  static Node* instance = new Node;
  return *instance;
}

lending::Slot& lent_state(int owner, int slot) { return node().table->entries[owner].lent[slot]; }

int gpu_index(const NodeEntry& entry, const gpu::DeviceUuid& uuid) {
  for (int i = 0; i < std::min(entry.gpus, kMostGpus); ++i)
    if (entry.uuids[i] == uuid) return i;
  return -1;
}

int receiving_gpu_index(const NodeEntry& entry) {
  const int index = entry.receiving_gpu_plus_one.load(std::memory_order_relaxed) - 1;
  return index < std::min(entry.gpus, kMostGpus) ? index : -1;
}

bool take_lent_slot(int* slot, std::uint32_t* generation) {
  LentSlots& slots = lent_slots();
  std::lock_guard<std::mutex> lock(slots.mutex);
  if (slots.idle.empty()) return false;
  *slot = slots.idle.back();
  slots.idle.pop_back();
  *generation = ++slots.generation[*slot] & (lending::kGenerations - 1);
  lending::post(lent_state(node().slot, *slot), *generation);
  return true;
}

void give_lent_slot(int slot) {
  LentSlots& slots = lent_slots();
  std::lock_guard<std::mutex> lock(slots.mutex);
  slots.idle.push_back(slot);
}

std::int64_t own_staged_part() {
  return static_cast<std::int64_t>(std::min<std::uint64_t>(config::staging_chunk(), INT_MAX));
}

std::string node_table_name() {
  const pid_t parent = getppid();
  std::ifstream stat("/proc/" + std::to_string(parent) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  std::string started = "0";
  const std::size_t close = text.rfind(')');
  if (close != std::string::npos) {
    // Fields after the command name: state is field 3, the start time field 22.
    std::size_t position = close + 2;
    for (int field = 3; field < 22 && position != std::string::npos; ++field) position = text.find(' ', position) + 1;
    if (position != std::string::npos) started = text.substr(position, text.find(' ', position) - position);
  }
  return "/gddt-peers-v" + std::to_string(kProtocolVersion) + "-" + std::to_string(getuid()) + "-" +
         std::to_string(parent) + "-" + started;
}

int open_node_table(const std::string& name) {
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd >= 0 && fchmod(fd, 0600) == 0) return fd;
  if (fd >= 0 || errno != EEXIST) {
    GDDT_LOG(kInfo, "peer protocol off: the node table %s cannot be made (%s)", name.c_str(), std::strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  fd = shm_open(name.c_str(), O_RDWR, 0);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) {
    GDDT_LOG(kWarn, "peer protocol off: the node table %s exists and cannot be opened (%s)", name.c_str(),
             std::strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 07777) == 0600 &&
      (st.st_size == 0 || st.st_size == static_cast<off_t>(sizeof(NodeTable))))
    return fd;
  GDDT_LOG(kWarn, "peer protocol off: the node table %s is not this user's own (owner %d, mode %04o, %lld bytes)",
           name.c_str(), static_cast<int>(st.st_uid), static_cast<unsigned>(st.st_mode & 07777),
           static_cast<long long>(st.st_size));
  close(fd);
  return -1;
}

bool protocol_wanted() {
  return config::peers() == config::Peers::kAuto && !config::settings().disable && exchange_statuses_complete() &&
         (gpu::available() || host_through_gddt());
}

}  // namespace gddt::protocol::peers
