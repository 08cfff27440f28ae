// The piece tables of block-list layouts on the GPUs: built from the layout and uploaded on
// first use, once per layout and device (the only copy of descriptors the CUDA backend makes),
// kept in the layout's CUDA slot, in the device pool's memory, and given back with the layout.
#pragma once

#include <cuda_runtime.h>

#include "core/status.hpp"
#include "pack/cuda/plan.hpp"
#include "type/layout.hpp"

namespace gddt::pack::cuda_impl {

// The table of `layout` on `device`, its upload queued on `stream` at its first use, for work the
// caller queues on `stream` next (ordered after the upload).
Status device_piece_table(const type::Layout& layout, int device, cudaStream_t stream, PieceTable* table);

// The same for the resident kernel, which no stream orders: the upload is done when this returns.
Status resident_piece_table(const type::Layout& layout, int device, cudaStream_t stream, PieceTable* table);

// Backend::prepare: where `layout` is a block list, its table on `device` made now and its upload
// waited for, on a stream of its own that is not ordered after the program's work: a table left
// uploading would keep its pinned image until a use on the GPU, and MPI_Type_free would wait for
// the copy. In relaxed capture mode: another thread's graph capture in global mode would refuse
// the pool's allocations and be broken by them.
Status prepare_piece_table(const type::Layout& layout, int device);

}  // namespace gddt::pack::cuda_impl
