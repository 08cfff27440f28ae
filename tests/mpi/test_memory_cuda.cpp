// All four kinds through the CUDA runtime.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "test_memory.hpp"

namespace gddt_test {
namespace {

[[noreturn]] void die(const char* what, cudaError_t error) {
  std::fprintf(stderr, "test memory: %s: %s\n", what, cudaGetErrorString(error));
  std::abort();
}

void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) die(what, error);
}

}  // namespace

bool memory_kind_available(MemoryKind kind, std::string* why) {
  if (kind == MemoryKind::kHost) return true;
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    *why = std::string(memory_kind_name(kind)) + " memory needs a GPU: " +
           (error != cudaSuccess ? cudaGetErrorString(error) : "none found");
    return false;
  }
  return true;
}

TestBuffer::TestBuffer(MemoryKind kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
  const std::size_t allocated = bytes ? bytes : 1;
  void* pointer = nullptr;
  switch (kind) {
    case MemoryKind::kHost:
      pointer = std::malloc(allocated);
      if (pointer == nullptr) std::abort();
      break;
    case MemoryKind::kPinned:
      check(cudaMallocHost(&pointer, allocated), "cudaMallocHost");
      break;
    case MemoryKind::kDevice:
      check(cudaMalloc(&pointer, allocated), "cudaMalloc");
      break;
    case MemoryKind::kManaged:
      check(cudaMallocManaged(&pointer, allocated), "cudaMallocManaged");
      break;
  }
  data_ = static_cast<unsigned char*>(pointer);
}

TestBuffer::~TestBuffer() {
  switch (kind_) {
    case MemoryKind::kHost: std::free(data_); break;
    case MemoryKind::kPinned: cudaFreeHost(data_); break;
    case MemoryKind::kDevice:
    case MemoryKind::kManaged: cudaFree(data_); break;
  }
}

void TestBuffer::upload(const void* host, std::size_t bytes) {
  if (kind_ == MemoryKind::kHost) {
    std::memcpy(data_, host, bytes);
    return;
  }
  check(cudaMemcpy(data_, host, bytes, cudaMemcpyDefault), "cudaMemcpy to the test buffer");
}

void TestBuffer::download(void* host, std::size_t bytes) const {
  if (kind_ == MemoryKind::kHost) {
    std::memcpy(host, data_, bytes);
    return;
  }
  check(cudaMemcpy(host, data_, bytes, cudaMemcpyDefault), "cudaMemcpy from the test buffer");
}

}  // namespace gddt_test
