// Collectives (and MPI_Reduce_local) and file reads and writes on buffers the MPI library must not
// touch with the CPU: the `staged` rows of entry_points.txt. Each buffer argument that lies in
// device memory (or, with GDDT_COLLECTIVE_HOST=gddt, or GDDT_FILE_HOST=gddt for file calls, in any
// memory) is replaced for the library's call, one of two ways:
// - packed (calls that move data without reducing it, GDDT_COLLECTIVE_PACKED): its segments'
//   packed bytes back to back in host memory, handed to the library as MPI_BYTE counts and
//   displacements (the wire carries packed bytes, as gddt's point-to-point does);
// - as a host stand-in (reductions, file calls, or where the packed counts do not fit the call's
//   integers): host memory laid out like the user's buffer over the span its segments cover, so
//   the library runs its own algorithm, datatype engine, reduction operations and file view on it.
// Host memory even under a CUDA-aware library, whose collective algorithms copy device buffers
// with the CPU in places; only MPI_Alltoallv and MPI_Alltoallw, whose own block gddt moves itself,
// may keep packed bytes in device scratch there (GDDT_COLLECTIVE_DEVICE). Before the call the typed bytes of the buffers the call reads are moved in; after it (at
// completion for nonblocking calls, at every completion for persistent ones, which fill at every
// MPI_Start) the typed bytes of the buffers it writes are moved back, gaps untouched. A split
// collective's stand-ins wait from its *_begin for its *_end. The generated shims describe each
// buffer argument by its segments, one per peer where the call has per-peer counts or datatypes, so
// one engine serves every collective and file call.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <vector>

#include "core/status.hpp"
#include "mpi/call_buffers.hpp"
#include "mpi/collective_segments.hpp"
#include "protocol/requests.hpp"

namespace gddt::mpi::collective {

// A buffer argument of a call as the entry-point table describes it: the shim's own parameter
// (pointed at the stand-in when one is made), how many segments it has (call_buffers::Per), where it is
// significant (call_buffers::Side), segment i, and, where the call moves data without reducing it, how
// to point its count, datatype and displacement parameters at packed bytes (false where they do
// not fit their integer types).
struct Argument {
  using Rewrite = std::function<bool(PackedSegments&)>;
  Argument(Direction d, const void** a, call_buffers::Per p, call_buffers::Side s, std::function<Segment(int)> seg, Rewrite r = {})
      : direction(d), address(a), per(p), side(s), segment(std::move(seg)), rewrite(std::move(r)) {}
  Argument(Direction d, void** a, call_buffers::Per p, call_buffers::Side s, std::function<Segment(int)> seg, Rewrite r = {})
      : Argument(d, const_cast<const void**>(a), p, s, std::move(seg), std::move(r)) {}
  Direction direction;
  const void** address;
  call_buffers::Per per;
  call_buffers::Side side;
  std::function<Segment(int)> segment;
  Rewrite rewrite;
};

// The sum of the first `n` entries of a count array (MPI_Reduce_scatter's send buffer).
template <typename CountT>
std::int64_t sum_of(const CountT* counts, int n) {
  std::int64_t sum = 0;
  for (int i = 0; counts != nullptr && i < n; ++i) sum += counts[i];
  return sum;
}

struct Staged;  // the stand-ins of one call (collective.cpp)

// The stand-ins of a one-sided call, kept until the call completes (StandIns::keep()).
class KeptStandIns {
 public:
  virtual ~KeptStandIns() = default;
  // Moves the typed bytes the call wrote into the user's buffers (gaps untouched) and remembers
  // what the stand-ins held.
  virtual Status deliver() = 0;
  // Whether the library wrote into them after the last deliver(): MPICH 4.0 completes an
  // MPI_Rget's request before its data arrives, which lands at the next synchronization.
  virtual bool rewritten() const = 0;
};

// The stand-ins of one call, made by make() and released by finish() or, for calls that return a
// request, handed to that request by track(); one-sided calls keep() them until the
// synchronization that completes the call (mpi/onesided_ops.cpp); a split collective on a file
// keeps them with keep_until_end() for its *_end, which takes them with resume().
class StandIns {
 public:
  enum class Filled { kNow, kAtStart };  // persistent calls fill their stand-ins at each MPI_Start
  // `root` is the call's root (call_buffers::kNotRooted for calls without one); `comm` is
  // MPI_COMM_SELF for MPI_Reduce_local.
  StandIns(MPI_Comm comm, int root, Filled filled = Filled::kNow);
  // A one-sided call on `win`, whose error handler hears of failures; host buffers get stand-ins
  // too where `host_too` (GDDT_RMA_HOST=gddt).
  StandIns(MPI_Win win, bool host_too);
  // A file read or write: errors are raised on the file's error handler, and host memory is
  // staged under GDDT_FILE_HOST=gddt.
  explicit StandIns(MPI_File file);
  ~StandIns();
  StandIns(const StandIns&) = delete;
  StandIns& operator=(const StandIns&) = delete;

  // Makes the stand-ins the arguments need and points the arguments at them. MPI_SUCCESS, or the
  // error class raised on the communicator or file (a datatype gddt cannot express on device
  // memory). Buffers gddt leaves to the library (host memory, MPI_IN_PLACE, MPI_BOTTOM, null, not
  // significant here, erroneous arguments) are not touched.
  int make(std::initializer_list<Argument> arguments);
  // The process's rank and the size of its group (the counts arrays of MPI_Reduce_scatter).
  int rank() const;
  int local_size() const;
  // After the library's blocking call returned `rc`: copies the results back where it succeeded.
  int finish(int rc);
  // After the library's nonblocking or persistent call returned `rc` and *request: the request
  // takes the stand-ins, which its completion copies back.
  int track(int rc, const MPI_Request* request);
  // After the library's one-sided call succeeded: the stand-ins (null where none were made).
  std::unique_ptr<KeptStandIns> keep();
  // After the library's *_begin of a split collective on the file returned `rc`: the stand-ins
  // wait for its *_end.
  int keep_until_end(int rc);
  // At the *_end: takes the stand-ins the file's *_begin kept and points the buffer argument at
  // its stand-in (left alone where the *_begin kept none).
  void resume(const void** address);
  void resume(void** address) { resume(const_cast<const void**>(address)); }

 private:
  int raised(Status status) const;  // on the communicator, the window or the file

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  MPI_File file_ = MPI_FILE_NULL;
  int root_ = call_buffers::kNotRooted;
  Filled filled_ = Filled::kNow;
  // GDDT_COLLECTIVE_HOST=gddt, GDDT_RMA_HOST=gddt or GDDT_FILE_HOST=gddt for the call's kind
  bool host_staged_ = false;
  std::unique_ptr<Staged> staged_;
};

}  // namespace gddt::mpi::collective
