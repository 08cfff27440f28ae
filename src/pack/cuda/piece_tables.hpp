// The piece tables of block-list layouts on the GPUs: built from the layout and uploaded on
// first use, synchronously, once per layout and device (the only copy of descriptors the CUDA
// backend makes), kept in the layout's CUDA slot and freed with the layout.
#pragma once

#include <cuda_runtime.h>

#include "core/status.hpp"
#include "pack/cuda/plan.hpp"
#include "type/layout.hpp"

namespace gddt::pack::cuda_impl {

// The table of `layout` on `device`, uploaded on `stream` (and waited for) at its first use.
Status device_piece_table(const type::Layout& layout, int device, cudaStream_t stream, PieceTable* table);

}  // namespace gddt::pack::cuda_impl
