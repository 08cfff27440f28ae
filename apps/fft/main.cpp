// gddt-app-fft: the pencil transposes of a distributed 3-D FFT (2DECOMP&FFT's, heFFTe's and
// mpi4py-fft's communication): an iteration transposes an n^3 array of complex doubles from x-
// to y- to z-pencils and back, in two versions: "hand", what FFT codes write today (pack kernels
// and MPI_Alltoallv of contiguous blocks, through pinned host memory where the library is not
// CUDA-aware), and "alltoallw", MPI_Alltoallw of subarray datatypes straight from device memory
// through gddt. Only the transposes are timed (no FFT is computed): the whole iteration is
// communication. Each version starts with the y- and z-pencils poisoned (NaN) and must end with
// every z-pencil element the reference transpose puts there, the x-pencils as they started, and
// the same bits as the first version.
//   mpiexec -n P gddt-app-fft [--mib M | --n N] [--grid P1xP2 ...]
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app.hpp"
#include "cuda_aware.hpp"
#include "fingerprint.hpp"
#include "kernel.hpp"
#include "transpose.hpp"

namespace {

using namespace fft;

// The x -> y -> z -> y -> x transposes of one version, on sub-communicators of `comm` (a
// duplicate of the process grid's).
class Round {
 public:
  Round(const std::string& version, const Pencils& p, MPI_Comm comm, const apps::Place& place) {
    const int keep_rows[2] = {1, 0}, keep_columns[2] = {0, 1};
    MPI_Cart_sub(comm, keep_rows, &row_);
    MPI_Cart_sub(comm, keep_columns, &column_);
    const bool stage = place.gpu && !apps::library_takes_device_memory();
    auto make = [&](const Pencil& from, const Pencil& to, MPI_Comm within, int peers) {
      const Blocks b = blocks(from, to, peers);
      return version == "hand" ? make_hand_transpose(b, within, place.arrays, stage) : make_gddt_transpose(b, within);
    };
    xy_ = make(p.x, p.y, row_, p.dims[0]);
    yz_ = make(p.y, p.z, column_, p.dims[1]);
    zy_ = make(p.z, p.y, column_, p.dims[1]);
    yx_ = make(p.y, p.x, row_, p.dims[0]);
  }
  ~Round() {
    xy_.reset(), yz_.reset(), zy_.reset(), yx_.reset();
    MPI_Comm_free(&row_);
    MPI_Comm_free(&column_);
  }

  void run(void* x, void* y, void* z) {
    xy_->run(x, y);
    yz_->run(y, z);
    zy_->run(z, y);
    yx_->run(y, x);
  }

 private:
  MPI_Comm row_, column_;
  std::unique_ptr<Transpose> xy_, yz_, zy_, yx_;
};

int run(const Pencils& p, const apps::Place& place, const apps::Options& options,
        const std::vector<std::string>& versions) {
  constexpr int kComplex = 16;
  const std::size_t x_bytes = p.x.elements() * kComplex, y_bytes = p.y.elements() * kComplex,
                    z_bytes = p.z.elements() * kComplex;
  apps::Buffer x(place.arrays, x_bytes), y(place.arrays, y_bytes), z(place.arrays, z_bytes);
  // What the x-pencils hold before and after a round, and what the z-pencils hold in between.
  fill_pencil(p.z, p.n, z.data());
  apps::synchronize();
  const std::uint64_t expected_z = apps::fingerprint(z.data(), z_bytes);
  fill_pencil(p.x, p.n, x.data());
  apps::synchronize();
  const std::uint64_t expected_x = apps::fingerprint(x.data(), x_bytes);
  char case_name[64];
  std::snprintf(case_name, sizeof case_name, "pencils %dx%d", p.dims[0], p.dims[1]);
  apps::Report report(p.cart, options, "fft", case_name, std::to_string(p.n) + "^3", static_cast<double>(x_bytes));
  return apps::run_versions(p.cart, report, versions, "hand", [&](const std::string& version, MPI_Comm comm) {
    Round round(version, p, comm, place);
    fill_pencil(p.x, p.n, x.data());
    y.fill(0xff), z.fill(0xff);
    apps::synchronize();
    apps::Outcome outcome;
    outcome.measured = apps::measure(
        comm, static_cast<int>(options.number("warmup")), static_cast<int>(options.number("iterations")),
        [&] { round.run(x.data(), y.data(), z.data()); }, [] {});
    outcome.fingerprint = apps::fingerprint(z.data(), z_bytes);
    outcome.right = outcome.fingerprint == expected_z && apps::fingerprint(x.data(), x_bytes) == expected_x;
    outcome.check = "reference transpose, round trip";
    return outcome;
  });
}

}  // namespace

int main(int argc, char** argv) {
  return apps::run_app(
      argc, argv, "mpiexec -n P gddt-app-fft [--name value ...]; versions: hand, alltoallw",
      {{"mib", "16", "MiB of one pencil a rank, which sets n where --n is 0"},
       {"n", "0", "the global edge (a multiple of P1 and P2)"},
       {"grid", "auto", "process grid P1xP2 (auto: MPI_Dims_create)"}},
      {"hand", "alltoallw"},
      [](const apps::Options& options, const apps::Place& place, const std::vector<std::string>& versions) {
        Pencils pencils;
        if (!make_pencils(MPI_COMM_WORLD, static_cast<int>(options.number("n")), std::atof(options.text("mib").c_str()),
                          options.text("grid"), &pencils)) {
          std::fprintf(stderr, "gddt-app-fft: a grid or n that does not fit the ranks\n");
          return 2;
        }
        const int status = run(pencils, place, options, versions);
        MPI_Comm_free(&pencils.cart);
        return status;
      });
}
