// The OpenCL C source of the pack and unpack kernels and the layout table they read.
#pragma once

#include <cstdint>
#include <vector>

#include "type/layout.hpp"

namespace gddt::pack::opencl {

// The program's source: for every canonical shape (contiguous, strided, block list), direction
// and word width (1, 2, 4, 8, 16 bytes) a kernel named <pack|unpack>_<shape>_<width>, in which
// each work-item moves words of the window, the packed position mapped to the typed offset by
// the layout table.
extern const char* const kProgramSource;

// Kernel names' shape part, indexed like the shapes the backend launches.
enum class KernelShape { kContiguous, kStrided, kBlockList };
constexpr int kKernelShapes = 3;
constexpr int kWordWidths = 5;  // 1, 2, 4, 8, 16 bytes: index i is width 1 << i

// The layout as the kernels read it, 64-bit words: a header (element size, extent, group
// bytes, pieces, repeat dimensions, then the repeats' counts and strides), then each piece
// (offset, block, dimensions, counts, strides, packed begin in its group).
std::vector<std::int64_t> layout_table(const type::Layout& layout);

}  // namespace gddt::pack::opencl
