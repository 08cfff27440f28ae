// The buffers one rank uses for one table: the user's typed and contiguous buffers in the
// memory under test, and the staging buffers that the hand-written methods need (made on
// first use, so a host-only run never touches CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "options.hpp"

namespace gddt::bench {

class Memory {
 public:
  enum class Kind { kNone, kDevice, kPinned, kPageable };

  Memory() = default;
  Memory(Kind kind, std::size_t bytes);
  Memory(Memory&& other) noexcept;
  Memory& operator=(Memory&& other) noexcept;
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  ~Memory();

  char* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool on_device() const { return kind_ == Kind::kDevice; }

  // Copies between this buffer and host memory (cudaMemcpy for device memory).
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;

 private:
  void release();

  Kind kind_ = Kind::kNone;
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

Memory::Kind user_memory_kind(MemoryKind memory);

class Workspace {
 public:
  // Largest extent and packed size among the table's types.
  Workspace(MemoryKind memory, std::size_t extent, std::size_t packed);

  MemoryKind memory() const { return memory_; }
  bool on_device() const { return memory_ == MemoryKind::kDevice; }

  Memory& typed_send() { return typed_send_; }
  Memory& typed_recv() { return typed_recv_; }
  Memory& contig_send() { return contig_send_; }
  Memory& contig_recv() { return contig_recv_; }

  Memory& host_typed();     // pinned, extent bytes: cpy2d's host copy of the typed buffer
  Memory& device_packed();  // device, packed bytes: the pipeline's packed data
  Memory& host_packed();    // host, packed bytes (pinned when this rank's buffers are on the device)

 private:
  MemoryKind memory_;
  std::size_t extent_;
  std::size_t packed_;
  Memory typed_send_, typed_recv_, contig_send_, contig_recv_;
  Memory host_typed_, device_packed_, host_packed_;
};

// The bytes a rank's buffers hold before a test: word i = a hash of i mixed with `seed`.
std::vector<std::uint32_t> pattern_words(std::size_t bytes, std::uint32_t seed);

}  // namespace gddt::bench
