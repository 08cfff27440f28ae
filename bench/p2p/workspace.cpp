#include "workspace.hpp"

namespace gddt::bench {
namespace {

// Host buffers start on a page, so that no measurement depends on where malloc happened to put
// them.
constexpr std::size_t kHostAlignment = 4096;

void ensure(Buffer& slot, MemoryKind kind, std::size_t bytes) {
  if (slot.size() < bytes) slot = Buffer(kind, bytes, kHostAlignment);
}

}  // namespace

Workspace::Workspace(MemoryKind memory, std::size_t extent, std::size_t packed)
    : memory_(memory),
      extent_(extent),
      packed_(packed),
      typed_send_(memory, extent, kHostAlignment),
      typed_recv_(memory, extent, kHostAlignment),
      contig_send_(memory, packed, kHostAlignment),
      contig_recv_(memory, packed, kHostAlignment) {}

Buffer& Workspace::host_typed() {
  ensure(host_typed_, MemoryKind::kPinned, extent_);
  return host_typed_;
}

Buffer& Workspace::device_packed() {
  ensure(device_packed_, MemoryKind::kDevice, packed_);
  return device_packed_;
}

Buffer& Workspace::host_packed() {
  ensure(host_packed_, on_device() ? MemoryKind::kPinned : MemoryKind::kHost, packed_);
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
