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

// The fields a layout and its head share by name, copied either way.
template <typename From, typename To>
void copy_shared_fields(const From& from, To* to) {
  to->nrepeat = from.nrepeat;
  to->repeat = from.repeat;
  to->group_bytes = from.group_bytes;
  to->size = from.size;
  to->lb = from.lb;
  to->extent = from.extent;
  to->true_lb = from.true_lb;
  to->true_ub = from.true_ub;
  to->alignment = from.alignment;
}

std::size_t wire_bytes(std::size_t pieces) {
  return sizeof(WireHead) + pieces * sizeof(StridedBlock) + (pieces + 1) * sizeof(std::int64_t);
}

}  // namespace

bool encode_layout(const Layout& layout, std::size_t most_pieces, std::vector<char>* out) {
  const std::size_t pieces = layout.pieces.size();
  if (pieces > most_pieces || layout.piece_begin.size() != pieces + 1) return false;
  WireHead head;
  head.shape = static_cast<std::int32_t>(layout.shape);
  head.pieces = static_cast<std::int64_t>(pieces);
  copy_shared_fields(layout, &head);
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
  copy_shared_fields(head, &layout);
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
