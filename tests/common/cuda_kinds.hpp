// What Buffer needs of the CUDA runtime for the kinds other than host memory. CMake compiles
// cuda_kinds_cuda.cpp in builds with CUDA and cuda_kinds_none.cpp in builds without, so this is
// the one place where the two builds differ.
#pragma once

#include <cstddef>
#include <string>

#include "memory_buffer.hpp"

namespace gddt_test::cuda_kinds {

std::string prepare(MemoryKind kind, int local_rank);  // as prepare_memory_kind
void* allocate(MemoryKind kind, std::size_t bytes);    // throws std::runtime_error
void release(MemoryKind kind, void* data) noexcept;
void copy(void* to, const void* from, std::size_t bytes);
void fill(void* data, unsigned char value, std::size_t bytes);

}  // namespace gddt_test::cuda_kinds
