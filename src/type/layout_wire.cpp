#include "type/layout_wire.hpp"

#include <cstdint>
#include <cstring>

namespace gddt::type {

namespace {

// The fixed part: everything of a layout but its pieces.
struct Fixed {
  std::int32_t shape;
  std::int32_t nrepeat;
  std::int64_t npieces;
  std::array<Dim, kMaxDims> repeat;
  std::int64_t group_bytes, size, lb, extent, true_lb, true_ub;
  std::uint32_t alignment;
};

template <typename T>
void append(const T& value, std::vector<char>* out) {
  const char* bytes = reinterpret_cast<const char*>(&value);
  out->insert(out->end(), bytes, bytes + sizeof value);
}

}  // namespace

void append_layout(const Layout& layout, std::vector<char>* out) {
  Fixed fixed{};
  fixed.shape = static_cast<std::int32_t>(layout.shape);
  fixed.nrepeat = layout.nrepeat;
  fixed.npieces = static_cast<std::int64_t>(layout.pieces.size());
  fixed.repeat = layout.repeat;
  fixed.group_bytes = layout.group_bytes;
  fixed.size = layout.size;
  fixed.lb = layout.lb;
  fixed.extent = layout.extent;
  fixed.true_lb = layout.true_lb;
  fixed.true_ub = layout.true_ub;
  fixed.alignment = layout.alignment;
  append(fixed, out);
  for (const StridedBlock& piece : layout.pieces) append(piece, out);
}

Status read_layout(const char* data, std::size_t size, Layout* layout, std::size_t* used) {
  Fixed fixed;
  if (size < sizeof fixed) return GDDT_ERR_INVALID_ARG;
  std::memcpy(&fixed, data, sizeof fixed);
  if (fixed.npieces < 0 || static_cast<std::size_t>(fixed.npieces) > kMaxPieces || fixed.nrepeat < 0 ||
      fixed.nrepeat > kMaxDims || fixed.shape < static_cast<std::int32_t>(Shape::kEmpty) ||
      fixed.shape > static_cast<std::int32_t>(Shape::kBlockList))
    return GDDT_ERR_INVALID_ARG;
  const std::size_t pieces_bytes = static_cast<std::size_t>(fixed.npieces) * sizeof(StridedBlock);
  if (size - sizeof fixed < pieces_bytes) return GDDT_ERR_INVALID_ARG;
  layout->shape = static_cast<Shape>(fixed.shape);
  layout->nrepeat = fixed.nrepeat;
  layout->repeat = fixed.repeat;
  layout->size = fixed.size;
  layout->lb = fixed.lb;
  layout->extent = fixed.extent;
  layout->true_lb = fixed.true_lb;
  layout->true_ub = fixed.true_ub;
  layout->alignment = fixed.alignment;
  layout->pieces.resize(static_cast<std::size_t>(fixed.npieces));
  if (pieces_bytes > 0) std::memcpy(layout->pieces.data(), data + sizeof fixed, pieces_bytes);
  layout->piece_begin.assign(1, 0);
  for (const StridedBlock& piece : layout->pieces) {
    if (piece.ndims < 0 || piece.ndims > kMaxDims || piece.block < 0) return GDDT_ERR_INVALID_ARG;
    layout->piece_begin.push_back(layout->piece_begin.back() + piece.packed_bytes());
  }
  layout->group_bytes = layout->piece_begin.back();
  if (layout->group_bytes != fixed.group_bytes) return GDDT_ERR_INVALID_ARG;
  *used = sizeof fixed + pieces_bytes;
  return GDDT_OK;
}

}  // namespace gddt::type
