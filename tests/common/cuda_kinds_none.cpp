// A build without CUDA: none of the CUDA kinds can be had, so no buffer of them ever exists and
// only allocation and preparation are ever asked for.
#include <cstdlib>
#include <stdexcept>

#include "cuda_kinds.hpp"

namespace gddt_test::cuda_kinds {

std::string prepare(MemoryKind kind, int) {
  return std::string(memory_kind_name(kind)) + " memory needs a build with CUDA";
}

void* allocate(MemoryKind kind, std::size_t) { throw std::runtime_error(prepare(kind, 0)); }

void release(MemoryKind, void*) noexcept { std::abort(); }
void copy(void*, const void*, std::size_t) { std::abort(); }
void fill(void*, unsigned char, std::size_t) { std::abort(); }

}  // namespace gddt_test::cuda_kinds
