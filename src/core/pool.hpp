// Pools of device scratch (per GPU) and pinned host staging memory, so the data path never
// allocates per call. A pool that reaches its configured limit, or whose allocation fails,
// hands out less (down to the caller's minimum) rather than failing: callers chunk.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.hpp"

namespace gddt::pool {

// kShared: device scratch that other processes of the node map through CUDA IPC, from slabs of its
// own that no MPI library is handed. A process maps an allocation once ("resource already mapped"):
// a CUDA-aware library's own CUDA IPC, mapping the slab a staged message lay in, would otherwise
// keep gddt from mapping the slab of a later message of the peer protocol, and the other way round.
enum class Where { kDevice, kPinned, kShared };

// A buffer borrowed from a pool; returns itself on destruction.
class Lease {
 public:
  Lease() = default;
  ~Lease() { release(); }
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  explicit operator bool() const { return data_ != nullptr; }
  void release();

 private:
  friend Status acquire(Where, int, std::size_t, std::size_t, Lease*);
  void* data_ = nullptr;
  std::size_t size_ = 0;
  Where where_ = Where::kPinned;
  int device_ = -1;
};

// Borrows between `min_bytes` and `want_bytes` (as much as the pool allows, preferring
// `want_bytes`). `device` is ignored for pinned memory. GDDT_ERR_NO_MEMORY only when not
// even `min_bytes` can be had.
Status acquire(Where where, int device, std::size_t want_bytes, std::size_t min_bytes, Lease* lease);

// The most bytes the kShared pool of a GPU holds, half of GDDT_POOL_DEVICE_MAX: the peer protocol
// holds at most that much scratch for transfers awaiting their receivers' release, so that the raw
// format, which new messages take beyond it, still finds scratch in gddt's own pool.
std::uint64_t shared_most();

// Frees every cached buffer (at MPI_Finalize; buffers still leased are freed on return).
void trim();

}  // namespace gddt::pool
