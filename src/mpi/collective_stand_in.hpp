// A buffer argument's replacement for the library's call (collective.hpp): its pieces, the stand-in
// or packed bytes that replace them, and how the typed bytes move into and out of it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/counters.hpp"
#include "core/status.hpp"
#include "mpi/collective_segments.hpp"
#include "protocol/message.hpp"
#include "type/datatype.hpp"

namespace gddt::mpi::collective {

// A segment copied between the user's buffer and its stand-in by spans (gaps included) when its
// span is at most this many times its typed bytes (plus a page): one copy beats a pack and an
// unpack there.
constexpr std::int64_t kDenseSpanFactor = 2;
constexpr std::int64_t kDenseSpanSlack = 4096;

// A segment with its datatype resolved: its elements start `offset` bytes from the buffer pointer;
// on the packed path its packed bytes start `packed_at` bytes into the packed buffer.
struct Piece {
  type::LayoutPtr layout;
  int segment = 0;
  std::int64_t count = 0;
  std::int64_t offset = 0;
  std::int64_t packed_at = 0;
  memory::Kind kind;
  std::int64_t bytes() const { return count * layout->size; }
  std::int64_t span_lb() const { return offset + layout->span_lb(count); }
  std::int64_t span_ub() const { return offset + layout->span_ub(count); }
  bool dense() const { return span_ub() - span_lb() <= kDenseSpanFactor * bytes() + kDenseSpanSlack; }
  bool gapless() const { return span_ub() - span_lb() == bytes(); }
};

// A buffer argument with what replaces it: its packed bytes, or a stand-in of host memory for the
// bytes [low, high) relative to the user's buffer pointer.
struct StandIn {
  Direction direction = Direction::kIn;
  const char* user = nullptr;
  std::vector<Piece> pieces;
  std::int64_t low = 0;
  std::int64_t high = 0;
  bool packed = false;
  PackedSegments packed_segments;  // what the library was handed on the packed path
  std::int64_t packed_bytes = 0;   // their sum
  counters::Counter moved = counters::Counter::kCollectiveBytes;  // counts the typed bytes moved
  protocol::Staging staging;
  char* origin() const {
    if (packed) return static_cast<char*>(staging.data());
    return reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(staging.data()) - static_cast<std::uintptr_t>(low));
  }
  bool read() const { return direction != Direction::kOut; }
  bool written() const { return direction != Direction::kIn; }
  // The GPU all its pieces lie on (-1: not all on one GPU's device memory).
  int one_gpu() const {
    const int device = pieces.front().kind.device;
    for (const Piece& piece : pieces)
      if (piece.kind.type != GDDT_MEMORY_DEVICE || piece.kind.device != device) return -1;
    return device;
  }
};

// This process's own block of a call that sends to every process, which gddt moves from the send
// buffer's packed bytes to the receive buffer's itself: the library is handed a count of 0 for it,
// since libraries copy it with the CPU (Open MPI 5.0.11 over UCX: MPI_Alltoallv's and
// MPI_Alltoallw's local copy), which cannot read device memory.
struct OwnBlock {
  std::size_t from = 0, to = 0;  // the stand-ins sending and receiving it
  std::int64_t from_at = 0, to_at = 0, bytes = 0;
};

// The typed bytes of a buffer argument into its stand-in (`filling`) or out of it. A stand-in is
// filled with whole spans of its dense pieces (the library reads only the typed bytes), emptied
// with whole spans only of pieces without gaps; other pieces move through packed bytes.
Status move_stand_in(const StandIn& stand_in, bool filling);

}  // namespace gddt::mpi::collective
