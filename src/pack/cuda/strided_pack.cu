// The strided kernels that pack: one line of the instance table in kernels.hpp.
#include "pack/cuda/strided_kernels.cuh"

namespace gddt::pack::cuda_impl {

GDDT_STRIDED_INSTANCES(GDDT_DEFINE_INSTANCES, false)

}  // namespace gddt::pack::cuda_impl
