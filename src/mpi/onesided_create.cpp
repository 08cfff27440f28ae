// Windows over memory the MPI library must not touch (onesided_window.hpp): their creation, the
// regions of dynamic windows, their freeing, and the queries that must see the user's memory
// rather than the public copies the library has (MPI_Win_get_attr, MPI_Get_address).
#include <mpi.h>

#include <cstdlib>
#include <cstring>

#include "core/gpu.hpp"
#include "core/log.hpp"
#include "mpi/entry_points.hpp"
#include "mpi/errors.hpp"
#include "mpi/onesided_window.hpp"

namespace gddt::mpi::entry {
namespace {

using onesided::Region;
using onesided::Window;

// The info key of MPI_Win_allocate (and MPI_Win_allocate_shared, which refuses it) that asks for
// the window's memory on the current GPU: value "device" (or "host", the default).
constexpr const char* kMemoryKindKey = "gddt_memory_kind";

bool asks_device(MPI_Info info) {
  if (info == MPI_INFO_NULL) return false;
  char value[16] = {};
  int flag = 0;
  if (PMPI_Info_get(info, kMemoryKindKey, static_cast<int>(sizeof value) - 1, value, &flag) != MPI_SUCCESS || !flag)
    return false;
  if (std::strcmp(value, "device") == 0) return true;
  if (std::strcmp(value, "host") != 0) GDDT_LOG(kWarn, "%s=%s is neither device nor host: host memory", kMemoryKindKey, value);
  return false;
}

// Whether window memory at `base` takes gddt's way, and its kind.
bool served_window_memory(const void* base, MPI_Aint size, memory::Kind* kind) {
  if (size <= 0 || base == nullptr || !(gpu::available() || onesided::host_through_gddt())) return false;
  return memory::classify(base, kind) == GDDT_OK && onesided::served(*kind);
}

// The window the library made over `region`'s public copy, registered with what its attributes say.
void register_window(MPI_Win win, Window::Flavor flavor, int flavor_attribute, void* base,
                     std::unique_ptr<Region> region, std::unique_ptr<onesided::Direct> direct = nullptr,
                     std::unique_ptr<onesided::SharedHostMemory> shared = nullptr) {
  auto window = std::make_shared<Window>(win, flavor);
  window->shared_host = std::move(shared);
  window->base = base;
  window->flavor_attribute = flavor_attribute;
  if (direct) window->model_attribute = MPI_WIN_UNIFIED;
  window->direct = std::move(direct);
  if (region) window->add_region(std::move(region));
  onesided::add(std::move(window));
}

template <typename DispUnit, typename Create>
int create(Create library, void* base, MPI_Aint size, DispUnit disp_unit, MPI_Info info, MPI_Comm comm,
           MPI_Win* win) {
  memory::Kind kind;
  const bool served = served_window_memory(base, size, &kind);
  onesided::DirectCandidate candidate(comm, base, size, disp_unit, served ? kind : memory::Kind{});
  if (!served) return library(base, size, disp_unit, info, comm, win);
  std::unique_ptr<Region> region;
  const Status made = Region::make(base, size, kind, &region);
  if (is_error(made)) return raise(comm, made);
  const int rc = library(region->public_copy(), size, disp_unit, info, comm, win);
  if (rc != MPI_SUCCESS) return rc;
  register_window(*win, Window::Flavor::kCreate, MPI_WIN_FLAVOR_CREATE, base, std::move(region),
                  onesided::Direct::settle(candidate, *win));
  return MPI_SUCCESS;
}

// MPI_Win_allocate of device memory (the info key), or of any with GDDT_RMA_HOST=gddt: gddt
// allocates the private copy, the library allocates the window, whose memory is the public copy.
// An allocated window, not one created over gddt's memory: the library's windows of the two
// flavors differ (Open MPI 4.1's MPI_Win_create windows lose MPI_LAND, MPI_LOR and MPI_LXOR
// accumulates, its allocated ones apply them).
template <typename DispUnit, typename Allocate>
int allocate(Allocate library_allocate, MPI_Aint size, DispUnit disp_unit, MPI_Info info, MPI_Comm comm,
             void* baseptr, MPI_Win* win) {
  const bool device = asks_device(info);
  if (size <= 0 || baseptr == nullptr || (!device && !onesided::host_through_gddt())) {
    const onesided::DirectCandidate counted(comm, nullptr, 0, disp_unit, memory::Kind{});
    return library_allocate(size, disp_unit, info, comm, baseptr, win);
  }
  memory::Kind kind;
  void* memory = nullptr;
  std::unique_ptr<onesided::SharedHostMemory> shared;
  const auto bytes = static_cast<std::size_t>(size);
  if (device) {
    if (!gpu::available()) {
      GDDT_LOG(kError, "MPI_Win_allocate: %s=device, but no GPU is usable", kMemoryKindKey);
      return raise(comm, GDDT_ERR_NO_MEMORY);
    }
    kind = memory::Kind{GDDT_MEMORY_DEVICE, gpu::current_device()};
    const Status allocated = gpu::device_alloc(kind.device, bytes, &memory);
    if (is_error(allocated)) return raise(comm, allocated);
  } else {
    // Where the window may be shared, memory the other processes can map.
    shared = onesided::SharedHostMemory::make(comm, size);
    memory = shared ? shared->data() : std::malloc(bytes);
    if (memory == nullptr) return raise(comm, GDDT_ERR_NO_MEMORY);
  }
  const auto release = [&] {
    if (device)
      gpu::device_free(kind.device, memory);
    else if (!shared)
      std::free(memory);
    shared.reset();
  };
  onesided::DirectCandidate candidate(comm, memory, size, disp_unit, kind, shared.get());
  void* library_copy = nullptr;
  const int rc = library_allocate(size, disp_unit, info, comm, &library_copy, win);
  if (rc != MPI_SUCCESS) {
    release();
    return rc;
  }
  std::unique_ptr<Region> region;
  const Status made = Region::make(memory, size, kind, &region, library_copy);
  // Every member that published settles, this one too where it cannot go on.
  std::unique_ptr<onesided::Direct> direct = onesided::Direct::settle(candidate, *win, !is_error(made));
  if (shared) shared->unlink();  // mapped by every member now, or by none ever
  if (is_error(made)) {
    release();
    return raise_on_window(*win, made);
  }
  if (!shared) region->adopt_private();
  *static_cast<void**>(baseptr) = memory;
  register_window(*win, Window::Flavor::kAllocate, MPI_WIN_FLAVOR_ALLOCATE, memory, std::move(region),
                  std::move(direct), std::move(shared));
  return MPI_SUCCESS;
}

// Processes of a shared-memory window load and store into each other's memory directly, which a
// public copy cannot give: device memory there is refused (docs/usage.md).
int refuse_shared_device(MPI_Info info, MPI_Comm comm) {
  if (!asks_device(info)) return MPI_SUCCESS;
  GDDT_LOG(kError, "MPI_Win_allocate_shared: %s=device is not served (shared-memory windows need the unified model)",
           kMemoryKindKey);
  return raise(comm, GDDT_ERR_UNSUPPORTED);
}

}  // namespace

int Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return create(PMPI_Win_create, base, size, disp_unit, info, comm, win);
}

int Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return allocate(PMPI_Win_allocate, size, disp_unit, info, comm, baseptr, win);
}

int Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  const int refused = refuse_shared_device(info, comm);
  return refused != MPI_SUCCESS ? refused : PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
}

#if GDDT_HAVE_MPI_Win_create_c
int Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return create(PMPI_Win_create_c, base, size, disp_unit, info, comm, win);
}
#endif
#if GDDT_HAVE_MPI_Win_allocate_c
int Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return allocate(PMPI_Win_allocate_c, size, disp_unit, info, comm, baseptr, win);
}
#endif
#if GDDT_HAVE_MPI_Win_allocate_shared_c
int Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                          MPI_Win* win) {
  const int refused = refuse_shared_device(info, comm);
  return refused != MPI_SUCCESS ? refused : PMPI_Win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win);
}
#endif

// Every dynamic window may have device memory attached later, and its model is fixed at creation:
// where that can happen it is separate.
int Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  const int rc = PMPI_Win_create_dynamic(info, comm, win);
  if (rc == MPI_SUCCESS && (gpu::available() || onesided::host_through_gddt()))
    register_window(*win, Window::Flavor::kDynamic, MPI_WIN_FLAVOR_DYNAMIC, MPI_BOTTOM, nullptr);
  return rc;
}

// The library attaches the public copy: origins address it by the address MPI_Get_address gives
// for the user's memory (below), as MPI asks of displacements into dynamic windows.
int Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  const std::shared_ptr<Window> window = onesided::find(win);
  memory::Kind kind;
  if (!window || window->flavor() != Window::Flavor::kDynamic || !served_window_memory(base, size, &kind))
    return PMPI_Win_attach(win, base, size);
  std::unique_ptr<Region> region;
  const Status made = Region::make(base, size, kind, &region);
  if (is_error(made)) return raise_on_window(win, made);
  const int rc = PMPI_Win_attach(win, region->public_copy(), size);
  if (rc != MPI_SUCCESS) return rc;
  window->add_region(std::move(region));
  onesided::note_attached(1);
  return MPI_SUCCESS;
}

// What remote processes put into the region lands in the user's memory before it leaves.
int Win_detach(MPI_Win win, const void* base) {
  const std::shared_ptr<Window> window = onesided::find(win);
  std::unique_ptr<Region> region = window ? window->take_region(base) : nullptr;
  if (!region) return PMPI_Win_detach(win, base);
  const Status absorbed = region->absorb();
  const int rc = PMPI_Win_detach(win, region->public_copy());
  if (rc != MPI_SUCCESS) {
    window->add_region(std::move(region));
    return rc;
  }
  onesided::note_attached(-1);
  return raise_on_window(win, absorbed);
}

// Operations still pending complete first; after the library's free the public copies hold their
// final bytes, which the user's memory takes (MPI_Win_allocate's goes with the window).
int Win_free(MPI_Win* win) {
  const std::shared_ptr<Window> window = win != nullptr ? onesided::find(*win) : nullptr;
  if (!window) return PMPI_Win_free(win);
  const MPI_Win handle = *win;
  if (window->direct) {
    // Every member's calls are done and their mappings may close; the library's public copies
    // carried nothing.
    const int freed = window->direct->free();
    if (freed != MPI_SUCCESS) return freed;
    if (window->flavor() == Window::Flavor::kAllocate) window->unpin();
    const int rc = PMPI_Win_free(win);
    if (rc == MPI_SUCCESS) onesided::remove(handle);
    return rc;
  }
  const int completed = raise_on_window(handle, window->complete(MPI_ANY_SOURCE));
  if (completed != MPI_SUCCESS) return completed;
  // The library frees the public copies it allocated.
  if (window->flavor() == Window::Flavor::kAllocate) window->unpin();
  const int rc = PMPI_Win_free(win);
  if (rc != MPI_SUCCESS) return rc;
  onesided::remove(handle);
  Status absorbed = GDDT_OK;
  if (window->flavor() != Window::Flavor::kAllocate) absorbed = window->absorb();
  if (window->flavor() == Window::Flavor::kDynamic) onesided::note_attached(-window->region_count());
  if (!is_error(absorbed)) return MPI_SUCCESS;
  // The window is gone: its error handler with it.
  GDDT_LOG(kError, "MPI_Win_free: the window's last updates could not be copied into its memory");
  return error_class(absorbed);
}

// The window's own attributes describe the user's window, not the library's over public copies.
int Win_get_attr(MPI_Win win, int keyval, void* attribute_val, int* flag) {
  const int rc = PMPI_Win_get_attr(win, keyval, attribute_val, flag);
  if (rc != MPI_SUCCESS || flag == nullptr || !*flag) return rc;
  const std::shared_ptr<Window> window = onesided::find(win);
  if (!window || !window->separate()) return rc;
  if (keyval == MPI_WIN_BASE && window->flavor() != Window::Flavor::kDynamic)
    *static_cast<void**>(attribute_val) = window->base;
  else if (keyval == MPI_WIN_CREATE_FLAVOR)
    *static_cast<int**>(attribute_val) = &window->flavor_attribute;
  else if (keyval == MPI_WIN_MODEL)
    *static_cast<int**>(attribute_val) = &window->model_attribute;
  return rc;
}

int Get_address(const void* location, MPI_Aint* address) {
  if (onesided::any_attached() && address != nullptr && onesided::translate_attached(location, address))
    return MPI_SUCCESS;
  return PMPI_Get_address(location, address);
}

}  // namespace gddt::mpi::entry
