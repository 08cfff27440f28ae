// One-sided windows whose members reach each other's memory through CUDA IPC (peers.hpp): the
// cells of the node table that publish each member's window memory and hold its locks.
#include <cstring>

#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {
namespace {

// Windows of one communicator are made in the same order by all its members (MPI asks that of
// collective calls), so the communicator's id and that count name a window alike everywhere.
constexpr int kWindowCountBits = 24;

SharedWindowCell* cell_of(int slot, std::uint64_t key) {
  NodeEntry& entry = node().table->entries[slot];
  for (SharedWindowCell& cell : entry.windows)
    if (cell.key.load(std::memory_order_acquire) == key) return &cell;
  return nullptr;
}

}  // namespace

std::uint64_t next_window_key(MPI_Comm comm) {
  Channel* channel = channel_of(comm);
  if (channel == nullptr) return 0;
  const std::uint64_t made = channel->windows_made.fetch_add(1) + 1;
  return (channel->id << kWindowCountBits) | (made & ((1u << kWindowCountBits) - 1));
}

bool publish_window(std::uint64_t key, const WindowMemory& memory) {
  Node& n = node();
  if (key == 0 || n.table == nullptr) return false;
  for (SharedWindowCell& cell : n.table->entries[n.slot].windows) {
    if (cell.key.load(std::memory_order_relaxed) != 0) continue;
    cell.memory = memory;
    cell.passive.store(0, std::memory_order_relaxed);
    cell.accumulate.store(0, std::memory_order_relaxed);
    cell.key.store(key, std::memory_order_release);
    return true;
  }
  return false;
}

bool shared_window(MPI_Comm comm, std::uint64_t key, std::vector<WindowMemory>* memory,
                   std::vector<WindowLocks>* locks) {
  Channel* channel = channel_of(comm);
  if (channel == nullptr || key == 0) return false;
  memory->clear();
  locks->clear();
  for (int slot : channel->slot_of_rank) {
    SharedWindowCell* cell = cell_of(slot, key);
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
