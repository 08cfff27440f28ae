// One-sided communication on memory the MPI library must not touch with the CPU (device memory, or
// any memory with GDDT_RMA_HOST=gddt). The library only ever gets host memory:
// - window memory: the library's window is a host *public copy* (mapped pinned memory) of the
//   user's memory, the *private copy*, and gddt reports MPI_WIN_MODEL = MPI_WIN_SEPARATE for such
//   windows, so MPI-4's separate-model rules (section 12.7) say when each copy must show the
//   other's updates: a private update by the owner's next MPI_Win_post, fence, unlock(_all) or
//   MPI_Win_sync (publish), a put or accumulate into the public copy by its next MPI_Win_wait,
//   fence, lock(_all) or MPI_Win_sync (absorb). Both directions merge (pack/merge.hpp) against a
//   snapshot of what the copies held at the last merge, so local stores and remote updates of
//   one epoch (legal where they touch different bytes) both survive, and bytes other processes
//   may be writing meanwhile are never written;
// - origin, compare and result buffers: host stand-ins laid out like them (mpi/collective.hpp),
//   kept until the synchronization (or, for MPI_R*, the request) that completes the operation,
//   when results move back into the user's buffers, gaps untouched.
// This file holds the windows gddt keeps such state for, keyed by their handles.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/memory.hpp"
#include "core/status.hpp"
#include "mpi/onesided_direct.hpp"

namespace gddt::mpi::collective {
class KeptStandIns;  // mpi/collective.hpp
}  // namespace gddt::mpi::collective

namespace gddt::mpi::onesided {

// GDDT_RMA_HOST=gddt: host windows and buffers take gddt's way too (how CI exercises it).
bool host_through_gddt();
// Whether memory of `kind` takes gddt's way: device memory, or any with GDDT_RMA_HOST=gddt.
// Managed memory is the CPU's to touch: the library gets it as it is.
bool served(const memory::Kind& kind);

// Window memory the library has as a public copy: the user's private copy (or gddt's, for
// MPI_Win_allocate), the host public copy the library was given instead and the snapshot both
// held at the last merge (device memory where the private copy is on a GPU).
class Region {
 public:
  // Copies `bytes` of the private copy at `private_copy` (of `kind`) into a new public copy, or into
  // `library_copy`, host memory the library allocated for the window (MPI_Win_allocate), pinned and
  // mapped for the merge kernels where the private copy is on a GPU.
  static Status make(void* private_copy, std::int64_t bytes, const memory::Kind& kind, std::unique_ptr<Region>* made,
                     void* library_copy = nullptr);
  // The private copy is gddt's (MPI_Win_allocate): freed with the region.
  void adopt_private() { owns_private_ = true; }
  // Before the library frees a public copy it allocated: no longer pinned for the merge kernels.
  void unpin();
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  void* private_copy() const { return private_; }
  void* public_copy() const { return public_host_; }
  std::int64_t bytes() const { return bytes_; }
  bool holds(const void* address) const;  // an address of the private copy
  // Private bytes the owner changed since the last merge into the public copy, and the reverse.
  Status publish();
  Status absorb();

 private:
  Region() = default;
  Status merge(bool into_public);
  void* private_ = nullptr;
  std::int64_t bytes_ = 0;
  memory::Kind kind_;
  void* public_host_ = nullptr;
  void* public_device_ = nullptr;  // the same memory as kernels address it
  void* snapshot_ = nullptr;
  bool owns_private_ = false;
  bool owns_public_ = true;
  bool pinned_public_ = false;  // a library's public copy gddt registered with CUDA
};

// An operation of this process whose buffers have stand-ins, until a synchronization completes
// it: the results move into the user's buffers once, or, where its request completed first, at
// that completion and again at the synchronization only if the library wrote into the stand-ins
// after it (KeptStandIns::rewritten). The stand-ins live until the synchronization either way, so
// the library never writes into memory gddt gave back.
class Pending {
 public:
  Pending(int target, std::unique_ptr<collective::KeptStandIns> stand_ins);
  ~Pending();
  int target() const { return target_; }
  Status complete_request();
  Status complete();

 private:
  int target_;
  std::mutex mutex_;
  std::unique_ptr<collective::KeptStandIns> stand_ins_;  // null once complete
  bool delivered_ = false;
  Status outcome_ = GDDT_OK;
};

// A window gddt keeps state for: one whose memory the library has as public copies, or any
// window this process has pending operations with stand-ins on.
class Window {
 public:
  enum class Flavor { kLibrary, kCreate, kAllocate, kDynamic };
  explicit Window(MPI_Win handle, Flavor flavor = Flavor::kLibrary) : handle_(handle), flavor_(flavor) {}

  MPI_Win handle() const { return handle_; }
  Flavor flavor() const { return flavor_; }
  // The window's memory is gddt's public copies: its attributes say so (model separate, the
  // user's base, the flavor the user asked for).
  bool separate() const { return flavor_ != Flavor::kLibrary; }
  void* base = nullptr;
  int flavor_attribute = MPI_WIN_FLAVOR_CREATE;
  int model_attribute = MPI_WIN_SEPARATE;
  // Set where every member reaches the others' memory through CUDA IPC: every call of the window
  // is then the direct window's, and its region's public copy stays as the library got it.
  std::unique_ptr<Direct> direct;
  // MPI_Win_allocate's host memory where other processes could map it (the private copy).
  std::unique_ptr<SharedHostMemory> shared_host;

  void add_region(std::unique_ptr<Region> region);
  int region_count();
  void unpin();  // Region::unpin of every region
  std::unique_ptr<Region> take_region(const void* private_copy);
  bool translate(const void* address, MPI_Aint* public_address);
  Status publish();
  Status absorb();

  // The assertion of the last MPI_Win_fence or MPI_Win_post promised no put or accumulate into
  // this window before the next fence or MPI_Win_wait: that one absorbs nothing.
  bool take_no_put();
  void set_no_put(bool promised);

  void add_pending(std::shared_ptr<Pending> pending);
  // Completes the pending operations on `target` (MPI_ANY_SOURCE: all of them).
  Status complete(int target);

 private:
  MPI_Win handle_;
  Flavor flavor_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Region>> regions_;
  std::vector<std::shared_ptr<Pending>> pending_;
  bool no_put_ = false;
};

// The registry.
bool any_windows();
// Regions attached to dynamic windows anywhere in the process (MPI_Get_address asks).
bool any_attached();
void note_attached(int change);
std::shared_ptr<Window> find(MPI_Win win);
// The window's entry, made for the library's own window where it has none.
std::shared_ptr<Window> find_or_add(MPI_Win win);
void add(std::shared_ptr<Window> window);
std::shared_ptr<Window> remove(MPI_Win win);
// MPI_Get_address of an address in a region attached to a dynamic window: the public copy's.
bool translate_attached(const void* address, MPI_Aint* public_address);

}  // namespace gddt::mpi::onesided
