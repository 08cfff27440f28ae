#include "workspace.hpp"

#include <cstdlib>
#include <cstring>
#include <utility>

#include <cuda_runtime_api.h>

#include "checks.hpp"

namespace gddt::bench {
namespace {

constexpr std::size_t kHostAlignment = 4096;

void ensure(Memory& slot, Memory::Kind kind, std::size_t bytes) {
  if (slot.size() < bytes) slot = Memory(kind, bytes);
}

}  // namespace

Memory::Memory(Kind kind, std::size_t bytes) : kind_(kind), size_(bytes) {
  const std::size_t allocated = bytes == 0 ? kHostAlignment : bytes;
  void* pointer = nullptr;
  switch (kind) {
    case Kind::kDevice:
      BENCH_CUDA_CHECK(cudaMalloc(&pointer, allocated));
      break;
    case Kind::kPinned:
      BENCH_CUDA_CHECK(cudaMallocHost(&pointer, allocated));
      break;
    case Kind::kPageable:
      pointer = std::aligned_alloc(kHostAlignment, (allocated + kHostAlignment - 1) / kHostAlignment * kHostAlignment);
      if (pointer == nullptr) die("out of host memory allocating " + std::to_string(bytes) + " bytes");
      break;
    case Kind::kNone:
      break;
  }
  data_ = static_cast<char*>(pointer);
}

Memory::Memory(Memory&& other) noexcept
    : kind_(std::exchange(other.kind_, Kind::kNone)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

Memory& Memory::operator=(Memory&& other) noexcept {
  if (this != &other) {
    release();
    kind_ = std::exchange(other.kind_, Kind::kNone);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Memory::~Memory() { release(); }

void Memory::release() {
  switch (kind_) {
    case Kind::kDevice:
      BENCH_CUDA_CHECK(cudaFree(data_));
      break;
    case Kind::kPinned:
      BENCH_CUDA_CHECK(cudaFreeHost(data_));
      break;
    case Kind::kPageable:
      std::free(data_);
      break;
    case Kind::kNone:
      break;
  }
  kind_ = Kind::kNone;
  data_ = nullptr;
  size_ = 0;
}

void Memory::upload(const void* host, std::size_t bytes) {
  if (on_device()) {
    BENCH_CUDA_CHECK(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice));
  } else {
    std::memcpy(data_, host, bytes);
  }
}

void Memory::download(void* host, std::size_t bytes) const {
  if (on_device()) {
    BENCH_CUDA_CHECK(cudaMemcpy(host, data_, bytes, cudaMemcpyDeviceToHost));
  } else {
    std::memcpy(host, data_, bytes);
  }
}

Memory::Kind user_memory_kind(MemoryKind memory) {
  return memory == MemoryKind::kDevice ? Memory::Kind::kDevice : Memory::Kind::kPageable;
}

Workspace::Workspace(MemoryKind memory, std::size_t extent, std::size_t packed)
    : memory_(memory),
      extent_(extent),
      packed_(packed),
      typed_send_(user_memory_kind(memory), extent),
      typed_recv_(user_memory_kind(memory), extent),
      contig_send_(user_memory_kind(memory), packed),
      contig_recv_(user_memory_kind(memory), packed) {}

Memory& Workspace::host_typed() {
  ensure(host_typed_, Memory::Kind::kPinned, extent_);
  return host_typed_;
}

Memory& Workspace::device_packed() {
  ensure(device_packed_, Memory::Kind::kDevice, packed_);
  return device_packed_;
}

Memory& Workspace::host_packed() {
  ensure(host_packed_, on_device() ? Memory::Kind::kPinned : Memory::Kind::kPageable, packed_);
  return host_packed_;
}

std::vector<std::uint32_t> pattern_words(std::size_t bytes, std::uint32_t seed) {
  std::vector<std::uint32_t> words(bytes / 4);
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::uint32_t value = static_cast<std::uint32_t>(i) * 2654435761u ^ seed * 0x85EBCA6Bu;
    value ^= value >> 15;
    words[i] = value * 0x2C1B3C6Du;
  }
  return words;
}

}  // namespace gddt::bench
