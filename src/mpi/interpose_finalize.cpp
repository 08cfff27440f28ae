// MPI_Finalize as gddt implements it: gddt's held work completed and its resources given back
// before the library's own, and every later call passed to the library (stepped_aside).
#include <mpi.h>

#include <string>

#include "core/config.hpp"
#include "core/counters.hpp"
#include "core/gpu.hpp"
#include "core/hooks.hpp"
#include "core/pool.hpp"
#include "mpi/classify.hpp"
#include "mpi/entry_points.hpp"
#include "mpi/interpose.hpp"
#include "mpi/opencl_types.hpp"
#include "mpi/p2p.hpp"
#include "pack/engine.hpp"
#include "type/datatype.hpp"

namespace gddt::mpi {

std::atomic<bool> detail::finalized{false};

namespace entry {

int Finalize(void) {
  gpu::abandon_if_reset();
  hooks::run(hooks::Event::kFinalize);
  p2p::finalize();
  if (config::settings().stats) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    counters::print("rank " + std::to_string(rank));
  }
  release_resources();
  release_opencl_keyval();
  pack::for_each_backend([](const pack::Backend& backend) {
    if (backend.stop != nullptr) backend.stop();
  });
  type::clear_cache();
  pool::trim();
  detail::finalized.store(true, std::memory_order_relaxed);
  return PMPI_Finalize();
}

}  // namespace entry
}  // namespace gddt::mpi
