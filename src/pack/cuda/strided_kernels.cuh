// The strided kernels, alone and in sets (kernels.hpp): a word's typed offset follows from the
// window's strided shape. Compiled by strided_pack.cu and strided_unpack.cu.
#pragma once

#include "pack/cuda/kernels.cuh"

namespace gddt::pack::cuda_impl {

template <int W, int kDims, bool kUnpack, typename Index>
__device__ __forceinline__ void move_strided(const StridedArgs<Index>& a) {
  move_words<W, kWordsPerThread<W>, kUnpack, kThreadsPerBlock, Reads::kCached>(
      a.window, whole_grid(), [&a](Index word) { return strided_offset<kDims>(a, word); });
}

template <int W, int kDims, bool kUnpack, typename Index>
__global__ void __launch_bounds__(kThreadsPerBlock) strided_kernel(const __grid_constant__ StridedArgs<Index> a) {
  move_strided<W, kDims, kUnpack>(a);
}

template <int W, int kDims, bool kUnpack, typename Index>
__global__ void __launch_bounds__(kThreadsPerBlock)
    strided_set_kernel(const __grid_constant__ WindowSet<StridedArgs<Index>> set) {
  move_strided<W, kDims, kUnpack>(set.windows[blockIdx.y]);
}

template <int W, int kDims, bool kUnpack, typename Index>
Kernel<StridedArgs<Index>> strided_instance() {
  return strided_kernel<W, kDims, kUnpack, Index>;
}

template <int W, int kDims, bool kUnpack>
Kernel<WindowSet<StridedArgs<std::uint32_t>>> strided_set_instance() {
  return strided_set_kernel<W, kDims, kUnpack, std::uint32_t>;
}

}  // namespace gddt::pack::cuda_impl
