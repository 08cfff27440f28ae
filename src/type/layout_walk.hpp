// for_each_run: the packed-stream walker shared by the host backend and the tests.
// Included from layout.hpp; not meant to be included alone.
#pragma once

#include <algorithm>

namespace gddt::type {

namespace walk_detail {

// Offset of the multi-index `linear` (dims[0] fastest) and fills idx with its digits.
inline std::int64_t decompose(std::int64_t linear, const std::array<Dim, kMaxDims>& dims,
                              int ndims, std::array<std::int64_t, kMaxDims>* idx) {
  std::int64_t off = 0;
  for (int d = 0; d < ndims; ++d) {
    (*idx)[d] = linear % dims[d].count;
    linear /= dims[d].count;
    off += (*idx)[d] * dims[d].stride;
  }
  return off;
}

// Advances idx by one (dims[0] fastest); returns the change of offset. Wraps to zero after
// the last tuple.
inline std::int64_t advance(const std::array<Dim, kMaxDims>& dims, int ndims,
                            std::array<std::int64_t, kMaxDims>* idx) {
  std::int64_t delta = 0;
  for (int d = 0; d < ndims; ++d) {
    if (++(*idx)[d] < dims[d].count) return delta + dims[d].stride;
    delta -= ((*idx)[d] - 1) * dims[d].stride;
    (*idx)[d] = 0;
  }
  return delta;
}

}  // namespace walk_detail

template <typename Fn>
void for_each_run(const Layout& layout, std::int64_t count, std::int64_t offset,
                  std::int64_t length, Fn&& fn) {
  if (length <= 0 || layout.size <= 0 || count <= 0) return;
  using walk_detail::advance;
  using walk_detail::decompose;

  std::int64_t element = offset / layout.size;
  if (element >= count) return;
  std::int64_t rem = offset % layout.size;
  const std::int64_t group_count = layout.size / layout.group_bytes;
  std::int64_t group = rem / layout.group_bytes;
  std::int64_t in_group = rem % layout.group_bytes;

  std::array<std::int64_t, kMaxDims> repeat_idx{};
  std::int64_t repeat_off = decompose(group, layout.repeat, layout.nrepeat, &repeat_idx);

  std::size_t piece = static_cast<std::size_t>(
      std::upper_bound(layout.piece_begin.begin(), layout.piece_begin.end(), in_group) -
      layout.piece_begin.begin() - 1);
  std::int64_t in_piece = in_group - layout.piece_begin[piece];

  std::int64_t packed = 0;
  while (packed < length) {
    const StridedBlock& p = layout.pieces[piece];
    std::array<std::int64_t, kMaxDims> idx{};
    std::int64_t block_index = in_piece / p.block;
    std::int64_t in_block = in_piece % p.block;
    std::int64_t base = element * layout.extent + repeat_off + p.offset;
    std::int64_t block_off = decompose(block_index, p.dims, p.ndims, &idx);
    const std::int64_t blocks = p.blocks();
    for (; block_index < blocks && packed < length; ++block_index) {
      std::int64_t bytes = std::min(p.block - in_block, length - packed);
      fn(base + block_off + in_block, packed, bytes);
      packed += bytes;
      in_block = 0;
      block_off += advance(p.dims, p.ndims, &idx);
    }
    in_piece = 0;
    if (++piece < layout.pieces.size()) continue;
    piece = 0;
    if (++group < group_count) {
      repeat_off += advance(layout.repeat, layout.nrepeat, &repeat_idx);
      continue;
    }
    group = 0;
    repeat_off = 0;
    repeat_idx.fill(0);
    if (++element >= count) break;
  }
}

}  // namespace gddt::type
