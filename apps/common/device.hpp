// Where an app's arrays live and the few CUDA calls its host code makes. On a usable GPU the
// arrays are device memory and staging buffers pinned host memory; without one (CI machines,
// builds without CUDA) both are host memory and the same code runs on the CPU, so every app is
// tested end to end everywhere. device.cpp is compiled by nvcc where CUDA is built, by the C++
// compiler otherwise.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>

#include "memory_buffer.hpp"

namespace apps {

using gddt_test::Buffer;
using gddt_test::MemoryKind;

struct Place {
  bool gpu = false;
  MemoryKind arrays = MemoryKind::kHost;   // the grids the computation works on
  MemoryKind staging = MemoryKind::kHost;  // hand-written code's host buffers
  std::string why_host;                    // empty on a GPU
};

// `wanted`: "device", "host" or "auto" (a GPU where one is usable). Picks GPU local rank modulo
// the GPUs of the node (the ranks of `comm` that share memory with this one). An unusable
// "device" leaves gpu false and says why.
Place choose_place(const std::string& wanted, MPI_Comm comm);

bool on_gpu();  // as the last choose_place decided

// The calls of the hand-written versions, as users make them: cudaMemcpy and cudaMemcpy2D with
// cudaMemcpyDefault (memcpy on the host), and waiting for the GPU.
void copy(void* to, const void* from, std::size_t bytes);
void copy_2d(void* to, std::size_t to_pitch, const void* from, std::size_t from_pitch, std::size_t width,
             std::size_t height);
void synchronize();  // every kernel and copy queued so far is done (and checked)

}  // namespace apps
