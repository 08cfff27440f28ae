#include "mpi/collective_stand_in.hpp"

#include <algorithm>

#include "protocol/transfer.hpp"

namespace gddt::mpi::collective {
namespace {

// Moves one piece's typed bytes from a typed buffer to another of the same layout, through
// packed bytes in `packed`.
Status move_typed(const Piece& piece, const char* from, memory::Kind from_kind, char* to, memory::Kind to_kind,
                  const protocol::Staging& packed) {
  const pack::Window window{piece.layout.get(), piece.count, 0, piece.bytes()};
  Status status = protocol::pack(window, from + piece.offset, from_kind, packed.data(), packed.kind(), nullptr,
                                 protocol::choose(from_kind, packed.kind(), piece.bytes()));
  if (is_error(status)) return status;
  return protocol::unpack(window, to + piece.offset, to_kind, packed.data(), packed.kind(), nullptr,
                          protocol::choose(to_kind, packed.kind(), piece.bytes()));
}

// Copies a piece's span, gaps included, between a buffer of the user's and its stand-in.
Status copy_span(const Piece& piece, const char* from, char* to) {
  const int device = piece.kind.type == GDDT_MEMORY_HOST ? -1 : piece.kind.device;
  return protocol::copy_and_wait(to + piece.span_lb(), from + piece.span_lb(),
                                 static_cast<std::size_t>(piece.span_ub() - piece.span_lb()), device);
}

// Packed staging for the largest piece of `stand_in` that moves through packed bytes: filling
// copies dense pieces span and all, emptying only pieces without gaps.
Status packed_staging(const StandIn& stand_in, bool filling, protocol::Staging* packed) {
  std::int64_t most = 0;
  for (const Piece& piece : stand_in.pieces)
    if (!(filling ? piece.dense() : piece.gapless())) most = std::max(most, piece.bytes());
  if (most == 0) return GDDT_OK;
  return packed->acquire(-1, most);
}

// The pieces of a packed argument, packed into (`into_packed`) or unpacked out of its packed bytes.
// Pieces the GPU moves in one launch each share launches (up to pack::kSetMost a launch) on their
// GPU's stream, waited for once; the others move one by one.
Status move_packed(const StandIn& stand_in, bool into_packed) {
  std::vector<pack::WindowMove> set;
  int set_device = -1;
  gpu::Stream stream = nullptr;
  const auto flush = [&]() -> Status {
    if (set.empty()) return GDDT_OK;
    GDDT_CHECK(protocol::queue_windows(into_packed, set.data(), static_cast<int>(set.size()), set_device, stream));
    set.clear();
    return gpu::stream_wait(stream, {});
  };
  const memory::Kind packed_kind = stand_in.staging.kind();
  for (const Piece& piece : stand_in.pieces) {
    counters::add(stand_in.moved, piece.bytes());
    const pack::Window window{piece.layout.get(), piece.count, 0, piece.bytes()};
    char* typed = const_cast<char*>(stand_in.user) + piece.offset;
    char* packed = static_cast<char*>(stand_in.staging.data()) + piece.packed_at;
    const protocol::Way way = protocol::choose(piece.kind, packed_kind, piece.bytes());
    if (way == protocol::Way::kDevice || way == protocol::Way::kZeroCopy) {
      const int device = protocol::device_of(piece.kind, packed_kind);
      if (device != set_device) {
        GDDT_CHECK(flush());
        set_device = device;
        GDDT_CHECK(gpu::library_stream(device, &stream));
      }
      set.push_back({window, typed, packed});
      continue;
    }
    GDDT_CHECK(into_packed ? protocol::pack(window, typed, piece.kind, packed, packed_kind, nullptr, way)
                           : protocol::unpack(window, typed, piece.kind, packed, packed_kind, nullptr, way));
  }
  return flush();
}

}  // namespace

Status move_stand_in(const StandIn& stand_in, bool filling) {
  if (stand_in.packed) return move_packed(stand_in, filling);
  protocol::Staging packed;
  GDDT_CHECK(packed_staging(stand_in, filling, &packed));
  char* user = const_cast<char*>(stand_in.user);
  const char* from = filling ? user : stand_in.origin();
  char* to = filling ? stand_in.origin() : user;
  for (const Piece& piece : stand_in.pieces) {
    counters::add(stand_in.moved, piece.bytes());
    const memory::Kind from_kind = filling ? piece.kind : stand_in.staging.kind();
    const memory::Kind to_kind = filling ? stand_in.staging.kind() : piece.kind;
    GDDT_CHECK((filling ? piece.dense() : piece.gapless()) ? copy_span(piece, from, to)
                                                           : move_typed(piece, from, from_kind, to, to_kind, packed));
  }
  return GDDT_OK;
}

}  // namespace gddt::mpi::collective
