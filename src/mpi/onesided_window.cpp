#include "mpi/onesided_window.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <unordered_map>
#include <utility>

#include "core/config.hpp"
#include "core/counters.hpp"
#include "core/handle_key.hpp"
#include "core/gpu.hpp"
#include "pack/merge.hpp"
#include "mpi/collective.hpp"
#include "protocol/transfer.hpp"

namespace gddt::mpi::onesided {

bool host_through_gddt() { return config::rma_host() == config::RmaHost::kGddt; }

bool served(const memory::Kind& kind) { return kind.type == GDDT_MEMORY_DEVICE || host_through_gddt(); }

// --- Region ---

Status Region::make(void* private_copy, std::int64_t bytes, const memory::Kind& kind, std::unique_ptr<Region>* made,
                    void* library_copy) {
  std::unique_ptr<Region> region(new Region);
  region->private_ = private_copy;
  region->bytes_ = bytes;
  region->kind_ = kind;
  if (kind.is_device() && kind.device < 0) region->kind_.device = gpu::current_device();
  const auto size = static_cast<std::size_t>(bytes);
  const int device = kind.is_device() ? region->kind_.device : -1;
  if (library_copy == nullptr) {
    // Mapped, so the merge kernels reach it; without a GPU ordinary host memory.
    GDDT_CHECK(gpu::mapped_alloc(size, &region->public_host_, &region->public_device_));
  } else {
    region->owns_public_ = false;
    region->public_host_ = region->public_device_ = library_copy;
    if (device >= 0) GDDT_CHECK(gpu::host_register(library_copy, size, &region->public_device_, &region->pinned_public_));
  }
  if (device >= 0) {
    GDDT_CHECK(gpu::device_alloc(device, size, &region->snapshot_));
  } else {
    region->snapshot_ = std::malloc(size);
    if (region->snapshot_ == nullptr) return GDDT_ERR_NO_MEMORY;
  }
  GDDT_CHECK(protocol::copy_and_wait(region->public_host_, private_copy, size, device));
  GDDT_CHECK(protocol::copy_and_wait(region->snapshot_, private_copy, size, device));
  counters::add(counters::Counter::kRmaPublicCopies, 1);
  *made = std::move(region);
  return GDDT_OK;
}

void Region::unpin() {
  if (pinned_public_) gpu::host_unregister(public_host_);
  pinned_public_ = false;
}

Region::~Region() {
  if (owns_public_ && public_host_ != nullptr) gpu::mapped_free(public_host_);
  unpin();
  const auto release = [this](void* memory) {
    if (kind_.is_device())
      gpu::device_free(kind_.device, memory);
    else
      std::free(memory);
  };
  if (snapshot_ != nullptr) release(snapshot_);
  if (owns_private_) {
    release(private_);
    memory::invalidate(private_, static_cast<std::size_t>(bytes_));
  }
}

bool Region::holds(const void* address) const {
  const auto at = reinterpret_cast<std::uintptr_t>(address), begin = reinterpret_cast<std::uintptr_t>(private_);
  return at >= begin && at - begin < static_cast<std::uintptr_t>(bytes_);
}

Status Region::merge(bool into_public) {
  counters::add(counters::Counter::kRmaMerges, 1);
  counters::add(counters::Counter::kRmaMergeBytes, bytes_);
  if (!kind_.is_device()) {
    pack::merge_changed_host(into_public ? private_ : public_host_, snapshot_, into_public ? public_host_ : private_,
                             bytes_);
    return GDDT_OK;
  }
  // The library stream runs after the user's work on the legacy default stream, as a CUDA-aware
  // library's copies would; work on the user's own streams must be synchronized before the call.
  gpu::DeviceGuard guard(kind_.device);
  gpu::Stream stream = nullptr;
  GDDT_CHECK(gpu::library_stream(kind_.device, &stream));
  GDDT_CHECK(pack::merge_changed_device(into_public ? private_ : public_device_, snapshot_,
                                        into_public ? public_device_ : private_, bytes_, stream));
  return gpu::stream_synchronize(stream);
}

Status Region::publish() { return merge(true); }
Status Region::absorb() { return merge(false); }

// --- Pending ---

Pending::Pending(int target, std::unique_ptr<collective::KeptStandIns> stand_ins)
    : target_(target), stand_ins_(std::move(stand_ins)) {}
Pending::~Pending() = default;

Status Pending::complete_request() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stand_ins_ && !delivered_) {
    outcome_ = stand_ins_->deliver();
    delivered_ = true;
  }
  return outcome_;
}

Status Pending::complete() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!stand_ins_) return outcome_;
  if (!delivered_ || stand_ins_->rewritten()) outcome_ = stand_ins_->deliver();
  stand_ins_.reset();  // the staging goes back to its pool
  return outcome_;
}

// --- Window ---

void Window::add_region(std::unique_ptr<Region> region) {
  std::lock_guard<std::mutex> lock(mutex_);
  regions_.push_back(std::move(region));
}

void Window::unpin() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& region : regions_) region->unpin();
}

int Window::region_count() {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(regions_.size());
}

std::unique_ptr<Region> Window::take_region(const void* private_copy) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = std::find_if(regions_.begin(), regions_.end(),
                               [&](const std::unique_ptr<Region>& r) { return r->private_copy() == private_copy; });
  if (it == regions_.end()) return nullptr;
  std::unique_ptr<Region> taken = std::move(*it);
  regions_.erase(it);
  return taken;
}

bool Window::translate(const void* address, MPI_Aint* public_address) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& region : regions_) {
    if (!region->holds(address)) continue;
    const auto offset = reinterpret_cast<std::uintptr_t>(address) - reinterpret_cast<std::uintptr_t>(region->private_copy());
    *public_address = static_cast<MPI_Aint>(reinterpret_cast<std::uintptr_t>(region->public_copy()) + offset);
    return true;
  }
  return false;
}

Status Window::publish() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& region : regions_) GDDT_CHECK(region->publish());
  return GDDT_OK;
}

Status Window::absorb() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& region : regions_) GDDT_CHECK(region->absorb());
  return GDDT_OK;
}

bool Window::take_no_put() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(no_put_, false);
}

void Window::set_no_put(bool promised) {
  std::lock_guard<std::mutex> lock(mutex_);
  no_put_ = promised;
}

void Window::add_pending(std::shared_ptr<Pending> pending) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.push_back(std::move(pending));
}

Status Window::complete(int target) {
  std::vector<std::shared_ptr<Pending>> completing;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto completes = [target](const auto& p) { return target == MPI_ANY_SOURCE || p->target() == target; };
    std::copy_if(pending_.begin(), pending_.end(), std::back_inserter(completing), completes);
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(), completes), pending_.end());
  }
  Status status = GDDT_OK;
  for (const auto& pending : completing) {
    const Status completed = pending->complete();
    if (!is_error(status)) status = completed;
  }
  return status;
}

// --- registry ---

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, std::shared_ptr<Window>> windows;
  std::atomic<std::size_t> count{0};
  std::atomic<int> attached{0};
};

Registry& registry() {
  static auto* instance = new Registry;  // never destroyed: windows may be freed during exit
  return *instance;
}

}  // namespace

bool any_windows() { return registry().count.load(std::memory_order_acquire) != 0; }
bool any_attached() { return registry().attached.load(std::memory_order_acquire) != 0; }
void note_attached(int change) { registry().attached.fetch_add(change); }

std::shared_ptr<Window> find(MPI_Win win) {
  if (!any_windows() || win == MPI_WIN_NULL) return nullptr;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.windows.find(handle_key(win));
  return it == r.windows.end() ? nullptr : it->second;
}

std::shared_ptr<Window> find_or_add(MPI_Win win) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& entry = r.windows[handle_key(win)];
  if (!entry) {
    entry = std::make_shared<Window>(win);
    r.count.fetch_add(1);
  }
  return entry;
}

void add(std::shared_ptr<Window> window) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& entry = r.windows[handle_key(window->handle())];
  if (!entry) r.count.fetch_add(1);
  entry = std::move(window);
}

std::shared_ptr<Window> remove(MPI_Win win) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.windows.find(handle_key(win));
  if (it == r.windows.end()) return nullptr;
  std::shared_ptr<Window> removed = std::move(it->second);
  r.windows.erase(it);
  r.count.fetch_sub(1);
  return removed;
}

bool translate_attached(const void* address, MPI_Aint* public_address) {
  std::vector<std::shared_ptr<Window>> dynamic;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    for (const auto& [key, window] : r.windows)
      if (window->flavor() == Window::Flavor::kDynamic) dynamic.push_back(window);
  }
  return std::any_of(dynamic.begin(), dynamic.end(),
                     [&](const auto& window) { return window->translate(address, public_address); });
}

}  // namespace gddt::mpi::onesided
