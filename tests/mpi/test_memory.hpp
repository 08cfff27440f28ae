// Buffers of the memory kinds gddt serves (host, pinned, device, managed) for tests, with
// copies to and from host vectors so results can be compared on the host. Everything CUDA
// lives in test_memory_cuda.cpp, compiled only with CUDA; test_memory_none.cpp stands in
// otherwise and offers host memory only.
#pragma once

#include <cstddef>
#include <string>

namespace gddt_test {

enum class MemoryKind { kHost, kPinned, kDevice, kManaged };

// "host", "pinned", "device", "managed".
const char* memory_kind_name(MemoryKind kind);
bool parse_memory_kind(const std::string& text, MemoryKind* kind);

// Whether buffers of `kind` can be had here; if not, *why says so.
bool memory_kind_available(MemoryKind kind, std::string* why);

class TestBuffer {
 public:
  TestBuffer(MemoryKind kind, std::size_t bytes);  // aborts when the memory cannot be had
  ~TestBuffer();
  TestBuffer(const TestBuffer&) = delete;
  TestBuffer& operator=(const TestBuffer&) = delete;

  unsigned char* data() const { return data_; }
  std::size_t size() const { return bytes_; }
  // Copies `bytes` bytes between the start of this buffer and host memory.
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;

 private:
  MemoryKind kind_;
  std::size_t bytes_;
  unsigned char* data_ = nullptr;
};

}  // namespace gddt_test
