// What gddt-bench-pack runs on the GPU besides gddt, and its checks: filled buffers, the naive
// kernel, the buffers of every case, and each method's bytes against MPI_Pack's.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "pack_bench_cases.hpp"

#define CUDA_OR_DIE(call)                                                                      \
  do {                                                                                         \
    const cudaError_t error_ = (call);                                                         \
    if (error_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(error_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                            \
    }                                                                                          \
  } while (0)

namespace gddt_bench::pack {

void fill(char* bytes, std::int64_t n, unsigned seed, cudaStream_t s);
void launch_naive(const Case& c, const char* typed, char* packed, cudaStream_t s);
std::vector<char> to_host(const char* device, std::int64_t bytes);

// Allocated once for the largest case: gddt caches the address ranges of device memory, so a
// benchmark freeing and reallocating buffers would measure its re-classification (and a host
// allocation landing on freed device addresses would be taken for device memory).
struct Buffers {
  char* typed = nullptr;     // the data
  char* unpacked = nullptr;  // unpack target
  char* packed = nullptr;
  char* copy = nullptr;      // second packed buffer: D2D destination, other methods' results
  std::int64_t* table = nullptr;  // the naive kernel's offsets

  explicit Buffers(const std::vector<Case>& cases) {
    std::size_t span = 0, packed_bytes = 0, table_len = 1;
    for (const Case& c : cases) {
      span = std::max(span, static_cast<std::size_t>(c.span_bytes));
      packed_bytes = std::max(packed_bytes, static_cast<std::size_t>(c.packed_bytes));
      table_len = std::max(table_len, c.naive_table.size());
    }
    CUDA_OR_DIE(cudaMalloc(&typed, span));
    CUDA_OR_DIE(cudaMalloc(&unpacked, span));
    CUDA_OR_DIE(cudaMalloc(&packed, packed_bytes));
    CUDA_OR_DIE(cudaMalloc(&copy, packed_bytes));
    CUDA_OR_DIE(cudaMalloc(&table, table_len * sizeof(std::int64_t)));
  }
  ~Buffers() {
    for (void* p : {static_cast<void*>(typed), static_cast<void*>(unpacked), static_cast<void*>(packed),
                    static_cast<void*>(copy), static_cast<void*>(table)}) {
      cudaFree(p);
    }
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
};

// gddt's pack and unpack against MPI_Pack/MPI_Unpack of host copies; the baselines' packed
// bytes against MPI_Pack's. Leaves `typed` filled and `packed` holding its packed stream.
bool check(const Case& c, const Buffers& b, cudaStream_t s);

}  // namespace gddt_bench::pack
