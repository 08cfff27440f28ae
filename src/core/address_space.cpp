#include "core/address_space.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>

#include "gddt/gddt.h"

namespace gddt::address_space {

// Constant-initialized: the wrappers below may run before any constructor of this library.
std::atomic<std::uint64_t> detail::epoch_counter{0};

namespace {

// Bumped before and after the system call: a reader that saw the epoch of either side of
// the call also sees the mapping's effect once it asks the driver.
struct Bump {
  Bump() { detail::epoch_counter.fetch_add(1, std::memory_order_acq_rel); }
  ~Bump() { detail::epoch_counter.fetch_add(1, std::memory_order_acq_rel); }
};

// UCX's memory events (ucm/api/ucm.h): mapped, called after the mapping; unmapped, before.
constexpr int kUcmVmMapped = 1 << 16;
constexpr int kUcmVmUnmapped = 1 << 17;
constexpr int kUcmNoInstall = 1 << 24;
using UcmCallback = void (*)(int event, void* details, void* argument);
using UcmSetHandler = int (*)(int events, int priority, UcmCallback callback, void* argument);

void on_ucm_event(int, void*, void*) { forget_answers(); }

}  // namespace

bool sees_every_mapping() {
  static const bool sees = [] {
    const auto set_handler = reinterpret_cast<UcmSetHandler>(dlsym(RTLD_DEFAULT, "ucm_set_event_handler"));
    if (set_handler == nullptr) return true;
    return set_handler(kUcmVmMapped | kUcmVmUnmapped | kUcmNoInstall, 0, on_ucm_event, nullptr) == 0;
  }();
  return sees;
}

}  // namespace gddt::address_space

// The wrappers make the system calls themselves: no lookup of the next definition, so they
// work from the first call, before the dynamic linker has finished with this library.
extern "C" GDDT_EXPORT void* mmap(void* address, size_t length, int protection, int flags, int fd, off_t offset) {
  gddt::address_space::Bump bump;
  return reinterpret_cast<void*>(syscall(SYS_mmap, address, length, protection, flags, fd, offset));
}

extern "C" GDDT_EXPORT void* mmap64(void* address, size_t length, int protection, int flags, int fd, off_t offset) {
  return mmap(address, length, protection, flags, fd, offset);
}

extern "C" GDDT_EXPORT int munmap(void* address, size_t length) {
  gddt::address_space::Bump bump;
  return static_cast<int>(syscall(SYS_munmap, address, length));
}

extern "C" GDDT_EXPORT void* mremap(void* old_address, size_t old_size, size_t new_size, int flags, ...) {
  gddt::address_space::Bump bump;
  void* new_address = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list args;
    va_start(args, flags);
    new_address = va_arg(args, void*);
    va_end(args);
  }
  return reinterpret_cast<void*>(syscall(SYS_mremap, old_address, old_size, new_size, flags, new_address));
}
