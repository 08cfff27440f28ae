// One-sided data calls (onesided_window.hpp): origin, compare and result buffers the library must
// not touch with the CPU get host stand-ins laid out like them (mpi/collective.hpp), the origin
// and compare ones filled before the library's call. The library applies the target datatype on
// the target's public copy itself, accumulate operations and their atomicity included. The
// stand-ins live on the window until the synchronization that completes the call moves the
// results into the user's buffers (gaps untouched) and frees them; an MPI_R* call's results move
// at its request's completion already (onesided::Pending).
#include <mpi.h>

#include <functional>
#include <initializer_list>
#include <memory>
#include <type_traits>

#include "core/gpu.hpp"
#include "mpi/classify.hpp"
#include "mpi/collective.hpp"
#include "mpi/entry_points.hpp"
#include "mpi/errors.hpp"
#include "mpi/onesided_window.hpp"
#include "mpi/pack_api.hpp"
#include "protocol/requests.hpp"

namespace gddt::mpi::entry {
namespace {

using collective::Argument;
using collective::Direction;
using collective::Segment;
using onesided::or_library;

// A buffer of `count` elements of `datatype`, read (origin, compare) or written (result).
Argument buffer(Direction direction, const void** address, std::int64_t count, MPI_Datatype datatype) {
  return Argument(direction, address, call_buffers::Per::kCall, call_buffers::Side::kAny, [count, datatype](int) {
    return Segment{count, datatype, 0, Segment::Unit::kExtents};
  });
}

// The direction of a result buffer: a request-based call's stand-in starts as a copy of the user's
// buffer, so that where the library completes the request before the data arrives (MPICH 4.0's
// MPI_Rget), the user's buffer keeps its bytes until they do, as without gddt.
Direction result_direction(const MPI_Request* request) { return request != nullptr ? Direction::kInOut : Direction::kOut; }

// Whether the library gets the call as it is: no target, nothing gddt could serve in this
// process, or every buffer in host memory where GDDT_RMA_HOST leaves it to the library.
bool library_takes(int target, std::initializer_list<std::pair<const void*, MPI_Datatype>> buffers) {
  if (target == MPI_PROC_NULL) return true;
  if (onesided::host_through_gddt()) return false;
  if (!gpu::available()) return true;
  for (const auto& [address, datatype] : buffers)
    if (!on_library_memory(address, datatype)) return false;
  return true;
}

// The window's direct form (onesided_direct.hpp), where it has one; the entry keeps it alive.
std::shared_ptr<onesided::Window> direct_window(MPI_Win win) {
  std::shared_ptr<onesided::Window> window = onesided::find(win);
  return window && window->direct ? window : nullptr;
}

// A request-based call's completion moves the results of its stand-ins, unless a
// synchronization did first.
class RequestCompletion : public protocol::CollectiveWork {
 public:
  explicit RequestCompletion(std::shared_ptr<onesided::Pending> pending) : pending_(std::move(pending)) {}
  Status start() override { return GDDT_OK; }
  Status complete() override { return pending_->complete_request(); }

 private:
  std::shared_ptr<onesided::Pending> pending_;
};

// Makes the stand-ins of `arguments` (pointing them there), calls the library and keeps the
// stand-ins until the call completes. A request the library completed while posting it is
// finished at once, not tabled: libraries hand out one shared, already completed request object
// for such calls, so its handle cannot name the operation.
int issue(MPI_Win win, int target, std::initializer_list<Argument> arguments, const std::function<int()>& library,
          MPI_Request* request = nullptr) {
  collective::StandIns stand_ins(win, onesided::host_through_gddt());
  const int made = stand_ins.make(arguments);
  if (made != MPI_SUCCESS) return made;
  const int rc = library();
  if (rc != MPI_SUCCESS) return rc;
  std::unique_ptr<collective::KeptStandIns> kept = stand_ins.keep();
  if (!kept) return rc;
  auto pending = std::make_shared<onesided::Pending>(target, std::move(kept));
  onesided::find_or_add(win)->add_pending(pending);
  if (request != nullptr && *request != MPI_REQUEST_NULL) {
    int done = 0;
    if (PMPI_Request_get_status(*request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done)
      return raise_on_window(win, pending->complete_request());
    auto operation = std::make_unique<protocol::Operation>();
    operation->kind = protocol::Operation::Kind::kCollective;
    operation->win = win;
    operation->collective = std::make_unique<RequestCompletion>(std::move(pending));
    protocol::requests::add(*request, std::move(operation));
  }
  return rc;
}

// The library's function, given the request where it is a request-based one (MPI_R*).
template <typename Library, typename... Arguments>
int call_library(Library library, MPI_Request* request, Arguments... arguments) {
  if constexpr (std::is_invocable_v<Library, Arguments..., MPI_Request*>)
    return library(arguments..., request);
  else
    return library(arguments...);
}

template <typename Count, typename Library>
int put(Library library, const void* origin_addr, Count origin_count, MPI_Datatype origin_datatype, int target_rank,
        MPI_Aint target_disp, Count target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  const auto call = [&] {
    return call_library(library, request, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                        target_count, target_datatype, win);
  };
  if (const auto window = direct_window(win))
    return or_library(window->direct->put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                               target_datatype, request), call);
  if (library_takes(target_rank, {{origin_addr, origin_datatype}})) return call();
  return issue(win, target_rank, {buffer(Direction::kIn, &origin_addr, origin_count, origin_datatype)}, call, request);
}

template <typename Count, typename Library>
int get(Library library, void* origin_addr, Count origin_count, MPI_Datatype origin_datatype, int target_rank,
        MPI_Aint target_disp, Count target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  const void* origin = origin_addr;
  const auto call = [&] {
    return call_library(library, request, const_cast<void*>(origin), origin_count, origin_datatype, target_rank,
                        target_disp, target_count, target_datatype, win);
  };
  if (const auto window = direct_window(win))
    return or_library(window->direct->get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                               target_datatype, request), call);
  if (library_takes(target_rank, {{origin_addr, origin_datatype}})) return call();
  return issue(win, target_rank, {buffer(result_direction(request), &origin, origin_count, origin_datatype)}, call,
               request);
}

template <typename Count, typename Library>
int accumulate(Library library, const void* origin_addr, Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, Count target_count, MPI_Datatype target_datatype, MPI_Op op,
               MPI_Win win, MPI_Request* request) {
  const auto call = [&] {
    return call_library(library, request, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                        target_count, target_datatype, op, win);
  };
  if (const auto window = direct_window(win))
    return or_library(window->direct->accumulate(origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                                      target_rank, target_disp, target_count, target_datatype, op, request), call);
  if (library_takes(target_rank, {{origin_addr, origin_datatype}})) return call();
  return issue(win, target_rank, {buffer(Direction::kIn, &origin_addr, origin_count, origin_datatype)}, call, request);
}

template <typename Count, typename Library>
int get_accumulate(Library library, const void* origin_addr, Count origin_count, MPI_Datatype origin_datatype,
                   void* result_addr, Count result_count, MPI_Datatype result_datatype, int target_rank,
                   MPI_Aint target_disp, Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                   MPI_Request* request) {
  const void* result = result_addr;
  const auto call = [&] {
    return call_library(library, request, origin_addr, origin_count, origin_datatype, const_cast<void*>(result),
                        result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                        win);
  };
  if (const auto window = direct_window(win))
    return or_library(window->direct->accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                      result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                                      request), call);
  if (library_takes(target_rank, {{origin_addr, origin_datatype}, {result_addr, result_datatype}})) return call();
  return issue(win, target_rank,
               {buffer(Direction::kIn, &origin_addr, origin_count, origin_datatype),
                buffer(result_direction(request), &result, result_count, result_datatype)},
               call, request);
}

}  // namespace

// The int and the large-count (`_c`, MPI_Count) entry points of the four families.
#define GDDT_ONESIDED_CALLS(suffix, Count)                                                                            \
  int Put##suffix(const void* origin_addr, Count origin_count, MPI_Datatype origin_datatype, int target_rank,      \
                  MPI_Aint target_disp, Count target_count, MPI_Datatype target_datatype, MPI_Win win) {           \
    return put(PMPI_Put##suffix, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, \
               target_datatype, win, nullptr);                                                                       \
  }                                                                                                                  \
  int Rput##suffix(const void* origin_addr, Count origin_count, MPI_Datatype origin_datatype, int target_rank,     \
                   MPI_Aint target_disp, Count target_count, MPI_Datatype target_datatype, MPI_Win win,            \
                   MPI_Request* request) {                                                                           \
    return put(PMPI_Rput##suffix, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, \
               target_datatype, win, request);                                                                       \
  }                                                                                                                  \
  int Get##suffix(void* origin_addr, Count origin_count, MPI_Datatype origin_datatype, int target_rank,            \
                  MPI_Aint target_disp, Count target_count, MPI_Datatype target_datatype, MPI_Win win) {           \
    return get(PMPI_Get##suffix, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, \
               target_datatype, win, nullptr);                                                                       \
  }                                                                                                                  \
  int Rget##suffix(void* origin_addr, Count origin_count, MPI_Datatype origin_datatype, int target_rank,           \
                   MPI_Aint target_disp, Count target_count, MPI_Datatype target_datatype, MPI_Win win,            \
                   MPI_Request* request) {                                                                           \
    return get(PMPI_Rget##suffix, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, \
               target_datatype, win, request);                                                                       \
  }                                                                                                                  \
  int Accumulate##suffix(const void* origin_addr, Count origin_count, MPI_Datatype origin_datatype, int target_rank, \
                         MPI_Aint target_disp, Count target_count, MPI_Datatype target_datatype, MPI_Op op,        \
                         MPI_Win win) {                                                                              \
    return accumulate(PMPI_Accumulate##suffix, origin_addr, origin_count, origin_datatype, target_rank, target_disp, \
                      target_count, target_datatype, op, win, nullptr);                                              \
  }                                                                                                                  \
  int Raccumulate##suffix(const void* origin_addr, Count origin_count, MPI_Datatype origin_datatype,               \
                          int target_rank, MPI_Aint target_disp, Count target_count, MPI_Datatype target_datatype, \
                          MPI_Op op, MPI_Win win, MPI_Request* request) {                                            \
    return accumulate(PMPI_Raccumulate##suffix, origin_addr, origin_count, origin_datatype, target_rank,            \
                      target_disp, target_count, target_datatype, op, win, request);                                \
  }                                                                                                                  \
  int Get_accumulate##suffix(const void* origin_addr, Count origin_count, MPI_Datatype origin_datatype,            \
                             void* result_addr, Count result_count, MPI_Datatype result_datatype, int target_rank, \
                             MPI_Aint target_disp, Count target_count, MPI_Datatype target_datatype, MPI_Op op,    \
                             MPI_Win win) {                                                                          \
    return get_accumulate(PMPI_Get_accumulate##suffix, origin_addr, origin_count, origin_datatype, result_addr,     \
                          result_count, result_datatype, target_rank, target_disp, target_count, target_datatype,   \
                          op, win, nullptr);                                                                         \
  }                                                                                                                  \
  int Rget_accumulate##suffix(const void* origin_addr, Count origin_count, MPI_Datatype origin_datatype,           \
                              void* result_addr, Count result_count, MPI_Datatype result_datatype,                  \
                              int target_rank, MPI_Aint target_disp, Count target_count,                            \
                              MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {         \
    return get_accumulate(PMPI_Rget_accumulate##suffix, origin_addr, origin_count, origin_datatype, result_addr,    \
                          result_count, result_datatype, target_rank, target_disp, target_count, target_datatype,   \
                          op, win, request);                                                                         \
  }

GDDT_ONESIDED_CALLS(, int)
#if GDDT_HAVE_MPI_Put_c
GDDT_ONESIDED_CALLS(_c, MPI_Count)
#endif

int Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank,
                 MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  const void* result = result_addr;
  const auto call = [&] {
    return PMPI_Fetch_and_op(origin_addr, const_cast<void*>(result), datatype, target_rank, target_disp, op, win);
  };
  if (const auto window = direct_window(win))
    return or_library(window->direct->accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1,
                                      datatype, op, nullptr), call);
  if (library_takes(target_rank, {{origin_addr, datatype}, {result_addr, datatype}})) return call();
  return issue(win, target_rank,
               {buffer(Direction::kIn, &origin_addr, 1, datatype), buffer(Direction::kOut, &result, 1, datatype)}, call);
}

int Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Win win) {
  const void* result = result_addr;
  const auto call = [&] {
    return PMPI_Compare_and_swap(origin_addr, compare_addr, const_cast<void*>(result), datatype, target_rank,
                                 target_disp, win);
  };
  if (const auto window = direct_window(win))
    return or_library(window->direct->accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1,
                                      datatype, MPI_REPLACE, nullptr, compare_addr), call);
  if (library_takes(target_rank, {{origin_addr, datatype}, {compare_addr, datatype}, {result_addr, datatype}}))
    return call();
  return issue(win, target_rank,
               {buffer(Direction::kIn, &origin_addr, 1, datatype), buffer(Direction::kIn, &compare_addr, 1, datatype),
                buffer(Direction::kOut, &result, 1, datatype)},
               call);
}

}  // namespace gddt::mpi::entry
