#include "memory_buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "cuda_kinds.hpp"

namespace gddt_test {

const char* memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kPinned: return "pinned";
    case MemoryKind::kDevice: return "device";
    case MemoryKind::kManaged: return "managed";
  }
  return "?";
}

bool parse_memory_kind(const std::string& text, MemoryKind* kind) {
  for (MemoryKind candidate : kMemoryKinds) {
    if (text == memory_kind_name(candidate)) {
      *kind = candidate;
      return true;
    }
  }
  return false;
}

void copy_memory(MemoryKind kind, void* to, const void* from, std::size_t bytes) {
  if (bytes == 0) return;  // a pointer may then be null, which memcpy must not see
  if (kind == MemoryKind::kHost)
    std::memcpy(to, from, bytes);
  else
    cuda_kinds::copy(to, from, bytes);
}

std::string prepare_memory_kind(MemoryKind kind, int local_rank) {
  return kind == MemoryKind::kHost ? "" : cuda_kinds::prepare(kind, local_rank);
}

Buffer::Buffer(MemoryKind kind, std::size_t bytes, std::size_t host_alignment) : kind_(kind), size_(bytes) {
  const std::size_t allocated = bytes == 0 ? 1 : bytes;
  void* data = nullptr;
  // posix_memalign, not aligned_alloc: the latter wants the size rounded up to the alignment,
  // which would hide overruns into the rounding from AddressSanitizer.
  if (kind != MemoryKind::kHost) {
    data = cuda_kinds::allocate(kind, allocated);
  } else if (posix_memalign(&data, host_alignment, allocated) != 0) {
    throw std::runtime_error("no " + std::to_string(bytes) + " bytes of host memory aligned to " +
                             std::to_string(host_alignment));
  }
  data_ = static_cast<unsigned char*>(data);
}

Buffer::Buffer(Buffer&& other) noexcept
    : kind_(other.kind_), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    kind_ = other.kind_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() noexcept {
  if (data_ == nullptr) return;
  if (kind_ == MemoryKind::kHost) {
    std::free(data_);
  } else {
    cuda_kinds::release(kind_, data_);
  }
  data_ = nullptr;
  size_ = 0;
}

void Buffer::upload(const void* host, std::size_t bytes) {
  if (bytes > size_) throw std::out_of_range("Buffer::upload past the end");
  copy_memory(kind_, data_, host, bytes);
}

void Buffer::download(void* host, std::size_t bytes) const {
  if (bytes > size_) throw std::out_of_range("Buffer::download past the end");
  copy_memory(kind_, host, data_, bytes);
}

std::vector<unsigned char> Buffer::download() const {
  std::vector<unsigned char> bytes(size_);
  download(bytes.data(), size_);
  return bytes;
}

void Buffer::fill(unsigned char value) {
  if (kind_ == MemoryKind::kHost) {
    std::memset(data_, value, size_);
  } else {
    cuda_kinds::fill(data_, value, size_);
  }
}

}  // namespace gddt_test
