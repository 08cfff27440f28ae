// Host memory only: this build has no CUDA.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "test_memory.hpp"

namespace gddt_test {

bool memory_kind_available(MemoryKind kind, std::string* why) {
  if (kind == MemoryKind::kHost) return true;
  *why = std::string(memory_kind_name(kind)) + " memory needs a build with CUDA";
  return false;
}

TestBuffer::TestBuffer(MemoryKind kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
  std::string why;
  if (!memory_kind_available(kind, &why)) {
    std::fprintf(stderr, "test memory: %s\n", why.c_str());
    std::abort();
  }
  data_ = static_cast<unsigned char*>(std::malloc(bytes ? bytes : 1));
  if (data_ == nullptr) std::abort();
}

TestBuffer::~TestBuffer() { std::free(data_); }

void TestBuffer::upload(const void* host, std::size_t bytes) { std::memcpy(data_, host, bytes); }

void TestBuffer::download(void* host, std::size_t bytes) const { std::memcpy(host, data_, bytes); }

}  // namespace gddt_test
