#include "mpi/collective.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "core/counters.hpp"
#include "core/log.hpp"
#include "mpi/classify.hpp"
#include "mpi/collective_stand_in.hpp"
#include "mpi/errors.hpp"
#include "mpi/pack_api.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/message.hpp"
#include "protocol/route.hpp"
#include "protocol/requests.hpp"
#include "protocol/transfer.hpp"

namespace gddt::mpi::collective {
namespace {

// Below it an address is no buffer (MPI_BOTTOM, or null with a nonzero count): the library
// judges such a call.
constexpr std::uintptr_t kLowestValidAddress = 64 * 1024;

}  // namespace

struct Staged : protocol::CollectiveWork, KeptStandIns {
  std::vector<StandIn> stand_ins;
  std::vector<std::vector<char>> delivered;  // what the written stand-ins held at deliver()
  OwnBlock own;

  // The typed bytes of the buffers the call reads, into their stand-ins, and the own block across.
  Status start() override {
    for (const StandIn& stand_in : stand_ins)
      if (stand_in.read()) GDDT_CHECK(move_stand_in(stand_in, true));
    if (own.bytes == 0) return GDDT_OK;
    counters::add(counters::Counter::kCollectiveOwnBlocks, 1);
    const protocol::Staging& from = stand_ins[own.from].staging;
    const protocol::Staging& to = stand_ins[own.to].staging;
    return protocol::copy_and_wait(static_cast<char*>(to.data()) + own.to_at,
                                   static_cast<const char*>(from.data()) + own.from_at,
                                   static_cast<std::size_t>(own.bytes), protocol::device_of(from.kind(), to.kind()));
  }

  // The typed bytes of the buffers the call wrote, out of their stand-ins: never the gaps.
  Status complete() override {
    for (const StandIn& stand_in : stand_ins)
      if (stand_in.written()) GDDT_CHECK(move_stand_in(stand_in, false));
    return GDDT_OK;
  }

  Status deliver() override {
    GDDT_CHECK(complete());
    delivered.clear();
    for (const StandIn& stand_in : stand_ins) {
      const auto* bytes = static_cast<const char*>(stand_in.staging.data());
      if (stand_in.written()) delivered.emplace_back(bytes, bytes + stand_in.staging.size());
    }
    return GDDT_OK;
  }

  bool rewritten() const override {
    auto remembered = delivered.begin();
    for (const StandIn& stand_in : stand_ins) {
      if (!stand_in.written()) continue;
      if (remembered == delivered.end() ||
          std::memcmp(remembered->data(), stand_in.staging.data(), remembered->size()) != 0)
        return true;
      ++remembered;
    }
    return false;
  }
};

namespace {

// Why a buffer argument keeps the user's pointer.
enum class Verdict { kStaged, kLeft, kRefused };

// Resolves the segments of `argument` and decides whether it needs a stand-in: any piece in device
// memory, or any piece at all with `host_staged` (GDDT_COLLECTIVE_HOST=gddt, GDDT_RMA_HOST=gddt,
// GDDT_FILE_HOST=gddt). Under a CUDA-aware library too: collective algorithms copy device buffers
// with the CPU in places (Open MPI 5.0.11 over UCX: the local block of MPI_Gather's binomial tree
// and of MPI_Alltoallw, even for MPI_BYTE), and file I/O moves the user's buffer with the CPU, so
// the library gets host memory only. Erroneous arguments are left to the library, which reports them.
Verdict examine(const Argument& argument, int segments, bool host_staged, StandIn* stand_in) {
  const char* user = static_cast<const char*>(*argument.address);
  bool device = false;
  for (int i = 0; i < segments; ++i) {
    const Segment segment = argument.segment(i);
    if (segment.count < 0 || segment.datatype == MPI_DATATYPE_NULL || type::is_freed(segment.datatype))
      return Verdict::kLeft;
    if (segment.count == 0) continue;
    Piece piece;
    const Status resolved = resolve_datatype(segment.datatype, &piece.layout);
    if (resolved == GDDT_ERR_UNSUPPORTED) {
      // A datatype gddt cannot express, judged by the first byte the library's bounds name where
      // the segment starts.
      memory::Kind kind;
      MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
      PMPI_Type_get_extent(segment.datatype, &lb, &extent);
      PMPI_Type_get_true_extent(segment.datatype, &true_lb, &true_extent);
      const std::int64_t start =
          segment.unit == Segment::Unit::kBytes ? segment.displacement : segment.displacement * extent;
      if (classify_typed(segment.datatype, user + start + true_lb, &kind) == GDDT_OK && kind.type == GDDT_MEMORY_DEVICE)
        return Verdict::kRefused;
      return Verdict::kLeft;
    }
    if (is_error(resolved)) return Verdict::kLeft;
    piece.segment = i;
    piece.count = segment.count;
    piece.offset =
        segment.unit == Segment::Unit::kBytes ? segment.displacement : segment.displacement * piece.layout->extent;
    if (piece.bytes() == 0) continue;
    const auto first = reinterpret_cast<std::uintptr_t>(user) + static_cast<std::uintptr_t>(piece.span_lb());
    if (first < kLowestValidAddress ||
        classify_typed(segment.datatype, reinterpret_cast<const void*>(first), &piece.kind) != GDDT_OK)
      return Verdict::kLeft;
    device = device || piece.kind.type == GDDT_MEMORY_DEVICE;
    stand_in->pieces.push_back(std::move(piece));
  }
  if (stand_in->pieces.empty() || (!device && !host_staged)) return Verdict::kLeft;
  stand_in->direction = argument.direction;
  stand_in->user = user;
  stand_in->low = stand_in->pieces.front().span_lb();
  stand_in->high = stand_in->pieces.front().span_ub();
  for (const Piece& piece : stand_in->pieces) {
    stand_in->low = std::min(stand_in->low, piece.span_lb());
    stand_in->high = std::max(stand_in->high, piece.span_ub());
  }
  return Verdict::kStaged;
}

// Points the argument's count, datatype and displacement parameters at its packed bytes where the
// call moves data without reducing it (and GDDT_COLLECTIVE_PACKED allows it); else it gets a host
// stand-in. Its staging is acquired once the call's arguments are laid out (acquire_staging).
void lay_out(const Argument& argument, int segments, StandIn* stand_in) {
  if (argument.rewrite && config::settings().collective_packed) {
    PackedSegments& packed = stand_in->packed_segments;
    packed.bytes.assign(static_cast<std::size_t>(segments), 0);
    packed.offsets.assign(static_cast<std::size_t>(segments), 0);
    std::int64_t total = 0;
    for (Piece& piece : stand_in->pieces) {
      piece.packed_at = total;
      packed.bytes[static_cast<std::size_t>(piece.segment)] = piece.bytes();
      packed.offsets[static_cast<std::size_t>(piece.segment)] = total;
      total += piece.bytes();
    }
    if (argument.rewrite(packed)) {
      stand_in->packed = true;
      stand_in->packed_bytes = total;
    }
  }
}

// Takes this process's own block of a call that sends to every process of an intracommunicator
// (every form of MPI_Alltoallv and MPI_Alltoallw; not in place) out of the library's hands: both
// buffers packed with a count per process, and the block's packed sizes equal (else the library
// judges the call). `arguments[i]` is the argument of staged.stand_ins[i].
bool take_own_block(MPI_Comm comm, const std::vector<const Argument*>& arguments, Staged* staged) {
  std::size_t from = arguments.size(), to = arguments.size();
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const StandIn& stand_in = staged->stand_ins[i];
    const bool per_peer = arguments[i]->per == call_buffers::Per::kPeer;
    if (!stand_in.packed || !stand_in.packed_segments.per_segment_counts || !per_peer) continue;
    (stand_in.direction == Direction::kIn ? from : to) = i;
  }
  int inter = 0, rank = 0;
  if (from == arguments.size() || to == arguments.size() || comm == MPI_COMM_NULL ||
      PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
    return false;
  PackedSegments& sent = staged->stand_ins[from].packed_segments;
  PackedSegments& received = staged->stand_ins[to].packed_segments;
  const auto own = static_cast<std::size_t>(rank);
  if (own >= sent.bytes.size() || own >= received.bytes.size() || sent.bytes[own] != received.bytes[own]) return false;
  staged->own = OwnBlock{from, to, sent.offsets[own], received.offsets[own], sent.bytes[own]};
  sent.bytes[own] = received.bytes[own] = 0;
  return arguments[from]->rewrite(sent) && arguments[to]->rewrite(received);
}

// Where, in bytes from a stand-in's origin, the library may take a block of it to start: each
// piece's own, and the i-th of blocks laid end to end by size, as MPICH's alias checks assume.
std::vector<std::int64_t> block_starts(const StandIn& stand_in) {
  std::vector<std::int64_t> starts;
  for (const Piece& piece : stand_in.pieces) {
    starts.push_back(stand_in.packed ? piece.packed_at : piece.offset);
    starts.push_back(piece.segment * piece.bytes());
  }
  return starts;
}

// Whether the library could take stand-in `i` and an earlier one for aliased buffers (MPICH:
// MPI_ERR_BUFFER, as the heap's state happened to place them): one's origin where a block of the
// other may start, which separate staging does not rule out (an origin may lie outside its own).
bool aliases_earlier(const std::vector<StandIn>& stand_ins, const std::vector<std::vector<std::int64_t>>& starts,
                     std::size_t i) {
  const auto origin = [&](std::size_t k) { return reinterpret_cast<std::intptr_t>(stand_ins[k].origin()); };
  const auto starts_at = [&](std::size_t k, std::intptr_t offset) {
    return std::find(starts[k].begin(), starts[k].end(), static_cast<std::int64_t>(offset)) != starts[k].end();
  };
  for (std::size_t k = 0; k < i; ++k)
    if (starts_at(k, origin(i) - origin(k)) || starts_at(i, origin(k) - origin(i))) return true;
  return false;
}

constexpr int kAliasTries = 8;  // at staging the library could not take for an alias

// The staging of every stand-in: packed bytes in device scratch of the GPU all the call's buffers
// lie on where the library takes device memory and never sees the own block
// (GDDT_COLLECTIVE_DEVICE), else host memory.
Status acquire_staging(bool own_block_taken, Staged* staged) {
  int device = -1;
  if (own_block_taken && config::settings().collective_device && protocol::library_cuda_aware() &&
      protocol::device_route_forced() == protocol::Route::kForward) {
    device = staged->stand_ins.front().one_gpu();
    for (const StandIn& stand_in : staged->stand_ins)
      if (!stand_in.packed || stand_in.one_gpu() != device) device = -1;
  }
  std::vector<StandIn>& stand_ins = staged->stand_ins;
  std::vector<std::vector<std::int64_t>> starts;
  for (std::size_t i = 0; i < stand_ins.size(); ++i) {
    StandIn& stand_in = stand_ins[i];
    const std::int64_t bytes = stand_in.packed ? stand_in.packed_bytes : stand_in.high - stand_in.low;
    GDDT_CHECK(stand_in.staging.acquire(device, bytes));
    starts.push_back(block_starts(stand_in));
    // Replaced staging is held until the stand-in has its own, so that the next lies elsewhere.
    std::vector<protocol::Staging> held;
    for (int tries = 0; tries < kAliasTries && aliases_earlier(stand_ins, starts, i); ++tries) {
      protocol::Staging elsewhere;
      GDDT_CHECK(elsewhere.acquire(device, bytes));
      held.push_back(std::move(stand_in.staging));
      stand_in.staging = std::move(elsewhere);
    }
    if (stand_in.staging.kind().type == GDDT_MEMORY_DEVICE)
      counters::add(counters::Counter::kCollectiveDeviceStaging, 1);
  }
  return GDDT_OK;
}

// The stand-ins of split collectives from their *_begin to their *_end, by file: MPI allows one
// split collective at a time on a file.
struct KeptForEnd {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, std::unique_ptr<Staged>> of_file;
  static std::uint64_t key_of(MPI_File file) {
    static_assert(sizeof file <= sizeof(std::uint64_t), "a file handle is a key");
    std::uint64_t key = 0;
    std::memcpy(&key, &file, sizeof file);
    return key;
  }
};

KeptForEnd& kept_for_end() {
  static auto* instance = new KeptForEnd;
  return *instance;
}

}  // namespace

StandIns::StandIns(MPI_Comm comm, int root, Filled filled)
    : comm_(comm),
      root_(root),
      filled_(filled),
      host_staged_(config::collective_host() == config::CollectiveHost::kGddt) {}
StandIns::StandIns(MPI_Win win, bool host_too) : win_(win), host_staged_(host_too) {}
StandIns::StandIns(MPI_File file) : file_(file), host_staged_(config::file_host() == config::FileHost::kGddt) {}
StandIns::~StandIns() = default;

int StandIns::raised(Status status) const {
  return raise_on_owner(comm_, win_, file_, status);
}

int StandIns::rank() const {
  int rank = 0;
  PMPI_Comm_rank(comm_, &rank);
  return rank;
}

int StandIns::local_size() const {
  int size = 0;
  PMPI_Comm_size(comm_, &size);
  return size;
}

int StandIns::make(std::initializer_list<Argument> arguments) {
  // the library reports it
  if (comm_ == MPI_COMM_NULL && win_ == MPI_WIN_NULL && file_ == MPI_FILE_NULL) return MPI_SUCCESS;
  auto staged = std::make_unique<Staged>();
  std::vector<const Argument*> replaced;
  bool in_place = false;
  for (const Argument& argument : arguments) {
    const void* address = *argument.address;
    if (address == MPI_IN_PLACE) {
      in_place = true;
      continue;
    }
    if (!call_buffers::significant(comm_, root_, argument.side)) continue;
    const int segments = call_buffers::datatypes_of(comm_, argument.per);
    StandIn stand_in;
    switch (examine(argument, segments, host_staged_, &stand_in)) {
      case Verdict::kLeft:
        continue;
      case Verdict::kRefused:
        GDDT_LOG(kError, "a datatype too large for gddt's tables on device memory in a collective, one-sided or "
                         "file call: refused");
        return raised(GDDT_ERR_UNSUPPORTED);
      case Verdict::kStaged:
        break;
    }
    lay_out(argument, segments, &stand_in);
    if (file_ != MPI_FILE_NULL) stand_in.moved = counters::Counter::kFileBytes;
    staged->stand_ins.push_back(std::move(stand_in));
    replaced.push_back(&argument);
  }
  if (staged->stand_ins.empty()) return MPI_SUCCESS;
  const bool own_block_taken = !in_place && take_own_block(comm_, replaced, staged.get());
  const Status acquired = acquire_staging(own_block_taken, staged.get());
  if (is_error(acquired)) return raised(acquired);
  // MPI_IN_PLACE makes a receive buffer the call's input too.
  if (in_place)
    for (StandIn& stand_in : staged->stand_ins)
      if (stand_in.direction == Direction::kOut) stand_in.direction = Direction::kInOut;
  if (filled_ == Filled::kNow) {
    const int rc = raised(staged->start());
    if (rc != MPI_SUCCESS) return rc;
  }
  counters::add(win_ != MPI_WIN_NULL    ? counters::Counter::kRmaStandIns
                : file_ != MPI_FILE_NULL ? counters::Counter::kFileStandIns
                                         : counters::Counter::kCollectiveStandIns,
                static_cast<std::int64_t>(staged->stand_ins.size()));
  for (std::size_t i = 0; i < replaced.size(); ++i) *replaced[i]->address = staged->stand_ins[i].origin();
  staged_ = std::move(staged);
  return MPI_SUCCESS;
}

int StandIns::finish(int rc) {
  if (!staged_ || rc != MPI_SUCCESS) return rc;
  return raised(staged_->complete());
}

std::unique_ptr<KeptStandIns> StandIns::keep() { return std::move(staged_); }

int StandIns::track(int rc, const MPI_Request* request) {
  if (!staged_ || rc != MPI_SUCCESS) return rc;
  auto operation = std::make_unique<protocol::Operation>();
  operation->kind = protocol::Operation::Kind::kCollective;
  operation->comm = comm_;
  operation->file = file_;
  operation->persistent = filled_ == Filled::kAtStart;
  operation->active = !operation->persistent;
  operation->collective = std::move(staged_);
  protocol::requests::add(*request, std::move(operation));
  return MPI_SUCCESS;
}

int StandIns::keep_until_end(int rc) {
  if (!staged_ || rc != MPI_SUCCESS) return rc;
  KeptForEnd& kept = kept_for_end();
  std::lock_guard<std::mutex> lock(kept.mutex);
  kept.of_file[KeptForEnd::key_of(file_)] = std::move(staged_);
  return MPI_SUCCESS;
}

void StandIns::resume(const void** address) {
  KeptForEnd& kept = kept_for_end();
  {
    std::lock_guard<std::mutex> lock(kept.mutex);
    auto found = kept.of_file.find(KeptForEnd::key_of(file_));
    if (found == kept.of_file.end()) return;
    staged_ = std::move(found->second);
    kept.of_file.erase(found);
  }
  *address = staged_->stand_ins.front().origin();
}

}  // namespace gddt::mpi::collective
