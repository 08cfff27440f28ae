// Windows reached through CUDA IPC (GDDT_RMA_IPC): where every member of a window's communicator
// is a gddt process of this node whose window memory (MPI_Win_create, or MPI_Win_allocate with the
// device info key) is device memory, each process maps every member's memory and moves the data
// of its one-sided calls itself, from the origin's layout to the target's in one kernel where it
// can. The window is then unified: every call reads and writes the members' own memory, and the
// library's window (over public copies, made before the members knew) carries no data.
// - Put, Get (and MPI_R*): queued on this process's GPU stream, complete at the synchronization
//   that completes them (a request-based call's request is complete when it returns).
// - Accumulating calls: under the target's accumulate lock (a word in its node entry), the target
//   bytes come to host memory, the library applies the operation there (MPI_Reduce_local on the
//   basic datatype; MPI_REPLACE and MPI_NO_OP by gddt) and they go back: the library's arithmetic,
//   atomic per element with respect to every other accumulating call, as MPI asks.
// - Synchronization by gddt alone, on a duplicate of the window's communicator: fence is a barrier
//   after this process's queued work completed; post/start/complete/wait are zero-byte messages;
//   lock/unlock take a reader-writer word in the target's node entry; flush completes the queue.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/gpu.hpp"
#include "core/memory.hpp"
#include "core/status.hpp"
#include "protocol/message.hpp"
#include "protocol/peer/peers.hpp"

namespace gddt::mpi::onesided {

// Host memory of MPI_Win_allocate (GDDT_RMA_HOST=gddt) that the other processes of the node can
// map: a POSIX shared memory object of this user, mode 0600, unlinked when this goes.
class SharedHostMemory {
 public:
  // Null where the window could not be shared (GDDT_RMA_IPC off, `comm` not agreed) or no object
  // could be made: the caller allocates ordinary memory then.
  static std::unique_ptr<SharedHostMemory> make(MPI_Comm comm, std::int64_t bytes);
  // Maps another process's object; null unless it is this user's own, of mode 0600 and at least
  // `bytes` long (its name can be guessed, so another user could have made it).
  static void* map(const char* name, std::int64_t bytes);
  static void unmap(void* base, std::int64_t bytes);
  ~SharedHostMemory();
  SharedHostMemory(const SharedHostMemory&) = delete;
  SharedHostMemory& operator=(const SharedHostMemory&) = delete;
  void* data() const { return base_; }
  const char* name() const { return name_; }
  // Once every member mapped it, or none will: the name goes, the memory stays.
  void unlink();

 private:
  SharedHostMemory() = default;
  void* base_ = nullptr;
  std::int64_t bytes_ = 0;
  bool linked_ = false;
  char name_[protocol::peers::kWindowNameBytes] = {};
};

// What a window's creation asks before the library's call and settles after it.
class DirectCandidate {
 public:
  // Publishes `base` (of `kind`; `shared` where it is host memory other processes can map) where
  // GDDT_RMA_IPC is on and `comm` is agreed; counts the window on `comm` in every case, as every
  // member does.
  DirectCandidate(MPI_Comm comm, void* base, std::int64_t bytes, std::int64_t disp_unit, const memory::Kind& kind,
                  const SharedHostMemory* shared = nullptr);
  ~DirectCandidate();
  DirectCandidate(const DirectCandidate&) = delete;
  DirectCandidate& operator=(const DirectCandidate&) = delete;
  bool published() const { return published_; }

 private:
  friend class Direct;
  MPI_Comm comm_;
  std::uint64_t window_ = 0;  // the count of windows made on comm_ (peers::next_window)
  std::uint64_t key_ = 0;     // of this process's cell
  bool published_ = false;
  void* base_ = nullptr;
  int device_ = -1;  // -1: host memory shared by name
};

class Direct {
 public:
  // After the library made the window `win`: the direct window where every member published,
  // else null (alike on every member). The candidate's cell then stays until free(). A member
  // that published but cannot go on (`usable` false) still takes part, so that none waits.
  static std::unique_ptr<Direct> settle(DirectCandidate& candidate, MPI_Win win, bool usable = true);
  // What a call returns where it is erroneous: the caller hands it to the library, on the
  // library's window, which no call of this window reaches otherwise, for the library's own error
  // class (an epoch the window is not in, a negative count, an operation MPI does not define).
  static constexpr int kLibraryJudges = -1;
  ~Direct();
  Direct(const Direct&) = delete;
  Direct& operator=(const Direct&) = delete;

  // The one-sided calls (MPI return codes; the window's error handler has run on errors).
  // `request`: a request-based call's, returned complete.
  int put(const void* origin, std::int64_t origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
          std::int64_t target_count, MPI_Datatype target_type, MPI_Request* request) {
    return move(true, const_cast<void*>(origin), origin_count, origin_type, target, disp, target_count, target_type,
                request);
  }
  int get(void* origin, std::int64_t origin_count, MPI_Datatype origin_type, int target, MPI_Aint disp,
          std::int64_t target_count, MPI_Datatype target_type, MPI_Request* request) {
    return move(false, origin, origin_count, origin_type, target, disp, target_count, target_type, request);
  }
  // Accumulate (result null), Get_accumulate, Fetch_and_op; `compare` set: Compare_and_swap.
  int accumulate(const void* origin, std::int64_t origin_count, MPI_Datatype origin_type, void* result,
                 std::int64_t result_count, MPI_Datatype result_type, int target, MPI_Aint disp,
                 std::int64_t target_count, MPI_Datatype target_type, MPI_Op op, MPI_Request* request,
                 const void* compare = nullptr);

  int fence(int assert);
  int post(MPI_Group group, int assert);
  int start(MPI_Group group, int assert);
  int complete();
  int wait();
  int test(int* flag);
  int lock(int lock_type, int rank, int assert);
  int unlock(int rank);
  int lock_all(int assert);
  int unlock_all();
  // Every flush form (target MPI_ANY_SOURCE: the _all forms), and MPI_Win_sync (target
  // MPI_PROC_NULL): this process's queued work is its only outstanding work.
  int flush(int target);
  // MPI_Win_free's part before the library's: completes everything, waits for every member, and
  // lets go of the mapped memory.
  int free();

 private:
  struct Member {
    char* base = nullptr;    // the member's window memory as this process addresses it
    void* mapped = nullptr;  // what ipc_open or SharedHostMemory::map returned (null for this process's own)
    std::int64_t mapped_bytes = 0;
    std::int64_t bytes = 0;
    std::int64_t disp_unit = 1;
    protocol::peers::WindowLocks locks;
    std::uint32_t held = 0;  // the passive lock this process holds on it (0, 1 shared, kExclusiveHolder)
    bool locked = false;     // in a passive-target epoch on it (held, or MPI_MODE_NOCHECK)
  };
  Direct() = default;
  // Put (to_target) or Get: the bytes of `origin_count` elements at `origin` and of the target's.
  int move(bool to_target, void* origin, std::int64_t origin_count, MPI_Datatype origin_type, int target,
           MPI_Aint disp, std::int64_t target_count, MPI_Datatype target_type, MPI_Request* request);
  // Where the members' memory is, as this process's kernels or CPU reach it.
  memory::Kind window_kind() const {
    return device_ >= 0 ? memory::Kind{GDDT_MEMORY_DEVICE, device_} : memory::Kind{};
  }
  // Points `elements` (a target's count and layout) at `disp` of the member's memory, checked to
  // lie in its window (MPI_ERR_RMA_RANGE otherwise).
  int target_memory(int target, MPI_Aint disp, protocol::Message* elements);
  int raise_class(int error_class);
  int raise_status(Status status);
  // Waits for what this process queued on its stream; drain_locked takes the window's mutex first.
  Status drain();
  Status drain_locked();
  // Gives back the passive lock this process holds on `member`, if any.
  static void release(Member& member);
  // Whether this process is in a passive-target epoch on `target` (MPI_ANY_SOURCE: on any).
  bool in_passive_epoch(int target) const;
  std::vector<int> ranks_of(MPI_Group group);
  void acquire(std::atomic<std::uint32_t>* word, std::uint32_t holder);
  // Between tries of a word another process holds: the library's progress and gddt's.
  void progress_while_waiting();
  // Whether the arguments of a data call are ones gddt moves (else kLibraryJudges).
  bool valid(int target, std::initializer_list<std::pair<std::int64_t, MPI_Datatype>> buffers, MPI_Op op);

  MPI_Win win_ = MPI_WIN_NULL;
  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate of the window's, for synchronization
  std::uint64_t key_ = 0;
  int rank_ = 0;
  int device_ = -1;
  gpu::Stream stream_ = nullptr;
  std::mutex mutex_;
  bool queued_ = false;
  std::vector<Member> members_;
  std::vector<int> access_group_;          // of the current access epoch (start..complete)
  bool accessing_ = false;
  std::vector<MPI_Request> exposure_;      // the post's sends and the complete messages awaited
  bool exposing_ = false;
  bool locked_all_ = false;
};

// A direct window's answer to a call, or the library's where the call is erroneous for it.
template <typename Library>
int or_library(int rc, Library library) {
  return rc == Direct::kLibraryJudges ? library() : rc;
}

}  // namespace gddt::mpi::onesided
