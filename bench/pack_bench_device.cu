// What gddt-bench-pack runs on the GPU besides gddt, and its checks (pack_bench_device.cuh).
#include "pack_bench_device.cuh"

#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "gddt/gddt_mpi.h"
#include "pack_bench_cases.hpp"

namespace gddt_bench::pack {

// ---- device work -----------------------------------------------------------------------------------

namespace {

template <typename Element>
__global__ void naive_pack(const char* typed, Element* packed, unsigned n, NaiveMap m) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  std::int64_t offset = m.base;
  if (m.table != nullptr) {
    offset += static_cast<std::int64_t>(i / m.table_len) * m.extent + m.table[i % m.table_len];
  } else {
    unsigned rest = i;
    for (int d = 0; d < m.ndims; ++d) {
      offset += static_cast<std::int64_t>(rest % m.counts[d]) * m.strides[d];
      rest /= m.counts[d];
    }
  }
  packed[i] = *reinterpret_cast<const Element*>(typed + offset);
}

__global__ void fill_pattern(unsigned char* bytes, std::int64_t n, unsigned seed) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    bytes[i] = static_cast<unsigned char>((i * 2654435761u + seed) >> 11);
  }
}

}  // namespace

void fill(char* bytes, std::int64_t n, unsigned seed, cudaStream_t s) {
  fill_pattern<<<1024, 256, 0, s>>>(reinterpret_cast<unsigned char*>(bytes), n, seed);
  CUDA_OR_DIE(cudaGetLastError());
}

void launch_naive(const Case& c, const char* typed, char* packed, cudaStream_t s) {
  const auto n = static_cast<unsigned>(c.packed_bytes / (c.naive.table != nullptr ? 4 : c.element_bytes));
  const unsigned blocks = (n + 255) / 256;
  if (c.naive.table == nullptr && c.element_bytes == 8) {
    naive_pack<<<blocks, 256, 0, s>>>(typed, reinterpret_cast<unsigned long long*>(packed), n, c.naive);
  } else {
    naive_pack<<<blocks, 256, 0, s>>>(typed, reinterpret_cast<unsigned*>(packed), n, c.naive);
  }
}

// ---- checks ----------------------------------------------------------------------------------------

std::vector<char> to_host(const char* device, std::int64_t bytes) {
  std::vector<char> host(static_cast<std::size_t>(bytes));
  CUDA_OR_DIE(cudaMemcpy(host.data(), device, host.size(), cudaMemcpyDeviceToHost));
  return host;
}

namespace {

bool same_bytes(const char* what, const Case& c, const std::vector<char>& got, const std::vector<char>& expected) {
  const auto bad = std::mismatch(got.begin(), got.end(), expected.begin());
  if (bad.first == got.end()) return true;
  std::printf("WRONG %s of %s (block %lld, packed %lld, count %d): byte %lld is %d, expected %d\n", what,
              c.label.c_str(), static_cast<long long>(c.block_bytes), static_cast<long long>(c.packed_bytes), c.count,
              static_cast<long long>(bad.first - got.begin()), *bad.first & 0xff, *bad.second & 0xff);
  return false;
}

}  // namespace

bool check(const Case& c, const Buffers& b, cudaStream_t s) {
  const std::int64_t n = c.packed_bytes;
  fill(b.typed, c.span_bytes, 1, s);
  fill(b.unpacked, c.span_bytes, 2, s);
  CUDA_OR_DIE(cudaStreamSynchronize(s));
  std::vector<char> typed_host = to_host(b.typed, c.span_bytes);
  std::vector<char> unpacked_host = to_host(b.unpacked, c.span_bytes);
  std::vector<char> reference(static_cast<std::size_t>(n));
  int position = 0;
  MPI_Pack(typed_host.data(), c.count, c.type, reference.data(), static_cast<int>(n), &position, MPI_COMM_SELF);
  position = 0;
  MPI_Unpack(reference.data(), static_cast<int>(n), &position, unpacked_host.data(), c.count, c.type, MPI_COMM_SELF);

  const gddt_status_t packed = gddt_pack_window(c.type, c.count, b.typed, b.packed, 0, n, s);
  const gddt_status_t unpacked = gddt_unpack_window(c.type, c.count, b.unpacked, b.packed, 0, n, s);
  CUDA_OR_DIE(cudaStreamSynchronize(s));
  if (packed != GDDT_OK || unpacked != GDDT_OK) {
    std::printf("WRONG %s: gddt_pack_window: %s, gddt_unpack_window: %s\n", c.label.c_str(),
                gddt_status_string(packed), gddt_status_string(unpacked));
    return false;
  }
  bool ok = same_bytes("gddt pack", c, to_host(b.packed, n), reference);
  ok = same_bytes("gddt unpack", c, to_host(b.unpacked, c.span_bytes), unpacked_host) && ok;
  launch_naive(c, b.typed, b.copy, s);
  CUDA_OR_DIE(cudaStreamSynchronize(s));
  ok = same_bytes("naive pack", c, to_host(b.copy, n), reference) && ok;
  if (c.cpy2d.possible) {
    CUDA_OR_DIE(cudaMemcpy2DAsync(b.copy, c.cpy2d.width, b.typed + c.cpy2d.offset, c.cpy2d.pitch, c.cpy2d.width,
                                  c.cpy2d.height, cudaMemcpyDeviceToDevice, s));
    CUDA_OR_DIE(cudaStreamSynchronize(s));
    ok = same_bytes("cpy2d", c, to_host(b.copy, n), reference) && ok;
  }
  return ok;
}

}  // namespace gddt_bench::pack
