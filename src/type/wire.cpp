#include "type/wire.hpp"

#include <cstring>
#include <type_traits>

namespace gddt::type {
namespace {

static_assert(std::is_trivially_copyable<StridedBlock>::value, "pieces travel as their bytes");

struct WireHead {
  std::int32_t shape = 0;
  std::int32_t nrepeat = 0;
  std::int64_t pieces = 0;
  std::array<Dim, kMaxDims> repeat{};
  std::int64_t group_bytes = 0;
  std::int64_t size = 0;
  std::int64_t lb = 0;
  std::int64_t extent = 0;
  std::int64_t true_lb = 0;
  std::int64_t true_ub = 0;
  std::uint32_t alignment = 1;
};

std::size_t wire_bytes(std::size_t pieces) {
  return sizeof(WireHead) + pieces * sizeof(StridedBlock) + (pieces + 1) * sizeof(std::int64_t);
}

}  // namespace

bool encode_layout(const Layout& layout, std::size_t most_pieces, std::vector<char>* out) {
  const std::size_t pieces = layout.pieces.size();
  if (pieces > most_pieces || layout.piece_begin.size() != pieces + 1) return false;
  WireHead head;
  head.shape = static_cast<std::int32_t>(layout.shape);
  head.nrepeat = layout.nrepeat;
  head.pieces = static_cast<std::int64_t>(pieces);
  head.repeat = layout.repeat;
  head.group_bytes = layout.group_bytes;
  head.size = layout.size;
  head.lb = layout.lb;
  head.extent = layout.extent;
  head.true_lb = layout.true_lb;
  head.true_ub = layout.true_ub;
  head.alignment = layout.alignment;
  const std::size_t at = out->size();
  out->resize(at + wire_bytes(pieces));
  char* cursor = out->data() + at;
  std::memcpy(cursor, &head, sizeof head);
  cursor += sizeof head;
  if (pieces > 0) std::memcpy(cursor, layout.pieces.data(), pieces * sizeof(StridedBlock));
  cursor += pieces * sizeof(StridedBlock);
  std::memcpy(cursor, layout.piece_begin.data(), (pieces + 1) * sizeof(std::int64_t));
  return true;
}

Status decode_layout(const char* bytes, std::size_t size, Layout* out) {
  WireHead head;
  if (size < sizeof head) return GDDT_ERR_INTERNAL;
  std::memcpy(&head, bytes, sizeof head);
  const bool known_shape = head.shape >= static_cast<std::int32_t>(Shape::kEmpty) &&
                           head.shape <= static_cast<std::int32_t>(Shape::kBlockList);
  if (!known_shape || head.pieces < 0 || head.nrepeat < 0 || head.nrepeat > kMaxDims ||
      static_cast<std::uint64_t>(head.pieces) > kMaxPieces || size != wire_bytes(static_cast<std::size_t>(head.pieces)))
    return GDDT_ERR_INTERNAL;
  const auto pieces = static_cast<std::size_t>(head.pieces);
  const char* cursor = bytes + sizeof head;
  Layout layout;
  layout.shape = static_cast<Shape>(head.shape);
  layout.nrepeat = head.nrepeat;
  layout.repeat = head.repeat;
  layout.group_bytes = head.group_bytes;
  layout.size = head.size;
  layout.lb = head.lb;
  layout.extent = head.extent;
  layout.true_lb = head.true_lb;
  layout.true_ub = head.true_ub;
  layout.alignment = head.alignment;
  layout.pieces.resize(pieces);
  if (pieces > 0) std::memcpy(layout.pieces.data(), cursor, pieces * sizeof(StridedBlock));
  cursor += pieces * sizeof(StridedBlock);
  layout.piece_begin.resize(pieces + 1);
  std::memcpy(layout.piece_begin.data(), cursor, (pieces + 1) * sizeof(std::int64_t));
  for (const StridedBlock& piece : layout.pieces)
    if (piece.ndims < 0 || piece.ndims > kMaxDims) return GDDT_ERR_INTERNAL;
  *out = std::move(layout);
  return GDDT_OK;
}

}  // namespace gddt::type
