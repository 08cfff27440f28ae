// Windows reached through CUDA IPC (onesided_direct.hpp): settling one at its creation, its
// synchronization by gddt and its end. The data calls are in onesided_direct_ops.cpp.
#include "mpi/onesided_direct.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
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

std::unique_ptr<SharedHostMemory> SharedHostMemory::make(MPI_Comm comm, std::int64_t bytes) {
  if (!config::settings().rma_ipc || !peers::agreed(comm) || bytes <= 0) return nullptr;
  static std::atomic<unsigned> made{0};
  std::unique_ptr<SharedHostMemory> memory(new SharedHostMemory);
  std::snprintf(memory->name_, sizeof memory->name_, "/gddt-window-%u-%ld-%u", static_cast<unsigned>(getuid()),
                static_cast<long>(getpid()), made.fetch_add(1));
  const int fd = shm_open(memory->name_, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return nullptr;
  memory->linked_ = true;
  // The umask may have taken bits off; the mode others check is exactly 0600. The pages are taken
  // now: a full /dev/shm fails here, where ordinary memory serves instead, not at a first store.
  const bool sized = fchmod(fd, 0600) == 0 && ftruncate(fd, static_cast<off_t>(bytes)) == 0 &&
                     posix_fallocate(fd, 0, static_cast<off_t>(bytes)) == 0;
  void* base = sized ? mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                     : MAP_FAILED;
  close(fd);
  if (base == MAP_FAILED) return nullptr;
  memory->base_ = base;
  memory->bytes_ = bytes;
  return memory;
}

void* SharedHostMemory::map(const char* name, std::int64_t bytes) {
  const int fd = shm_open(name, O_RDWR, 0);
  if (fd < 0) return nullptr;
  struct stat st {};
  const bool ours = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
                    (st.st_mode & 0777) == 0600 && st.st_size >= bytes;
  void* base = ours ? mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                    : MAP_FAILED;
  close(fd);
  return base == MAP_FAILED ? nullptr : base;
}

void SharedHostMemory::unmap(void* base, std::int64_t bytes) { munmap(base, static_cast<std::size_t>(bytes)); }

void SharedHostMemory::unlink() {
  if (linked_) shm_unlink(name_);
  linked_ = false;
}

SharedHostMemory::~SharedHostMemory() {
  if (base_ != nullptr) unmap(base_, bytes_);
  unlink();
}

DirectCandidate::DirectCandidate(MPI_Comm comm, void* base, std::int64_t bytes, std::int64_t disp_unit,
                                 const memory::Kind& kind, const SharedHostMemory* shared)
    : comm_(comm) {
  window_ = peers::next_window(comm);
  if (window_ == 0 || !config::settings().rma_ipc || bytes <= 0 || base == nullptr) return;
  peers::WindowMemory memory{};
  memory.bytes = bytes;
  memory.disp_unit = disp_unit;
  if (shared != nullptr) {
    memory.place = peers::WindowPlace::kSharedHost;
    std::snprintf(memory.name, sizeof memory.name, "%s", shared->name());
  } else {
    gpu::IpcExport exported;
    if (kind.type != GDDT_MEMORY_DEVICE || is_error(gpu::ipc_export(base, &exported))) return;
    memory.place = peers::WindowPlace::kDevice;
    memory.allocation = exported;
    memory.pid = static_cast<std::int32_t>(getpid());
    memory.offset = reinterpret_cast<std::uintptr_t>(base) - exported.base;
    device_ = kind.device >= 0 ? kind.device : exported.device;
  }
  base_ = base;
  published_ = peers::publish_window(comm, window_, memory, &key_);
}

DirectCandidate::~DirectCandidate() {
  if (published_) peers::withdraw_window(key_);
}

std::unique_ptr<Direct> Direct::settle(DirectCandidate& candidate, MPI_Win win, bool usable) {
  std::vector<peers::WindowMemory> memory;
  std::vector<peers::WindowLocks> locks;
  if (!candidate.published_ || !peers::shared_window(candidate.comm_, candidate.window_, &memory, &locks))
    return nullptr;
  // Every member published, so every member is here: they may now talk on the communicator.
  std::unique_ptr<Direct> direct(new Direct);
  direct->win_ = win;
  direct->key_ = candidate.key_;
  direct->device_ = candidate.device_;
  PMPI_Comm_rank(candidate.comm_, &direct->rank_);
  int mapped = usable ? 1 : 0;
  const peers::WindowPlace place = memory[static_cast<std::size_t>(direct->rank_)].place;
  {
    gpu::DeviceGuard guard(direct->device_);
    for (std::size_t i = 0; i < memory.size(); ++i) {
      Member member;
      member.bytes = memory[i].bytes;
      member.disp_unit = memory[i].disp_unit;
      member.locks = locks[i];
      if (memory[i].place != place) {
        mapped = 0;  // every member's memory must be where this process's moves reach it
      } else if (static_cast<int>(i) == direct->rank_) {
        member.base = static_cast<char*>(candidate.base_);
      } else if (place == peers::WindowPlace::kSharedHost) {
        member.mapped_bytes = static_cast<std::int64_t>(memory[i].offset) + memory[i].bytes;
        member.mapped = SharedHostMemory::map(memory[i].name, member.mapped_bytes);
        if (member.mapped == nullptr) mapped = 0;
        member.base = static_cast<char*>(member.mapped) + memory[i].offset;
      } else {
        const gpu::IpcExport& allocation = memory[i].allocation;
        peers::close_freed_mappings(memory[i].pid, allocation.base, allocation.size);
        if (is_error(gpu::ipc_open(allocation.handle, direct->device_, &member.mapped))) {
          mapped = 0;
        } else {
          member.base = static_cast<char*>(member.mapped) + memory[i].offset;
        }
      }
      direct->members_.push_back(member);
    }
    if (place == peers::WindowPlace::kDevice && is_error(gpu::library_stream(direct->device_, &direct->stream_)))
      mapped = 0;
  }
  // A split, not a duplicate: no attribute of the user's is copied onto gddt's communicator.
  int everywhere = 0;
  const bool agreed = PMPI_Allreduce(&mapped, &everywhere, 1, MPI_INT, MPI_LAND, candidate.comm_) == MPI_SUCCESS &&
                      everywhere &&
                      PMPI_Comm_split(candidate.comm_, 0, direct->rank_, &direct->comm_) == MPI_SUCCESS;
  if (!agreed) {
    GDDT_LOG(kInfo, "a window over device memory is not reached through CUDA IPC: a member could not map another's");
    return nullptr;  // ~Direct closes the mappings; the candidate withdraws its cell
  }
  PMPI_Comm_set_errhandler(direct->comm_, MPI_ERRORS_RETURN);
  candidate.published_ = false;  // the cell is the window's now
  return direct;
}

Direct::~Direct() {
  for (const Member& member : members_) {
    if (member.mapped == nullptr) continue;
    if (device_ >= 0)
      gpu::ipc_close(device_, member.mapped);
    else
      SharedHostMemory::unmap(member.mapped, member.mapped_bytes);
  }
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

// Also what the user queued on the legacy default stream: a cudaMemcpy from pageable memory into
// the window may still be landing when it returns, and other processes read the window next.
Status Direct::drain() {
  if (device_ < 0) return GDDT_OK;
  gpu::DeviceGuard guard(device_);
  bool idle = false;
  GDDT_CHECK(gpu::legacy_stream_idle(&idle));
  if (!idle) GDDT_CHECK(gpu::stream_synchronize(gpu::legacy_stream()));
  if (!queued_) return GDDT_OK;
  queued_ = false;
  return gpu::stream_synchronize(stream_);
}

Status Direct::drain_locked() {
  std::lock_guard<std::mutex> lock(mutex_);
  return drain();
}

void Direct::release(Member& member) {
  if (member.held != 0) member.locks.passive->fetch_sub(member.held, std::memory_order_release);
  member.held = 0;
}

bool Direct::in_passive_epoch(int target) const {
  if (locked_all_) return true;
  if (target == MPI_ANY_SOURCE)
    return std::any_of(members_.begin(), members_.end(), [](const Member& member) { return member.locked; });
  return target >= 0 && target < static_cast<int>(members_.size()) && members_[static_cast<std::size_t>(target)].locked;
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

// Every process waiting for a word of another's must let the library progress too: the holder may
// be blocked on a message of this process's (MPI's progress rule).
void Direct::progress_while_waiting() {
  int flag = 0;
  PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
  protocol::requests::progress_detached();
  sched_yield();
}

void Direct::acquire(std::atomic<std::uint32_t>* word, std::uint32_t holder) {
  for (;;) {
    std::uint32_t seen = word->load(std::memory_order_relaxed);
    if (holder == peers::kExclusiveHolder) {
      if (seen == 0 && word->compare_exchange_weak(seen, holder, std::memory_order_acquire)) return;
    } else if ((seen & peers::kExclusiveHolder) == 0 &&
               word->compare_exchange_weak(seen, seen + holder, std::memory_order_acquire)) {
      return;
    }
    progress_while_waiting();
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
  const std::vector<int> origins = ranks_of(group);
  for (int origin : origins)
    if (origin == MPI_UNDEFINED) return kLibraryJudges;
  if (exposing_) return kLibraryJudges;
  const Status drained = drain();
  if (is_error(drained)) return raise_status(drained);
  for (int origin : origins) {
    MPI_Request request = MPI_REQUEST_NULL;
    if ((assert & MPI_MODE_NOCHECK) == 0) {
      PMPI_Isend(nullptr, 0, MPI_BYTE, origin, kPostTag, comm_, &request);
      exposure_.push_back(request);
    }
    PMPI_Irecv(nullptr, 0, MPI_BYTE, origin, kCompleteTag, comm_, &request);
    exposure_.push_back(request);
  }
  exposing_ = true;
  return MPI_SUCCESS;
}

int Direct::start(MPI_Group group, int assert) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::vector<int> targets = ranks_of(group);
  for (int target : targets)
    if (target == MPI_UNDEFINED) return kLibraryJudges;
  if (accessing_) return kLibraryJudges;
  for (int target : targets) {
    if ((assert & MPI_MODE_NOCHECK) == 0 &&
        PMPI_Recv(nullptr, 0, MPI_BYTE, target, kPostTag, comm_, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return raise_class(MPI_ERR_OTHER);
  }
  access_group_ = targets;
  accessing_ = true;
  return MPI_SUCCESS;
}

int Direct::complete() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!accessing_) return kLibraryJudges;
  const Status drained = drain();
  if (is_error(drained)) return raise_status(drained);
  for (int target : access_group_)
    if (PMPI_Send(nullptr, 0, MPI_BYTE, target, kCompleteTag, comm_) != MPI_SUCCESS) return raise_class(MPI_ERR_OTHER);
  access_group_.clear();
  accessing_ = false;
  return MPI_SUCCESS;
}

int Direct::wait() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!exposing_) return kLibraryJudges;
  const int rc = PMPI_Waitall(static_cast<int>(exposure_.size()), exposure_.data(), MPI_STATUSES_IGNORE);
  exposure_.clear();
  exposing_ = false;
  return rc == MPI_SUCCESS ? MPI_SUCCESS : raise_class(MPI_ERR_OTHER);
}

int Direct::test(int* flag) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!exposing_ || flag == nullptr) return kLibraryJudges;
  if (PMPI_Testall(static_cast<int>(exposure_.size()), exposure_.data(), flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    return raise_class(MPI_ERR_OTHER);
  if (*flag) {
    exposure_.clear();
    exposing_ = false;
  }
  return MPI_SUCCESS;
}

int Direct::lock(int lock_type, int rank, int assert) {
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= static_cast<int>(members_.size()) ||
      (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE))
    return kLibraryJudges;
  Member& member = members_[static_cast<std::size_t>(rank)];
  if (member.locked || locked_all_) return kLibraryJudges;
  member.locked = true;
  if ((assert & MPI_MODE_NOCHECK) != 0) return MPI_SUCCESS;
  const std::uint32_t holder = lock_type == MPI_LOCK_EXCLUSIVE ? peers::kExclusiveHolder : 1;
  acquire(member.locks.passive, holder);
  member.held = holder;
  return MPI_SUCCESS;
}

int Direct::unlock(int rank) {
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= static_cast<int>(members_.size()) || !members_[static_cast<std::size_t>(rank)].locked ||
      locked_all_)
    return kLibraryJudges;
  const Status drained = drain_locked();
  Member& member = members_[static_cast<std::size_t>(rank)];
  release(member);
  member.locked = false;
  return is_error(drained) ? raise_status(drained) : MPI_SUCCESS;
}

int Direct::lock_all(int assert) {
  if (locked_all_) return kLibraryJudges;
  for (const Member& member : members_)
    if (member.locked) return kLibraryJudges;
  locked_all_ = true;
  if ((assert & MPI_MODE_NOCHECK) != 0) return MPI_SUCCESS;
  for (Member& member : members_) {
    acquire(member.locks.passive, 1);
    member.held = 1;
  }
  return MPI_SUCCESS;
}

int Direct::unlock_all() {
  if (!locked_all_) return kLibraryJudges;
  const Status drained = drain_locked();
  for (Member& member : members_) release(member);
  locked_all_ = false;
  return is_error(drained) ? raise_status(drained) : MPI_SUCCESS;
}

int Direct::flush(int target) {
  if (target != MPI_PROC_NULL && !in_passive_epoch(target)) return kLibraryJudges;
  std::lock_guard<std::mutex> lock(mutex_);
  const Status drained = drain();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return is_error(drained) ? raise_status(drained) : MPI_SUCCESS;
}

int Direct::free() {
  const Status drained = drain_locked();
  // No member may still be reading or writing another's memory when its mappings close.
  const int rc = PMPI_Barrier(comm_);
  if (is_error(drained)) return raise_status(drained);
  return rc == MPI_SUCCESS ? MPI_SUCCESS : raise_class(MPI_ERR_OTHER);
}

}  // namespace gddt::mpi::onesided
