// The data calls of windows reached through CUDA IPC (onesided_direct.hpp): moving bytes between
// an origin's layout and a target's mapped memory, and accumulating calls under the target's
// accumulate lock with the library's own arithmetic.
#include <climits>
#include <cstring>
#include <vector>

#include "core/counters.hpp"
#include "mpi/classify.hpp"
#include "mpi/errors.hpp"
#include "mpi/onesided_direct.hpp"
#include "pack/engine.hpp"
#include "protocol/message.hpp"
#include "protocol/requests.hpp"
#include "protocol/transfer.hpp"
#include "type/contents.hpp"

namespace gddt::mpi::onesided {
namespace {

using protocol::Message;

// A request-based call's request: the call is complete when it returns, so the request is too.
int query_done(void*, MPI_Status* status) {
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
int free_done(void*) { return MPI_SUCCESS; }
int cancel_done(void*, int) { return MPI_SUCCESS; }

int completed(MPI_Request* request) {
  if (request == nullptr) return MPI_SUCCESS;
  const int rc = PMPI_Grequest_start(query_done, free_done, cancel_done, nullptr, request);
  return rc == MPI_SUCCESS ? PMPI_Grequest_complete(*request) : rc;
}

// The predefined datatype every element of `datatype` is made of (MPI asks that of accumulating
// calls' datatypes): a named type outlives the contents that named it.
MPI_Datatype basic_of(MPI_Datatype datatype, int depth = 0) {
  const type::Envelope envelope = type::envelope_of(datatype);
  if (envelope.combiner == MPI_COMBINER_NAMED) return datatype;
  type::Contents contents;
  if (depth > 64 || is_error(contents.read(datatype, envelope)) || contents.types.empty()) return MPI_DATATYPE_NULL;
  return basic_of(contents.types[0], depth + 1);
}

// The operations MPI defines for accumulating calls; others are the library's to refuse.
bool predefined(MPI_Op op) {
  for (MPI_Op known : {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR,
                       MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP})
    if (op == known) return true;
  return false;
}

}  // namespace

bool Direct::valid(int target, std::initializer_list<std::pair<std::int64_t, MPI_Datatype>> buffers, MPI_Op op) {
  if (target != MPI_PROC_NULL && (target < 0 || target >= static_cast<int>(members_.size()))) return false;
  if (op != MPI_OP_NULL && !predefined(op)) return false;
  for (const auto& [count, datatype] : buffers) {
    type::LayoutPtr layout;
    if (count < 0 || datatype == MPI_DATATYPE_NULL || is_error(resolve_datatype(datatype, &layout))) return false;
  }
  return true;
}

int Direct::target_memory(int target, MPI_Aint disp, Message* elements) {
  const Member& member = members_[static_cast<std::size_t>(target)];
  const std::int64_t start = static_cast<std::int64_t>(disp) * member.disp_unit;
  const std::int64_t count = elements->count;
  if (count > 0 && (start + elements->layout->span_lb(count) < 0 ||
                    start + elements->layout->span_ub(count) > member.bytes))
    return raise_class(MPI_ERR_RMA_RANGE);
  elements->buffer = member.base + start;
  return MPI_SUCCESS;
}

namespace {

// `count` elements of `datatype` at `buffer`, of the memory it is in (`kind` where given). The
// memory is that of the first byte the elements touch: `buffer` itself may lie outside the
// allocation (a datatype whose lower bound is far from 0).
Status message_of(const void* buffer, std::int64_t count, MPI_Datatype datatype, Message* message,
                  const memory::Kind* kind = nullptr) {
  GDDT_CHECK(resolve_datatype(datatype, &message->layout));
  message->count = count;
  message->buffer = const_cast<void*>(buffer);
  if (kind != nullptr) {
    message->kind = *kind;
  } else if (buffer != nullptr && count > 0) {
    GDDT_CHECK(classify_typed(datatype, static_cast<const char*>(buffer) + message->layout->span_lb(count),
                              &message->kind));
    if (message->kind.is_device() && message->kind.device < 0) message->kind.device = gpu::current_device();
  }
  return GDDT_OK;
}

// Moves `from` into `to` (one of them window memory on this process's GPU): one kernel queued on
// the stream where the backend reaches both, else packed into scratch and unpacked out of it,
// waited for.
Status move_bytes(const Message& from, const Message& to, std::int64_t bytes, int device, gpu::Stream stream,
                         bool* queued) {
  if (bytes == 0) return GDDT_OK;
  counters::add(counters::Counter::kRmaDirectCalls, 1);
  counters::add(counters::Counter::kRmaDirectBytes, bytes);
  gpu::DeviceGuard guard(device);
  const auto reached = [device](const memory::Kind& kind) {
    return kind.type == GDDT_MEMORY_PINNED || kind.type == GDDT_MEMORY_MANAGED ||
           (kind.type == GDDT_MEMORY_DEVICE && kind.device == device);
  };
  const pack::Backend* device_backend = pack::backend_for(GDDT_MEMORY_DEVICE, GDDT_MEMORY_DEVICE);
  const pack::Window read{from.layout.get(), from.count, 0, bytes};
  const pack::Window written{to.layout.get(), to.count, 0, bytes};
  if (device_backend != nullptr && reached(from.kind) && reached(to.kind)) {
    const pack::Backend& backend = *device_backend;
    bool served = true;
    if (to.contiguous())
      GDDT_CHECK(backend.pack(read, from.buffer, to.first_byte(), stream));
    else if (from.contiguous())
      GDDT_CHECK(backend.unpack(written, to.buffer, from.first_byte(), stream));
    else if (backend.transcribe != nullptr)
      GDDT_CHECK(backend.transcribe(read, from.buffer, written, to.buffer, stream, &served));
    else
      served = false;
    if (served) {
      *queued = true;
      return GDDT_OK;
    }
  }
  // Through scratch: of this GPU where there is one (waited for between the two moves, which
  // may run on other lanes), else host memory on both sides.
  const auto wait = [stream] { return stream != nullptr ? gpu::stream_synchronize(stream) : GDDT_OK; };
  if (*queued) GDDT_CHECK(wait());
  *queued = false;
  protocol::Staging scratch;
  GDDT_CHECK(scratch.acquire(device, bytes));
  GDDT_CHECK(protocol::pack(read, from.buffer, from.kind, scratch.data(), scratch.kind(), stream,
                            protocol::choose(from.kind, scratch.kind(), bytes)));
  GDDT_CHECK(wait());
  GDDT_CHECK(protocol::unpack(written, to.buffer, to.kind, scratch.data(), scratch.kind(), stream,
                              protocol::choose(to.kind, scratch.kind(), bytes)));
  return wait();
}

}  // namespace

int Direct::move(bool to_target, void* origin, std::int64_t origin_count, MPI_Datatype origin_type, int target,
                 MPI_Aint disp, std::int64_t target_count, MPI_Datatype target_type, MPI_Request* request) {
  if (!valid(target, {{origin_count, origin_type}, {target_count, target_type}}, MPI_OP_NULL)) return kLibraryJudges;
  if (target == MPI_PROC_NULL) return completed(request);
  const memory::Kind where = window_kind();
  Message theirs, ours;
  Status status = message_of(nullptr, target_count, target_type, &theirs, &where);
  if (!is_error(status)) status = message_of(origin, origin_count, origin_type, &ours);
  if (is_error(status)) return raise_status(status);
  const int rc = target_memory(target, disp, &theirs);
  if (rc != MPI_SUCCESS) return rc;
  if (theirs.bytes() != ours.bytes()) return kLibraryJudges;
  std::lock_guard<std::mutex> lock(mutex_);
  status = to_target ? move_bytes(ours, theirs, ours.bytes(), device_, stream_, &queued_)
                     : move_bytes(theirs, ours, ours.bytes(), device_, stream_, &queued_);
  if (!is_error(status) && request != nullptr) status = drain();
  return is_error(status) ? raise_status(status) : completed(request);
}

int Direct::accumulate(const void* origin, std::int64_t origin_count, MPI_Datatype origin_type, void* result,
                       std::int64_t result_count, MPI_Datatype result_type, int target, MPI_Aint disp,
                       std::int64_t target_count, MPI_Datatype target_type, MPI_Op op, MPI_Request* request,
                       const void* compare) {
  const bool reads_origin = op != MPI_NO_OP || compare != nullptr;
  if (!valid(target,
             {{reads_origin ? origin_count : 0, reads_origin ? origin_type : target_type},
              {result != nullptr ? result_count : 0, result != nullptr ? result_type : target_type},
              {target_count, target_type}},
             op))
    return kLibraryJudges;
  if (target == MPI_PROC_NULL) return completed(request);
  const memory::Kind where = window_kind();
  const memory::Kind host{};
  Message window, given, fetched, compared;
  Status status = message_of(nullptr, target_count, target_type, &window, &where);
  if (!is_error(status) && reads_origin) status = message_of(origin, origin_count, origin_type, &given);
  if (!is_error(status) && result != nullptr) status = message_of(result, result_count, result_type, &fetched);
  if (!is_error(status) && compare != nullptr) status = message_of(compare, 1, target_type, &compared);
  if (is_error(status)) return raise_status(status);
  int rc = target_memory(target, disp, &window);
  if (rc != MPI_SUCCESS) return rc;
  const std::int64_t bytes = window.bytes();
  if ((reads_origin && given.bytes() != bytes) || (result != nullptr && fetched.bytes() != bytes))
    return kLibraryJudges;
  const MPI_Datatype basic = basic_of(target_type);
  if (basic == MPI_DATATYPE_NULL) return kLibraryJudges;
  // The library computes on int counts of elements.
  if (bytes > INT_MAX) return raise_status(GDDT_ERR_COUNT);
  // The packed bytes of the target, the origin's, and the elements the library computes on.
  const auto size = static_cast<std::size_t>(bytes);
  std::vector<char> current(size), incoming(size), updated;
  const auto packed = [&](const Message& message, std::vector<char>& into) {
    const pack::Window all{message.layout.get(), message.count, 0, bytes};
    return protocol::pack(all, message.buffer, message.kind, into.data(), host, nullptr,
                          protocol::choose(message.kind, host, bytes));
  };
  const auto unpacked = [&](const Message& message, const std::vector<char>& from) {
    const pack::Window all{message.layout.get(), message.count, 0, bytes};
    return protocol::unpack(all, message.buffer, message.kind, from.data(), host, nullptr,
                            protocol::choose(message.kind, host, bytes));
  };
  std::lock_guard<std::mutex> lock(mutex_);
  status = drain();
  if (!is_error(status) && reads_origin) status = packed(given, incoming);
  if (is_error(status)) return raise_status(status);
  counters::add(counters::Counter::kRmaDirectCalls, 1);
  counters::add(counters::Counter::kRmaDirectBytes, bytes);
  {
    std::atomic<std::uint32_t>* const word = members_[static_cast<std::size_t>(target)].locks.accumulate;
    for (std::uint32_t idle = 0; !word->compare_exchange_weak(idle, 1, std::memory_order_acquire); idle = 0)
      progress_while_waiting();
    struct Release {
      std::atomic<std::uint32_t>* word;
      ~Release() { word->store(0, std::memory_order_release); }
    } release{word};
    status = packed(window, current);
    if (!is_error(status) && result != nullptr) status = unpacked(fetched, current);
    if (is_error(status)) return raise_status(status);
    if (compare != nullptr) {
      std::vector<char> expected(size);
      status = packed(compared, expected);
      if (is_error(status)) return raise_status(status);
      if (std::memcmp(expected.data(), current.data(), size) == 0) updated = incoming;
    } else if (op == MPI_REPLACE) {
      updated = incoming;
    } else if (op != MPI_NO_OP) {
      // The library's arithmetic on its own elements: unpacked from the packed bytes, reduced,
      // packed again.
      int element = 0;
      MPI_Aint lb = 0, extent = 0;
      PMPI_Pack_size(1, basic, MPI_COMM_SELF, &element);
      PMPI_Type_get_extent(basic, &lb, &extent);
      const int count = element > 0 ? static_cast<int>(bytes / element) : 0;
      std::vector<char> theirs(static_cast<std::size_t>(count) * static_cast<std::size_t>(extent));
      std::vector<char> ours(theirs.size());
      int position = 0;
      rc = PMPI_Unpack(incoming.data(), static_cast<int>(bytes), &position, ours.data(), count, basic, MPI_COMM_SELF);
      position = 0;
      if (rc == MPI_SUCCESS)
        rc = PMPI_Unpack(current.data(), static_cast<int>(bytes), &position, theirs.data(), count, basic, MPI_COMM_SELF);
      if (rc == MPI_SUCCESS) rc = PMPI_Reduce_local(ours.data(), theirs.data(), count, basic, op);
      updated.resize(size);
      position = 0;
      if (rc == MPI_SUCCESS)
        rc = PMPI_Pack(theirs.data(), count, basic, updated.data(), static_cast<int>(bytes), &position, MPI_COMM_SELF);
      if (rc != MPI_SUCCESS) {
        int error_class = MPI_ERR_OTHER;
        PMPI_Error_class(rc, &error_class);
        return raise_class(error_class);
      }
    }
    if (!updated.empty()) status = unpacked(window, updated);
  }
  return is_error(status) ? raise_status(status) : completed(request);
}

}  // namespace gddt::mpi::onesided
