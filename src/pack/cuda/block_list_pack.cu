// The block-list kernels that pack: one line of the instance table in kernels.hpp.
#include "pack/cuda/block_list_kernels.cuh"

namespace gddt::pack::cuda_impl {

GDDT_BLOCK_LIST_INSTANCES(GDDT_DEFINE_INSTANCES, false)

}  // namespace gddt::pack::cuda_impl
