#include "pack/opencl/kernels.hpp"

namespace gddt::pack::opencl {

// The table's geometry, shared with the source below through its #defines.
static_assert(type::kMaxDims == 8, "the kernels' table layout assumes 8 dimensions");
constexpr int kHeaderWords = 5 + 2 * type::kMaxDims;
constexpr int kPieceWords = 4 + 2 * type::kMaxDims;

const char* const kProgramSource = R"CLC(
#define MAX_DIMS 8
#define HEADER (5 + 2 * MAX_DIMS)
#define PIECE (4 + 2 * MAX_DIMS)
#define T_SIZE 0
#define T_EXTENT 1
#define T_GROUP 2
#define T_PIECES 3
#define T_NREPEAT 4
#define T_REPEAT_COUNT 5
#define T_REPEAT_STRIDE (5 + MAX_DIMS)
#define P_OFFSET 0
#define P_BLOCK 1
#define P_NDIMS 2
#define P_COUNT 3
#define P_STRIDE (3 + MAX_DIMS)
#define P_BEGIN (3 + 2 * MAX_DIMS)

/* Offset of byte `r` of a piece's packed stream, relative to its group's origin. */
inline long piece_offset(__global const long* p, long r) {
  const long block = p[P_BLOCK];
  long b = r / block;
  long offset = p[P_OFFSET] + (r - b * block);
  const int ndims = (int)p[P_NDIMS];
  for (int d = 0; d < ndims; ++d) {
    const long count = p[P_COUNT + d];
    const long index = b % count;
    b /= count;
    offset += index * p[P_STRIDE + d];
  }
  return offset;
}

inline long offset_contiguous(__global const long* t, long pos) {
  const long element = pos / t[T_SIZE];
  return element * t[T_EXTENT] + t[HEADER + P_OFFSET] + (pos - element * t[T_SIZE]);
}

inline long offset_strided(__global const long* t, long pos) {
  const long element = pos / t[T_SIZE];
  return element * t[T_EXTENT] + piece_offset(t + HEADER, pos - element * t[T_SIZE]);
}

inline long offset_block_list(__global const long* t, long pos) {
  const long element = pos / t[T_SIZE];
  const long in_element = pos - element * t[T_SIZE];
  long group = in_element / t[T_GROUP];
  const long in_group = in_element - group * t[T_GROUP];
  long offset = element * t[T_EXTENT];
  const int nrepeat = (int)t[T_NREPEAT];
  for (int d = 0; d < nrepeat; ++d) {
    const long count = t[T_REPEAT_COUNT + d];
    const long index = group % count;
    group /= count;
    offset += index * t[T_REPEAT_STRIDE + d];
  }
  /* The last piece beginning at or before the position. */
  long low = 0, high = t[T_PIECES] - 1;
  while (low < high) {
    const long middle = (low + high + 1) / 2;
    if (t[HEADER + middle * PIECE + P_BEGIN] <= in_group) low = middle; else high = middle - 1;
  }
  __global const long* p = t + HEADER + low * PIECE;
  return offset + piece_offset(p, in_group - p[P_BEGIN]);
}

/* `first` is the window's first packed byte, `words` its length in words of WORD; the typed
   buffer's byte 0 of the datatype is at `origin` in `typed`. */
#define KERNELS(SHAPE, WORD, WIDTH)                                                            \
  __kernel void pack_##SHAPE##_##WIDTH(__global const long* t, __global const uchar* typed,   \
                                       long origin, __global WORD* packed, long first,         \
                                       long words) {                                           \
    for (long i = get_global_id(0); i < words; i += get_global_size(0)) {                      \
      const long at = origin + offset_##SHAPE(t, first + i * WIDTH);                           \
      packed[i] = *(__global const WORD*)(typed + at);                                         \
    }                                                                                          \
  }                                                                                            \
  __kernel void unpack_##SHAPE##_##WIDTH(__global const long* t, __global uchar* typed,       \
                                         long origin, __global const WORD* packed, long first, \
                                         long words) {                                         \
    for (long i = get_global_id(0); i < words; i += get_global_size(0)) {                      \
      const long at = origin + offset_##SHAPE(t, first + i * WIDTH);                           \
      *(__global WORD*)(typed + at) = packed[i];                                               \
    }                                                                                          \
  }

#define WIDTHS(SHAPE) \
  KERNELS(SHAPE, uchar, 1)   \
  KERNELS(SHAPE, ushort, 2)  \
  KERNELS(SHAPE, uint, 4)    \
  KERNELS(SHAPE, ulong, 8)   \
  KERNELS(SHAPE, uint4, 16)

WIDTHS(contiguous)
WIDTHS(strided)
WIDTHS(block_list)
)CLC";

std::vector<std::int64_t> layout_table(const type::Layout& layout) {
  const std::size_t pieces = layout.pieces.size();
  std::vector<std::int64_t> table(kHeaderWords + pieces * kPieceWords, 0);
  table[0] = layout.size;
  table[1] = layout.extent;
  table[2] = layout.group_bytes;
  table[3] = static_cast<std::int64_t>(pieces);
  table[4] = layout.nrepeat;
  for (int d = 0; d < type::kMaxDims; ++d) {
    table[5 + d] = layout.repeat[d].count;
    table[5 + type::kMaxDims + d] = layout.repeat[d].stride;
  }
  for (std::size_t i = 0; i < pieces; ++i) {
    const type::StridedBlock& piece = layout.pieces[i];
    std::int64_t* p = &table[kHeaderWords + i * kPieceWords];
    p[0] = piece.offset;
    p[1] = piece.block;
    p[2] = piece.ndims;
    for (int d = 0; d < type::kMaxDims; ++d) {
      p[3 + d] = piece.dims[d].count;
      p[3 + type::kMaxDims + d] = piece.dims[d].stride;
    }
    p[3 + 2 * type::kMaxDims] = layout.piece_begin[i];
  }
  return table;
}

}  // namespace gddt::pack::opencl
