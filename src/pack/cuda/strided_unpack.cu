// The strided kernels that unpack: one line of the instance table in kernels.hpp.
#include "pack/cuda/strided_kernels.cuh"

namespace gddt::pack::cuda_impl {

GDDT_STRIDED_INSTANCES(GDDT_DEFINE_INSTANCES, true)

}  // namespace gddt::pack::cuda_impl
