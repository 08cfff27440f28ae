// MPI handles as hash keys: Open MPI's are pointers, MPICH's integers; the bits are the key either
// way.
#pragma once

#include <cstdint>
#include <cstring>

namespace gddt {

template <typename Handle>
std::uint64_t handle_key(Handle handle) {
  static_assert(sizeof(Handle) <= sizeof(std::uint64_t), "a handle fits a key");
  std::uint64_t key = 0;
  std::memcpy(&key, &handle, sizeof handle);
  return key;
}

}  // namespace gddt
