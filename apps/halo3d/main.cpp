// gddt-app-halo3d: a 7- or 27-point stencil on a periodic 3-D grid of doubles split over a 3-D
// process grid, exchanging faces (and, for 27 points, edges and corners) every sweep, in the
// versions exchange.hpp describes: "hand", the way such codes are written today (one fused pack
// kernel for every region, contiguous sends, pinned host staging where the library is not
// CUDA-aware), and through gddt with subarray datatypes on device memory, "p2p"
// (MPI_Isend/MPI_Irecv), "neighbor" (MPI_Neighbor_alltoallw on a graph of the directions) and
// "cartesian" (MPI_Neighbor_alltoallw on the Cartesian communicator). Every version starts from
// the same grid (ghost layers NaN) and must end bit for bit where the first does and, up to
// --reference-max points, where a serial sweep of the whole grid does.
//   mpiexec -n P gddt-app-halo3d [--n N --points 7|27 --grid PxQxR ...]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app.hpp"
#include "cuda_aware.hpp"
#include "exchange.hpp"
#include "jacobi.hpp"
#include "kernel.hpp"
#include "reference.hpp"

namespace {

using namespace halo3d;

std::unique_ptr<Exchange> make_exchange(const std::string& version, const Domain& d, MPI_Comm comm,
                                        const apps::Place& place) {
  if (version == "hand")
    return make_hand_exchange(d, comm, place.arrays, place.gpu && !apps::library_takes_device_memory());
  if (version == "p2p") return make_p2p_exchange(d, comm);
  if (version == "cartesian") return make_cartesian_exchange(d, comm);
  return make_neighbor_exchange(d, comm);
}

int run(const Domain& d, const apps::Place& place, const apps::Options& options,
        const std::vector<std::string>& versions) {
  const int warmup = static_cast<int>(options.number("warmup"));
  const int iterations = static_cast<int>(options.number("iterations"));
  const std::size_t bytes = d.elements() * sizeof(double);
  int ranks = 0;
  MPI_Comm_size(d.cart, &ranks);
  const bool check_reference =
      static_cast<double>(ranks) * d.elements() <= static_cast<double>(options.number("reference-max"));
  const std::vector<double> expected =
      check_reference ? reference_block(d, warmup + iterations) : std::vector<double>();
  char case_name[64];
  std::snprintf(case_name, sizeof case_name, "%d-point %dx%dx%d", d.points, d.dims[0], d.dims[1], d.dims[2]);
  apps::Report report(d.cart, options, "halo3d", case_name, std::to_string(d.n) + "^3", static_cast<double>(bytes));
  apps::Buffer a(place.arrays, bytes), b(place.arrays, bytes);
  const apps::Reference reference{
      d.array(), {{{1, 1, 1}}, {{d.n, d.n, d.n}}}, check_reference ? expected.data() : nullptr, sizeof(double)};
  return apps::run_versions(d.cart, report, versions, "hand", [&](const std::string& version, MPI_Comm comm) {
    std::unique_ptr<Exchange> exchange = make_exchange(version, d, comm, place);
    return apps::run_jacobi(
        comm, warmup, iterations, a, b, reference, [&](void* array) { initialize(d, static_cast<double*>(array)); },
        [&](void* in) { exchange->run(static_cast<double*>(in)); },
        [&](const void* in, void* out) { sweep(d, static_cast<const double*>(in), static_cast<double*>(out)); });
  });
}

}  // namespace

int main(int argc, char** argv) {
  return apps::run_app(
      argc, argv, "mpiexec -n P gddt-app-halo3d [--name value ...]; versions: hand, p2p, neighbor, cartesian",
      {{"n", "128", "interior points a side of a rank's block"},
       {"points", "27", "the stencil: 7 (faces) or 27 (faces, edges, corners)"},
       {"grid", "auto", "process grid PxQxR (auto: MPI_Dims_create)"},
       {"reference-max", "4194304", "check against a serial sweep of the whole grid up to this many points"}},
      {"hand", "p2p", "neighbor", "cartesian"},
      [](const apps::Options& options, const apps::Place& place, std::vector<std::string> versions) {
        Domain domain;
        if (!make_domain(MPI_COMM_WORLD, static_cast<int>(options.number("n")),
                         static_cast<int>(options.number("points")), options.text("grid"), &domain)) {
          std::fprintf(stderr, "gddt-app-halo3d: bad points or a grid that does not fit the ranks\n");
          return 2;
        }
        const bool short_period = domain.dims[0] <= 2 || domain.dims[1] <= 2 || domain.dims[2] <= 2;
        const auto cartesian = std::find(versions.begin(), versions.end(), "cartesian");
        if (cartesian != versions.end() && short_period && !library_orders_cartesian_blocks()) {
          versions.erase(cartesian);
          if (domain.coords[0] + domain.coords[1] + domain.coords[2] == 0)
            std::printf(
                "halo3d cartesian: not run: this library's MPI_Neighbor_alltoallw swaps the blocks of a periodic "
                "dimension of extent 1 or 2 (MPI-4.0 orders them)\n");
        }
        const int status = versions.empty() ? 2 : run(domain, place, options, versions);
        MPI_Comm_free(&domain.cart);
        return status;
      });
}
