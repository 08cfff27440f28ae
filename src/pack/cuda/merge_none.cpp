// merge.hpp's device merge in a build without CUDA.
#include "pack/merge.hpp"

namespace gddt::pack {

Status merge_changed_device(const void*, void*, void*, std::int64_t, gpu::Stream) { return GDDT_ERR_NO_DEVICE; }

}  // namespace gddt::pack
