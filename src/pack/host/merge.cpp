#include <cstdint>
#include <cstring>

#include "pack/merge.hpp"
#include "pack/merge_word.hpp"

namespace gddt::pack {

void merge_changed_host(const void* from, void* snapshot, void* to, std::int64_t bytes) {
  const auto* source = static_cast<const unsigned char*>(from);
  auto* seen = static_cast<unsigned char*>(snapshot);
  auto* target = static_cast<unsigned char*>(to);
  std::int64_t at = 0;
  // Whole words where `to` allows them (the library's public copies are page-aligned): unchanged
  // ones, the common case, cost two loads.
  if (reinterpret_cast<std::uintptr_t>(target) % 8 == 0) {
    for (; at + 8 <= bytes; at += 8) {
      std::uint64_t now = 0, before = 0;
      std::memcpy(&now, source + at, 8);
      std::memcpy(&before, seen + at, 8);
      if (now == before) continue;
      std::memcpy(seen + at, &now, 8);
      merge_word::write_changed(now, before, target + at);
    }
  }
  for (; at < bytes; ++at) {
    if (source[at] == seen[at]) continue;
    seen[at] = source[at];
    target[at] = source[at];
  }
}

}  // namespace gddt::pack
