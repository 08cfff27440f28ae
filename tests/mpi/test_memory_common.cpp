#include "test_memory.hpp"

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
  for (MemoryKind candidate : {MemoryKind::kHost, MemoryKind::kPinned, MemoryKind::kDevice,
                               MemoryKind::kManaged}) {
    if (text == memory_kind_name(candidate)) {
      *kind = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace gddt_test
