// Setting up and tearing down (peers.hpp): registering on the node and sealing it, agreeing on
// communicators as they are made and dropping them as they are freed, MPI_Finalize, progress.
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <shared_mutex>

#include "core/log.hpp"
#include "protocol/peer/internal.hpp"
#include "protocol/peer/node_identity.hpp"

namespace gddt::protocol::peers {

void before_init() {
  if (!protocol_wanted()) return;
  Node& n = node();
  const node_identity::Identity identity = node_identity::identity();
  n.local_size = identity.local_size;
  if (n.local_size <= 0 || n.local_size > kMostLocal) return;
  n.name = node_table_name() + identity.table_suffix;
  const int fd = open_node_table(n.name);
  if (fd < 0) return;
  struct stat st {};
  if (fstat(fd, &st) == 0 && st.st_size < static_cast<off_t>(sizeof(NodeTable))) {
    if (ftruncate(fd, sizeof(NodeTable)) != 0) {
      close(fd);
      return;
    }
  }
  void* mapped = mmap(nullptr, sizeof(NodeTable), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED) return;
  n.table = static_cast<NodeTable*>(mapped);
  n.slot = n.table->registered.fetch_add(1);
  if (n.slot >= kMostLocal) n.slot = -1;
}

void after_init() {
  Node& n = node();
  if (n.table == nullptr || n.slot < 0) return;
  NodeEntry& mine = n.table->entries[n.slot];
  mine.gpus = 0;
  for (int device = 0; gpu::available() && device < std::min(gpu::device_count(), kMostGpus); ++device)
    if (gpu::device_uuid(device, &mine.uuids[mine.gpus]) == GDDT_OK) ++mine.gpus;
  mine.staged_part = own_staged_part();
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  mine.world_rank_plus_one.store(world_rank + 1, std::memory_order_release);
  // MPI_Init returned, so every process of the job entered it, each registered before: a count
  // short of the launcher's is a process without gddt (or with the protocol off).
  int expected = kUnsealed;
  const int verdict = n.table->registered.load() == n.local_size ? kAllGddt : kRaw;
  n.table->seal.compare_exchange_strong(expected, verdict);
  n.all_gddt = n.table->seal.load() == kAllGddt;
  if (!n.all_gddt) {
    GDDT_LOG(kInfo, "peer protocol off: not every process of this node runs gddt with GDDT_PEERS=auto");
    return;
  }
  for (int slot = 0; slot < n.local_size; ++slot) {
    int rank_plus_one = 0;
    while ((rank_plus_one = n.table->entries[slot].world_rank_plus_one.load(std::memory_order_acquire)) == 0)
      sched_yield();
    n.slot_of_world_rank[rank_plus_one - 1] = slot;
  }
  agree(MPI_COMM_WORLD);
}

void on_comm_created(MPI_Comm comm) { agree(comm); }

void on_comm_freed(MPI_Comm comm) {
  if (!active() || comm == MPI_COMM_NULL) return;
  send_held_releases(true);  // some may go on this communicator's twin
  std::shared_ptr<Channel> channel;  // freed here unless a pending operation keeps it
  Channels& all = channels();
  std::unique_lock<std::shared_mutex> lock(all.mutex);
  auto found = all.of_comm.find(key_of(comm));
  if (found == all.of_comm.end()) return;
  channel = std::move(found->second);
  all.of_comm.erase(found);
}

void finalize() {
  send_held_releases(true);
  abandon_lingering();
  {
    Channels& all = channels();
    std::unique_lock<std::shared_mutex> lock(all.mutex);
    all.of_comm.clear();
    detail::active.store(false, std::memory_order_relaxed);
  }
  close_mappings();
  remote_layouts().by_bytes.clear();
  close_opened_events();
  destroy_pack_events();
  free_flags();
  free_landings();
  part_events().destroy_idle();
  Node& n = node();
  if (n.table == nullptr) return;
  if (n.table->departed.fetch_add(1) + 1 == n.table->registered.load()) shm_unlink(n.name.c_str());
  munmap(n.table, sizeof(NodeTable));
  n.table = nullptr;
}

bool node_agreed() { return node().all_gddt; }

void progress() {
  send_held_releases(false);
  complete_lingering();
}

}  // namespace gddt::protocol::peers
