// What the Fortran tests and example take from C: buffers of every memory kind (the tests'
// one helper) and gddt's counters, found at run time so that a preloaded gddt serves too.
#include <dlfcn.h>

#include <cstddef>
#include <exception>
#include <string>

#include "memory_buffer.hpp"

namespace {

gddt_test::MemoryKind kind_named(const char* name) {
  gddt_test::MemoryKind kind = gddt_test::MemoryKind::kHost;
  gddt_test::parse_memory_kind(name, &kind);
  return kind;
}

}  // namespace

extern "C" {

// 0 when buffers of the kind called `name` can be had on this rank, 1 otherwise.
int fortran_test_memory_usable(const char* name, int local_rank) {
  return gddt_test::prepare_memory_kind(kind_named(name), local_rank).empty() ? 0 : 1;
}

// A buffer of `bytes` bytes holding a copy of `image`; null when it cannot be had.
void* fortran_test_buffer(const char* name, const void* image, std::size_t bytes) {
  try {
    auto* buffer = new gddt_test::Buffer(kind_named(name), bytes);
    buffer->upload(image, bytes);
    return buffer;
  } catch (const std::exception&) {
    return nullptr;
  }
}

void* fortran_test_address(void* buffer) { return static_cast<gddt_test::Buffer*>(buffer)->data(); }

void fortran_test_download(void* buffer, void* image, std::size_t bytes) {
  static_cast<gddt_test::Buffer*>(buffer)->download(image, bytes);
}

void fortran_test_free(void* buffer) { delete static_cast<gddt_test::Buffer*>(buffer); }

// gddt's counter `name`, -1 without gddt in the process.
long long fortran_test_counter(const char* name) {
  using Counter = int (*)(const char*, long long*);
  const auto counter = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "gddt_counter"));
  long long value = -1;
  if (counter == nullptr || counter(name, &value) != 0) return -1;
  return value;
}

}  // extern "C"
