// Which plain point-to-point calls go to the library unchanged without gddt looking further: the
// test the shims of fast rows ask first (fast_path.hpp), and the decision behind it.
#pragma once

#include <mpi.h>

#include <atomic>

#include "core/memory.hpp"
#include "protocol/deferred.hpp"
#include "protocol/peer/peers.hpp"
#include "type/datatype.hpp"

namespace gddt::mpi::p2p {

// Which plain calls the library can take unchanged without gddt looking further, settled at
// the first call that needs a decision (kUndecided until then).
enum class Passage : int {
  kUndecided,
  kAll,             // gddt is disabled, or neither a GPU nor GDDT_P2P_HOST=gddt gives it work
  kPlainTypes,      // a CUDA-aware library takes any buffer of a plain named type
  kPlainHostTypes,  // a plain named type on memory known to be host memory
  kNone,            // every call is looked at (GDDT_P2P_HOST=gddt)
};
extern std::atomic<Passage> passage;

// The hot path of ordinary traffic, inline in the send and receive entry points: true when
// the call goes to the library as it is. False sends it the long way, which decides the same
// for everything this does not recognise at a glance. Always inlined, into the shims of fast
// rows (fast_path.hpp) among others, which must stay leaves: their tail calls then keep the
// caller's arguments in place. So the named-type test looks at one slot only, and kAll is
// tested apart, first, where it needs no register of its own.
// Between gddt peers a send of exactly kMarkerBytes and a receive of kMarkerBytes or more need a
// look (protocol/peer/peers.hpp); other plain host traffic passes as ever.
__attribute__((always_inline)) inline bool clear_of_markers(int count, MPI_Datatype datatype, bool receive) {
  if (!protocol::peers::active()) return true;
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * type::plain_named_size_quick(datatype);
  return bytes != 0 && (receive ? bytes < protocol::kMarkerBytes : bytes != protocol::kMarkerBytes);
}

__attribute__((always_inline)) inline bool passes_through(const void* buf, int count, MPI_Datatype datatype,
                                                          bool receive = false) {
  if (protocol::deferred::any()) return false;  // queued sends are started first
  const Passage settled = passage.load(std::memory_order_relaxed);
  if (settled == Passage::kAll) return true;
  if (!clear_of_markers(count, datatype, receive)) return false;
  switch (settled) {
    case Passage::kPlainTypes: return count > 0 && buf != nullptr && type::is_plain_named_quick(datatype);
    case Passage::kPlainHostTypes:
      return count > 0 && buf != nullptr && type::is_plain_named_quick(datatype) && memory::known_host(buf);
    default: return false;
  }
}

// Settles the passage once, at the first call that reaches the slow way (after MPI_Init, so the
// library can be asked whether it is CUDA-aware).
void settle_passage();

// The program made a datatype declaring an OpenCL buffer (opencl_types.hpp): calls of derived
// datatypes are looked at from now on even where nothing else gives gddt work, so a passage
// settled before is settled again.
void note_opencl_types();

}  // namespace gddt::mpi::p2p
