// The apps' loops over their arrays, written once: a kernel where the arrays are on a GPU, plain
// loops on the host otherwise. Included by the files CMake compiles with nvcc where CUDA is
// built (and with the C++ compiler elsewhere); the body is a functor whose call operator is
// APPS_HD (hd.hpp). Kernels go to the legacy default stream and are not waited for.
#pragma once

#include "device.hpp"
#include "hd.hpp"

namespace apps {

#ifdef __CUDACC__
constexpr int kThreads = 256;
constexpr long long kMaxRowBlocks = 65535;  // gridDim.y

template <class F>
__global__ void each_kernel(long long n, F f) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    f(i);
}

template <class F>
__global__ void rows_kernel(long long rows, int columns, F f) {
  const int column = blockIdx.x * blockDim.x + threadIdx.x;
  if (column >= columns) return;
  for (long long row = blockIdx.y; row < rows; row += gridDim.y) f(row, column);
}
#endif

// f(i) for every i < n.
template <class F>
void for_each(long long n, const F& f) {
  if (n <= 0) return;
#ifdef __CUDACC__
  if (on_gpu()) {
    const long long blocks = (n + kThreads - 1) / kThreads;
    each_kernel<<<static_cast<unsigned>(blocks < (1 << 20) ? blocks : (1 << 20)), kThreads>>>(n, f);
    return;
  }
#endif
  for (long long i = 0; i < n; ++i) f(i);
}

// f(row, column) for every row < rows and column < columns: a thread per column of a row, so
// that neighbouring threads touch neighbouring elements of row-major arrays.
template <class F>
void for_each_2d(long long rows, int columns, const F& f) {
  if (rows <= 0 || columns <= 0) return;
#ifdef __CUDACC__
  if (on_gpu()) {
    const dim3 blocks((columns + kThreads - 1) / kThreads,
                      static_cast<unsigned>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks));
    rows_kernel<<<blocks, kThreads>>>(rows, columns, f);
    return;
  }
#endif
  for (long long row = 0; row < rows; ++row)
    for (int column = 0; column < columns; ++column) f(row, column);
}

}  // namespace apps
