// gddt-app-stencil2d: SHOC's Stencil2D (a 9-point stencil on a matrix split over a 2-D process
// grid, one halo row and column exchanged every sweep), in the two versions of the MVAPICH2
// paper's Table I: "def", the halo columns staged by hand through cudaMemcpy2D, and "gddt",
// MPI_Type_vector columns sent straight from device memory. Each version starts from the same
// matrix (halos towards neighbours poisoned with NaN) and must end bit for bit where the other
// does and, up to --reference-max points, where a serial sweep of the whole matrix does.
//   mpiexec -n P gddt-app-stencil2d [--rows R --cols C --grid PxQ --precision float|double ...]
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app.hpp"
#include "halo.hpp"
#include "jacobi.hpp"
#include "kernel.hpp"
#include "reference.hpp"

namespace {

using namespace stencil2d;

template <typename T>
int run(const Grid& g, const apps::Place& place, const apps::Options& options,
        const std::vector<std::string>& versions) {
  const int warmup = static_cast<int>(options.number("warmup"));
  const int iterations = static_cast<int>(options.number("iterations"));
  const std::size_t bytes = g.elements() * sizeof(T);
  const bool check_reference = static_cast<double>(g.global_rows + 2) * (g.global_cols + 2) <=
                               static_cast<double>(options.number("reference-max"));
  const std::vector<T> expected = check_reference ? reference_block<T>(g, warmup + iterations) : std::vector<T>();
  apps::Report report(g.cart, options, "stencil2d",
                      options.text("precision") + " " + std::to_string(g.dims[0]) + "x" + std::to_string(g.dims[1]),
                      std::to_string(g.rows) + "x" + std::to_string(g.cols), static_cast<double>(bytes));
  apps::Buffer a(place.arrays, bytes), b(place.arrays, bytes);
  // The block as a 3-D array of one plane, for the check of its interior.
  const apps::Reference reference{{{1, g.rows + 2, g.cols + 2}},
                                  {{{0, 1, 1}}, {{1, g.rows, g.cols}}},
                                  check_reference ? expected.data() : nullptr,
                                  sizeof(T)};
  return apps::run_versions(g.cart, report, versions, "def", [&](const std::string& version, MPI_Comm comm) {
    std::unique_ptr<Halo<T>> halo =
        version == "def" ? make_def_halo<T>(g, comm, place.gpu) : make_gddt_halo<T>(g, comm);
    return apps::run_jacobi(
        comm, warmup, iterations, a, b, reference, [&](void* array) { initialize(g, static_cast<T*>(array)); },
        [&](void* in) { halo->exchange(static_cast<T*>(in)); },
        [&](const void* in, void* out) { sweep(g, static_cast<const T*>(in), static_cast<T*>(out)); });
  });
}

}  // namespace

int main(int argc, char** argv) {
  return apps::run_app(
      argc, argv, "mpiexec -n P gddt-app-stencil2d [--name value ...]; versions: def, gddt",
      {{"rows", "4096", "interior rows of a rank's block"},
       {"cols", "4096", "interior columns of a rank's block"},
       {"grid", "auto", "process grid PxQ: P process rows, Q columns (auto: MPI_Dims_create)"},
       {"precision", "float", "float or double"},
       {"reference-max", "16777216", "check against a serial sweep of the whole matrix up to this many points"}},
      {"def", "gddt"},
      [](const apps::Options& options, const apps::Place& place, const std::vector<std::string>& versions) {
        const std::string precision = options.text("precision");
        Grid grid;
        if ((precision != "float" && precision != "double") ||
            !make_grid(MPI_COMM_WORLD, static_cast<int>(options.number("rows")),
                       static_cast<int>(options.number("cols")), options.text("grid"), &grid)) {
          std::fprintf(stderr, "gddt-app-stencil2d: bad precision or a grid that does not fit the ranks\n");
          return 2;
        }
        const int status = precision == "double" ? run<double>(grid, place, options, versions)
                                                 : run<float>(grid, place, options, versions);
        MPI_Comm_free(&grid.cart);
        return status;
      });
}
