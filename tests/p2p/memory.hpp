// Test buffers of every memory kind gddt classifies. All test buffers come from alloc_buffer;
// host code never dereferences them: whole images move in and out with upload/download, so a
// test reads the same for device memory as for host memory.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gddt_test::p2p {

enum class MemoryKind { kHost, kDevice, kManaged, kPinned };

const char* memory_kind_name(MemoryKind kind);

// Owns a block of one memory kind; move-only.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  MemoryKind kind() const { return kind_; }

  // Copies `bytes` into the buffer at `offset` / out of it from `offset`.
  void upload(const unsigned char* bytes, std::size_t count, std::size_t offset = 0);
  std::vector<unsigned char> download(std::size_t offset, std::size_t count) const;
  std::vector<unsigned char> download() const { return download(0, size_); }

 private:
  friend Buffer alloc_buffer(MemoryKind kind, std::size_t bytes);
  Buffer(MemoryKind kind, unsigned char* data, std::size_t size)
      : kind_(kind), data_(data), size_(size) {}
  void release();

  MemoryKind kind_ = MemoryKind::kHost;
  unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

// The one allocation helper of the suite. Throws std::runtime_error when the memory cannot be
// had.
Buffer alloc_buffer(MemoryKind kind, std::size_t bytes);

// Makes `kind` usable on this process (selects GPU `local_rank` modulo the GPU count for the
// CUDA kinds). Returns an empty string when it is, otherwise why not.
std::string prepare_memory(MemoryKind kind, int local_rank);

}  // namespace gddt_test::p2p
