// The buffers one rank uses for one table: the user's typed and contiguous buffers in the
// memory under test, and the staging buffers that the hand-written methods need (made on
// first use, so a host-only run never touches CUDA).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memory_buffer.hpp"
#include "options.hpp"

namespace gddt::bench {

using gddt_test::Buffer;

class Workspace {
 public:
  // Largest extent and packed size among the table's types.
  Workspace(MemoryKind memory, std::size_t extent, std::size_t packed);

  MemoryKind memory() const { return memory_; }
  bool on_device() const { return memory_ == MemoryKind::kDevice; }

  Buffer& typed_send() { return typed_send_; }
  Buffer& typed_recv() { return typed_recv_; }
  Buffer& contig_send() { return contig_send_; }
  Buffer& contig_recv() { return contig_recv_; }

  Buffer& host_typed();     // pinned, extent bytes: cpy2d's host copy of the typed buffer
  Buffer& device_packed();  // device, packed bytes: the pipeline's packed data
  Buffer& host_packed();    // host, packed bytes (pinned when this rank's buffers are on the device)

 private:
  MemoryKind memory_;
  std::size_t extent_;
  std::size_t packed_;
  Buffer typed_send_, typed_recv_, contig_send_, contig_recv_;
  Buffer host_typed_, device_packed_, host_packed_;
};

// The bytes a rank's buffers hold before a test: word i = a hash of i mixed with `seed`.
std::vector<std::uint32_t> pattern_words(std::size_t bytes, std::uint32_t seed);

}  // namespace gddt::bench
