// The hand-written versions' fused pack and unpack kernels: every box of a list in one launch,
// between a 3-D C-order array and a contiguous buffer (the way users replace one
// cudaMemcpy2D or one kernel per halo region). Elements are 8 or 16 bytes. Queued on the legacy
// default stream, not waited for.
#pragma once

#include "boxes.hpp"

namespace apps {

void pack_boxes(const void* array, const Extent& dims, const BoxList& boxes, void* packed, int element_bytes);
void unpack_boxes(void* array, const Extent& dims, const BoxList& boxes, const void* packed, int element_bytes);

}  // namespace apps
