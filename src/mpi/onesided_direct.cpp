// Windows reached through CUDA IPC (onesided_direct.hpp): settling one at its creation, its
// synchronization by gddt and its end. The data calls are in onesided_direct_ops.cpp.
#include "mpi/onesided_direct.hpp"

#include <sched.h>

#include <atomic>
#include <cstring>

#include "core/config.hpp"
#include "core/log.hpp"
#include "mpi/errors.hpp"
#include "protocol/requests.hpp"

namespace gddt::mpi::onesided {
namespace {

namespace peers = protocol::peers;

// Tags on the window's duplicate communicator, which carries nothing else.
constexpr int kPostTag = 1;
constexpr int kCompleteTag = 2;

}  // namespace

DirectCandidate::DirectCandidate(MPI_Comm comm, void* base, std::int64_t bytes, std::int64_t disp_unit,
                                 const memory::Kind& kind)
    : comm_(comm) {
  key_ = peers::next_window_key(comm);
  if (key_ == 0 || !config::settings().rma_ipc || kind.type != GDDT_MEMORY_DEVICE || bytes <= 0 || base == nullptr)
    return;
  gpu::IpcExport exported;
  if (is_error(gpu::ipc_export(base, &exported))) return;
  peers::WindowMemory memory{};
  std::memcpy(memory.handle, exported.handle, sizeof memory.handle);
  memory.offset = reinterpret_cast<std::uintptr_t>(base) - exported.base;
  memory.bytes = bytes;
  memory.disp_unit = disp_unit;
  base_ = base;
  device_ = kind.device >= 0 ? kind.device : exported.device;
  published_ = peers::publish_window(key_, memory);
}

DirectCandidate::~DirectCandidate() {
  if (published_) peers::withdraw_window(key_);
}

std::unique_ptr<Direct> Direct::settle(DirectCandidate& candidate, MPI_Win win) {
  std::vector<peers::WindowMemory> memory;
  std::vector<peers::WindowLocks> locks;
  if (!candidate.published_ || !peers::shared_window(candidate.comm_, candidate.key_, &memory, &locks)) return nullptr;
  // Every member published, so every member is here: they may now talk on the communicator.
  std::unique_ptr<Direct> direct(new Direct);
  direct->win_ = win;
  direct->key_ = candidate.key_;
  direct->device_ = candidate.device_;
  PMPI_Comm_rank(candidate.comm_, &direct->rank_);
  int mapped = 1;
  {
    gpu::DeviceGuard guard(direct->device_);
    for (std::size_t i = 0; i < memory.size(); ++i) {
      Member member;
      member.bytes = memory[i].bytes;
      member.disp_unit = memory[i].disp_unit;
      member.locks = locks[i];
      if (static_cast<int>(i) == direct->rank_) {
        member.base = static_cast<char*>(candidate.base_);
      } else if (is_error(gpu::ipc_open(memory[i].handle, direct->device_, &member.mapped))) {
        mapped = 0;
      } else {
        member.base = static_cast<char*>(member.mapped) + memory[i].offset;
      }
      direct->members_.push_back(member);
    }
    if (is_error(gpu::library_stream(direct->device_, &direct->stream_))) mapped = 0;
  }
  int everywhere = 0;
  const bool agreed = PMPI_Allreduce(&mapped, &everywhere, 1, MPI_INT, MPI_LAND, candidate.comm_) == MPI_SUCCESS &&
                      everywhere && PMPI_Comm_dup(candidate.comm_, &direct->comm_) == MPI_SUCCESS;
  if (!agreed) {
    GDDT_LOG(kInfo, "a window over device memory is not reached through CUDA IPC: a member could not map another's");
    return nullptr;  // ~Direct closes the mappings; the candidate withdraws its cell
  }
  PMPI_Comm_set_errhandler(direct->comm_, MPI_ERRORS_RETURN);
  candidate.published_ = false;  // the cell is the window's now
  return direct;
}

Direct::~Direct() {
  for (const Member& member : members_)
    if (member.mapped != nullptr) gpu::ipc_close(device_, member.mapped);
  if (comm_ != MPI_COMM_NULL) {
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (!finalized) PMPI_Comm_free(&comm_);
    peers::withdraw_window(key_);
  }
}

int Direct::raise_class(int error_class) {
  PMPI_Win_call_errhandler(win_, error_class);
  return error_class;
}

int Direct::raise_status(Status status) { return raise_on_window(win_, status); }

Status Direct::drain() {
  if (!queued_) return GDDT_OK;
  queued_ = false;
  gpu::DeviceGuard guard(device_);
  return gpu::stream_synchronize(stream_);
}

std::vector<int> Direct::ranks_of(MPI_Group group) {
  MPI_Group all = MPI_GROUP_NULL;
  PMPI_Comm_group(comm_, &all);
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> in_group(static_cast<std::size_t>(size)), ranks(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) in_group[static_cast<std::size_t>(i)] = i;
  PMPI_Group_translate_ranks(group, size, in_group.data(), all, ranks.data());
  PMPI_Group_free(&all);
  return ranks;
}

// Waits in turn with gddt's held work, as every blocking call does.
void Direct::acquire(std::atomic<std::uint32_t>* word, std::uint32_t holder) {
  for (;;) {
    std::uint32_t seen = word->load(std::memory_order_relaxed);
    if (holder == peers::kExclusiveHolder) {
      if (seen == 0 && word->compare_exchange_weak(seen, holder, std::memory_order_acquire)) return;
    } else if ((seen & peers::kExclusiveHolder) == 0 &&
               word->compare_exchange_weak(seen, seen + holder, std::memory_order_acquire)) {
      return;
    }
    protocol::requests::progress_detached();
    sched_yield();
  }
}

int Direct::fence(int) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Status drained = drain();
  if (is_error(drained)) return raise_status(drained);
  return PMPI_Barrier(comm_) == MPI_SUCCESS ? MPI_SUCCESS : raise_class(MPI_ERR_OTHER);
}

int Direct::post(MPI_Group group, int assert) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (int origin : ranks_of(group)) {
    if (origin == MPI_UNDEFINED) return raise_class(MPI_ERR_GROUP);
    MPI_Request request = MPI_REQUEST_NULL;
    if ((assert & MPI_MODE_NOCHECK) == 0) {
      PMPI_Isend(nullptr, 0, MPI_BYTE, origin, kPostTag, comm_, &request);
      exposure_.push_back(request);
    }
    PMPI_Irecv(nullptr, 0, MPI_BYTE, origin, kCompleteTag, comm_, &request);
    exposure_.push_back(request);
  }
  return MPI_SUCCESS;
}

int Direct::start(MPI_Group group, int assert) {
  std::lock_guard<std::mutex> lock(mutex_);
  access_group_ = ranks_of(group);
  for (int target : access_group_) {
    if (target == MPI_UNDEFINED) return raise_class(MPI_ERR_GROUP);
    if ((assert & MPI_MODE_NOCHECK) == 0 &&
        PMPI_Recv(nullptr, 0, MPI_BYTE, target, kPostTag, comm_, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return raise_class(MPI_ERR_OTHER);
  }
  return MPI_SUCCESS;
}

int Direct::complete() {
  std::lock_guard<std::mutex> lock(mutex_);
  const Status drained = drain();
  if (is_error(drained)) return raise_status(drained);
  for (int target : access_group_)
    if (PMPI_Send(nullptr, 0, MPI_BYTE, target, kCompleteTag, comm_) != MPI_SUCCESS) return raise_class(MPI_ERR_OTHER);
  access_group_.clear();
  return MPI_SUCCESS;
}

int Direct::wait() {
  std::lock_guard<std::mutex> lock(mutex_);
  const int rc = PMPI_Waitall(static_cast<int>(exposure_.size()), exposure_.data(), MPI_STATUSES_IGNORE);
  exposure_.clear();
  return rc == MPI_SUCCESS ? MPI_SUCCESS : raise_class(MPI_ERR_OTHER);
}

int Direct::test(int* flag) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (PMPI_Testall(static_cast<int>(exposure_.size()), exposure_.data(), flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    return raise_class(MPI_ERR_OTHER);
  if (*flag) exposure_.clear();
  return MPI_SUCCESS;
}

int Direct::lock(int lock_type, int rank, int assert) {
  if (rank < 0 || rank >= static_cast<int>(members_.size())) return raise_class(MPI_ERR_RANK);
  Member& member = members_[static_cast<std::size_t>(rank)];
  if ((assert & MPI_MODE_NOCHECK) != 0) return MPI_SUCCESS;
  const std::uint32_t holder = lock_type == MPI_LOCK_EXCLUSIVE ? peers::kExclusiveHolder : 1;
  acquire(member.locks.passive, holder);
  member.held = holder;
  return MPI_SUCCESS;
}

int Direct::unlock(int rank) {
  if (rank < 0 || rank >= static_cast<int>(members_.size())) return raise_class(MPI_ERR_RANK);
  Status drained = GDDT_OK;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    drained = drain();
  }
  Member& member = members_[static_cast<std::size_t>(rank)];
  if (member.held != 0) member.locks.passive->fetch_sub(member.held, std::memory_order_release);
  member.held = 0;
  return is_error(drained) ? raise_status(drained) : MPI_SUCCESS;
}

int Direct::lock_all(int assert) {
  if ((assert & MPI_MODE_NOCHECK) != 0) return MPI_SUCCESS;
  for (Member& member : members_) {
    acquire(member.locks.passive, 1);
    member.held = 1;
  }
  return MPI_SUCCESS;
}

int Direct::unlock_all() {
  int rc = MPI_SUCCESS;
  for (int rank = 0; rank < static_cast<int>(members_.size()); ++rank) {
    const int released = unlock(rank);
    if (rc == MPI_SUCCESS) rc = released;
  }
  return rc;
}

int Direct::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  const Status drained = drain();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return is_error(drained) ? raise_status(drained) : MPI_SUCCESS;
}

int Direct::free() {
  Status drained = GDDT_OK;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    drained = drain();
  }
  // No member may still be reading or writing another's memory when its mappings close.
  const int rc = PMPI_Barrier(comm_);
  if (is_error(drained)) return raise_status(drained);
  return rc == MPI_SUCCESS ? MPI_SUCCESS : raise_class(MPI_ERR_OTHER);
}

}  // namespace gddt::mpi::onesided
