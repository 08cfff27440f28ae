// The node's table in shared memory (node_table.cpp): one entry per process of the job on this
// node, holding what the peer protocol's processes read of each other (GPUs, lent slots, requests
// to write, shared one-sided windows, landings of the eager path), and the functions that open it and take its slots.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "core/gpu.hpp"
#include "protocol/peer/lending.hpp"
#include "protocol/peer/peers.hpp"

namespace gddt::protocol::peers {

constexpr int kMostLocal = 512;
constexpr int kMostGpus = 8;

enum Seal : int { kUnsealed = 0, kAllGddt = 1, kRaw = 2 };

// The lent slots of a process (the direct plane): one word each in its node entry, moved on by the
// sender and its receiver as lending.hpp says.
constexpr int kLentSlots = 128;

// A receiver's request that a sender write into its buffer: the receive's Header (its buffer named
// as a CUDA IPC export, its count and the packed bytes to move) with its layout after it, in a cell
// of the receiver's node entry. Layouts larger than a cell are read instead.
constexpr int kWriteCells = 4;
constexpr std::size_t kWriteCellBytes = 2560;
struct WriteCell {
  std::atomic<int> taken;
  lending::AnswerCell answer;
  std::uint32_t bytes;
  char request[kWriteCellBytes];
};

std::int64_t steady_ns();

// A one-sided window this process shares with the other members (windows.cpp): its memory as
// CUDA IPC exports it and the words origins take its locks by. `key` is written last (0: free).
constexpr int kSharedWindows = 32;
struct SharedWindowCell {
  std::atomic<std::uint64_t> key;
  WindowMemory memory;
  std::atomic<std::uint32_t> passive;     // lock/unlock: kExclusiveHolder, else shared holders
  std::atomic<std::uint32_t> accumulate;  // 1 while an origin applies an accumulating call
};

// A process's landing on one of its GPUs (landing.cpp): the allocation as CUDA IPC exports it and
// the process's id (a sender closes its mappings of that process's freed allocations at the same
// addresses first), written before `ready` turns 1 (0 again at MPI_Finalize).
struct LandingCell {
  std::atomic<int> ready;
  std::int32_t pid;
  gpu::IpcExport exported;
};

struct NodeEntry {
  std::atomic<int> world_rank_plus_one;  // 0 until the process has passed MPI_Init
  int gpus;
  gpu::DeviceUuid uuids[kMostGpus];  // the GPUs the process sees, written before its world rank
  std::int64_t staged_part;          // its chunk size for the staged plane, written likewise
  // Where its device receives land: 1 + the index in `uuids` of the GPU of its latest one, 0 before
  // the first. Senders read it to tell whether CUDA IPC would cross between two GPUs.
  std::atomic<int> receiving_gpu_plus_one;
  // Its threads now in a blocking receive that probes before it receives (probes_for_marker): a
  // marker reaches them in host memory, so that a sender through a CUDA-aware library may take
  // CUDA IPC for a message of GDDT_PEER_IPC_MIN to 1 MiB.
  std::atomic<int> probing_receives;
  // 1 while its latest device receive of that size was such a blocking receive, 0 after any other
  // (nonblocking, persistent, MPI_Sendrecv, MPI_Mrecv): a sender that runs ahead of a process
  // receiving one message at a time (a flood of blocking sends, issue 44.5) takes CUDA IPC too, its
  // marker probed for when that receive comes.
  std::atomic<int> latest_receive_probed;
  // The direct plane: the state of each send that lends its buffer, by slot (lending.hpp), and when
  // the process as a receiver last resolved a marker of the direct plane (steady clock, ns).
  lending::Slot lent[kLentSlots];
  std::atomic<std::int64_t> resolved_direct_ns;
  // The cell (receiver's node slot * kWriteCells + cell) asking the sender of each lent slot to
  // write, set before the slot turns asked.
  std::atomic<std::int32_t> asked_by[kLentSlots];
  WriteCell write_cells[kWriteCells];
  SharedWindowCell windows[kSharedWindows];
  LandingCell landings[kMostGpus];  // by the GPU's index in `uuids`
};

struct NodeTable {
  std::atomic<int> seal;
  std::atomic<int> registered;
  std::atomic<int> departed;
  NodeEntry entries[kMostLocal];
};

struct Node {
  NodeTable* table = nullptr;
  std::string name;
  int slot = -1;
  int local_size = 0;
  bool all_gddt = false;
  std::unordered_map<int, int> slot_of_world_rank;  // the node's processes
};

Node& node();
lending::Slot& lent_state(int owner, int slot);

// The index in `entry.uuids` of GPU `uuid`, else -1.
int gpu_index(const NodeEntry& entry, const gpu::DeviceUuid& uuid);
// The index in `entry.uuids` of the GPU of the process's latest device receive, else -1 (before
// its first).
int receiving_gpu_index(const NodeEntry& entry);

// Takes an idle slot and posts it at its next generation; false when every slot is lent.
bool take_lent_slot(int* slot, std::uint32_t* generation);
void give_lent_slot(int slot);

// This process's part size for the staged plane: its staging chunk, within what one MPI message
// counts in an int.
std::int64_t own_staged_part();

// The job's processes of a node share their parent (the launcher's daemon on the node); its start
// time tells apart daemons whose process ids were reused.
std::string node_table_name();

// Opens this job's node table, `name`: made here (mode 0600 whatever the umask) where no process of
// the job made it yet, else the one another made, trusted only if it is this user's own: a regular
// shared memory object of this user, of mode 0600, empty or of the table's size. Its name can be
// guessed, and another user who made it first could feed the job CUDA IPC handles and markers.
// -1 where it is not trusted or cannot be had; the peer protocol then stays off for the node (no
// process of the job registers in a table it refuses, so none finds every process registered).
int open_node_table(const std::string& name);

// A receive can tell a marker only by its status: where MPI_Isendrecv's status is empty (MPICH 4.0),
// a marker it received could not be told from data, so the node stays on the raw format.
bool protocol_wanted();

}  // namespace gddt::protocol::peers
