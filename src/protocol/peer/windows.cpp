// One-sided windows whose members reach each other's memory through CUDA IPC (peers.hpp): the
// cells of the node table that publish each member's window memory and hold its locks.
#include <cstring>

#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {
namespace {

// A cell is named by its owner's serial for the communicator and the count of windows made on it
// (MPI asks members to make a communicator's windows in one order): unique within the owner's
// entry, and found alike by every member.
constexpr int kWindowCountBits = 24;
constexpr std::uint64_t kClaimed = ~std::uint64_t{0};  // a cell being filled

std::uint64_t key_of(std::uint64_t serial, std::uint64_t window) {
  return (serial << kWindowCountBits) | (window & ((std::uint64_t{1} << kWindowCountBits) - 1));
}

SharedWindowCell* cell_of(int slot, std::uint64_t key) {
  NodeEntry& entry = node().table->entries[slot];
  for (SharedWindowCell& cell : entry.windows)
    if (cell.key.load(std::memory_order_acquire) == key) return &cell;
  return nullptr;
}

}  // namespace

std::uint64_t next_window(MPI_Comm comm) {
  Channel* channel = channel_of(comm);
  if (channel == nullptr || channel->serial_of_rank.empty()) return 0;
  return channel->windows_made.fetch_add(1) + 1;
}

bool publish_window(MPI_Comm comm, std::uint64_t window, const WindowMemory& memory, std::uint64_t* key) {
  Node& n = node();
  Channel* channel = channel_of(comm);
  if (window == 0 || n.table == nullptr || channel == nullptr || channel->serial_of_rank.empty()) return false;
  *key = key_of(channel->serial_of_rank[static_cast<std::size_t>(channel->rank)], window);
  for (SharedWindowCell& cell : n.table->entries[n.slot].windows) {
    std::uint64_t free = 0;
    if (!cell.key.compare_exchange_strong(free, kClaimed, std::memory_order_acquire)) continue;
    cell.memory = memory;
    cell.passive.store(0, std::memory_order_relaxed);
    cell.accumulate.store(0, std::memory_order_relaxed);
    cell.key.store(*key, std::memory_order_release);
    return true;
  }
  return false;
}

bool shared_window(MPI_Comm comm, std::uint64_t window, std::vector<WindowMemory>* memory,
                   std::vector<WindowLocks>* locks) {
  Channel* channel = channel_of(comm);
  if (channel == nullptr || window == 0 || channel->serial_of_rank.size() != channel->slot_of_rank.size()) return false;
  memory->clear();
  locks->clear();
  for (std::size_t rank = 0; rank < channel->slot_of_rank.size(); ++rank) {
    SharedWindowCell* cell = cell_of(channel->slot_of_rank[rank], key_of(channel->serial_of_rank[rank], window));
    if (cell == nullptr) return false;
    memory->push_back(cell->memory);
    locks->push_back(WindowLocks{&cell->passive, &cell->accumulate});
  }
  return true;
}

void withdraw_window(std::uint64_t key) {
  Node& n = node();
  if (key == 0 || n.table == nullptr) return;
  if (SharedWindowCell* cell = cell_of(n.slot, key)) cell->key.store(0, std::memory_order_release);
}

}  // namespace gddt::protocol::peers
