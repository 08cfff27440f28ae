#include "mpi/passage.hpp"

#include "core/gpu.hpp"
#include "mpi/interpose.hpp"
#include "protocol/cuda_awareness.hpp"
#include "protocol/route.hpp"

namespace gddt::mpi::p2p {

std::atomic<Passage> passage{Passage::kUndecided};

namespace {
std::atomic<bool> opencl_types{false};
}  // namespace

void settle_passage() {
  if (passage.load(std::memory_order_acquire) != Passage::kUndecided) return;
  const bool host_through_gddt = protocol::host_through_gddt();
  bool opencl = false;
  do {
    // Decided again where an OpenCL type was made meanwhile: a decision without it could let
    // that type's calls pass unexamined.
    opencl = opencl_types.load(std::memory_order_acquire);
    Passage decided = Passage::kPlainHostTypes;
    if (disabled() || !(gpu::available() || host_through_gddt || opencl)) {
      decided = Passage::kAll;
    } else if (host_through_gddt) {
      decided = Passage::kNone;
    } else if (protocol::library_cuda_aware() && protocol::device_route_forced() == protocol::Route::kForward) {
      decided = Passage::kPlainTypes;
    }
    passage.store(decided, std::memory_order_release);
  } while (!opencl && opencl_types.load(std::memory_order_acquire));
}

void note_opencl_types() {
  opencl_types.store(true, std::memory_order_release);
  passage.store(Passage::kUndecided, std::memory_order_release);
}

}  // namespace gddt::mpi::p2p
