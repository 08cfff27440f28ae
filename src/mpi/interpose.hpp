// What every shim of entry_points.txt shares (the shims themselves are generated from it): the
// export marker, whether gddt steps aside, and what a call that may block does around the
// library's call.
#pragma once

#include <atomic>

#include "core/config.hpp"
#include "protocol/deferred.hpp"
#include "protocol/requests.hpp"
#include "type/datatype.hpp"

#define GDDT_MPI_ENTRY extern "C" __attribute__((visibility("default")))

namespace gddt::mpi {

// GDDT_DISABLE=1: gddt passes every call straight to MPI.
inline bool disabled() {
  static const bool off = config::settings().disable;
  return off;
}

namespace detail {
extern std::atomic<bool> finalized;
}

// Whether an intercepted call goes to the library unchanged: gddt is disabled, or MPI is
// finalized (the library then reports the call as erroneous in its own words).
inline bool stepped_aside() { return detail::finalized.load(std::memory_order_relaxed) || disabled(); }

// A datatype constructor (a `made` row) returned `datatype`: the library may have handed out the
// handle of a type freed earlier, so nothing gddt knew of that handle holds any more.
inline void made_datatype(MPI_Datatype datatype) { type::on_made(datatype); }

// Around the library's call of a function that may wait for another process: every send gddt
// holds back starts first, so no peer waits in that call for a message this process has not
// posted; requests the user freed whose transfers the call completed are finished after it, so
// their data lands as it would without gddt.
class BlockingCall {
 public:
  BlockingCall() { protocol::deferred::before_blocking(); }
  ~BlockingCall() { protocol::requests::progress_detached(); }
  BlockingCall(const BlockingCall&) = delete;
  BlockingCall& operator=(const BlockingCall&) = delete;
};

}  // namespace gddt::mpi
