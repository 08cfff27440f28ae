// Agreed communicators and their private twins (internal.hpp): which communicators the peer
// protocol may take, and the channel of each.
#include <atomic>
#include <cstring>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "core/counters.hpp"
#include "protocol/peer/internal.hpp"

namespace gddt::protocol::peers {

std::atomic<bool> detail::active{false};

Channels& channels() {
  static Channels* instance = new Channels;
  return *instance;
}

std::uint64_t key_of(MPI_Comm comm) {
  std::uint64_t key = 0;
  std::memcpy(&key, &comm, sizeof comm);
  return key;
}

Channel* channel_of(MPI_Comm comm) {
  if (!active() || comm == MPI_COMM_NULL) return nullptr;
  Channels& all = channels();
  std::shared_lock<std::shared_mutex> lock(all.mutex);
  auto found = all.of_comm.find(key_of(comm));
  return found == all.of_comm.end() ? nullptr : found->second.get();
}

void agree(MPI_Comm comm) {
  Node& n = node();
  if (!n.all_gddt || comm == MPI_COMM_NULL) return;
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return;
  int size = 0;
  PMPI_Comm_size(comm, &size);
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> ranks(static_cast<std::size_t>(size)), world_ranks(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) ranks[static_cast<std::size_t>(i)] = i;
  const int translated = PMPI_Group_translate_ranks(group, size, ranks.data(), world, world_ranks.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  if (translated != MPI_SUCCESS) return;
  auto channel = std::make_shared<Channel>();
  for (int world_rank : world_ranks) {
    auto found = n.slot_of_world_rank.find(world_rank);
    if (found == n.slot_of_world_rank.end()) return;  // a process beyond this node
    channel->slot_of_rank.push_back(found->second);
  }
  PMPI_Comm_rank(comm, &channel->rank);
  if (PMPI_Comm_dup(comm, &channel->headers) != MPI_SUCCESS) return;
  if (PMPI_Comm_dup(comm, &channel->data) != MPI_SUCCESS) {
    PMPI_Comm_free(&channel->headers);
    return;
  }
  PMPI_Comm_set_errhandler(channel->headers, MPI_ERRORS_RETURN);
  PMPI_Comm_set_errhandler(channel->data, MPI_ERRORS_RETURN);
  // Each member's own serial for the communicator, never reused within that process, so the cells
  // a member publishes under it are told apart from its other communicators' (windows.cpp).
  static std::atomic<std::uint64_t> next_serial{1};
  const std::uint64_t serial = next_serial.fetch_add(1);
  channel->serial_of_rank.resize(channel->slot_of_rank.size());
  if (PMPI_Allgather(&serial, 1, MPI_UINT64_T, channel->serial_of_rank.data(), 1, MPI_UINT64_T, channel->headers) !=
      MPI_SUCCESS)
    channel->serial_of_rank.clear();
  Channels& all = channels();
  std::unique_lock<std::shared_mutex> lock(all.mutex);
  all.of_comm[key_of(comm)] = std::move(channel);
  detail::active.store(true, std::memory_order_relaxed);
  counters::add(counters::Counter::kPeerAgreedComms, 1);
}

bool agreed(MPI_Comm comm) { return channel_of(comm) != nullptr; }

std::shared_ptr<Channel> channel_kept(MPI_Comm comm) {
  Channel* channel = channel_of(comm);
  return channel == nullptr ? nullptr : channel->shared_from_this();
}

std::shared_ptr<Channel> watching(MPI_Comm comm, std::int64_t capacity) {
  return active() && capacity >= kMarkerBytes ? channel_kept(comm) : nullptr;
}

}  // namespace gddt::protocol::peers
