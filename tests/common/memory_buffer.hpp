// Buffers of every memory kind gddt tells apart (host, pinned, device, managed), for the tests
// and the benchmarks. Host code never dereferences a buffer that may live on a GPU: whole images
// move in and out with upload/download, so a check reads the same for every kind. A build
// without CUDA has host memory only; the other kinds then say why they cannot be had.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gddt_test {

enum class MemoryKind { kHost, kPinned, kDevice, kManaged };

// Every kind. gddt-fuzz-pack --memory mixed draws from it by index, so a seed's buffer kinds
// depend on this order.
inline constexpr MemoryKind kMemoryKinds[] = {MemoryKind::kHost, MemoryKind::kPinned, MemoryKind::kDevice,
                                              MemoryKind::kManaged};

// "host", "pinned", "device", "managed": the words --memory takes.
const char* memory_kind_name(MemoryKind kind);
bool parse_memory_kind(const std::string& text, MemoryKind* kind);

// Copies `bytes` between host memory and memory of `kind` (either way round) that no Buffer owns:
// a window's memory that MPI_Win_allocate made.
void copy_memory(MemoryKind kind, void* to, const void* from, std::size_t bytes);

// Makes `kind` usable in this process: for the CUDA kinds, selects GPU `local_rank` modulo the
// GPU count, for this thread and for every later allocation of device or managed memory (the
// current GPU is per thread). Returns "" when the kind can be had, otherwise why not.
std::string prepare_memory_kind(MemoryKind kind, int local_rank = 0);

// Owns a block of one memory kind; move-only. Failures (memory that cannot be had, a CUDA error)
// throw std::runtime_error.
class Buffer {
 public:
  Buffer() = default;  // holds nothing
  // Host memory starts at a multiple of `host_alignment`, a power of two: malloc's alignment
  // unless a benchmark wants a page, so that where malloc happens to place a buffer does not sway
  // its timings. CUDA aligns the other kinds to 256 bytes at least. A zero-byte buffer still gets
  // an address of its own, which gddt can classify.
  Buffer(MemoryKind kind, std::size_t bytes, std::size_t host_alignment = alignof(std::max_align_t));
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  MemoryKind kind() const { return kind_; }

  // Copy `bytes` bytes between host memory and the start of the buffer. The CUDA kinds go
  // through cudaMemcpy on the legacy default stream, so the copies come after the GPU work that
  // the library left queued there.
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;
  std::vector<unsigned char> download() const;  // the whole buffer
  // Sets every byte to `value` (a poison, say) and returns once it is done, so that work no
  // stream orders after it sees the new bytes too.
  void fill(unsigned char value);

 private:
  void release() noexcept;

  MemoryKind kind_ = MemoryKind::kHost;
  unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace gddt_test
