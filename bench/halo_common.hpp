// What the 3-D halo benchmarks share (gddt-bench-halo, gddt-bench-onesided-halo): two ranks, an
// n^3 float grid in device memory each, six interior faces (MPI_Type_create_subarray, the other
// two axes without their ghost layers) into the peer's ghost layers; the command line, the check
// of the ghost layers after one exchange, and the table of timings of many.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace gddt_bench::halo {

constexpr int kFaces = 6;

inline bool cuda_ok(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "halo benchmark: %s: %s\n", what, cudaGetErrorString(error));
  return false;
}

// Face f lies on axis f / 2; side 0 is the low end. Interior faces are sent, ghost layers received.
inline MPI_Datatype face_type(int n, int face, bool ghost) {
  const int axis = face / 2;
  const bool high = face % 2 == 1;
  int sizes[3] = {n, n, n}, subsizes[3] = {n - 2, n - 2, n - 2}, starts[3] = {1, 1, 1};
  subsizes[axis] = 1;
  starts[axis] = ghost ? (high ? n - 1 : 0) : (high ? n - 2 : 1);
  MPI_Datatype type;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &type);
  MPI_Type_commit(&type);
  return type;
}

inline float initial_value(int rank, std::size_t index) { return static_cast<float>(rank * 3000000 + index % 3000000); }

// The peer sends its high face of an axis into our low ghost layer and the reverse (tag: the
// receiving face), as neighbours along a periodic line of two ranks do.
inline int opposite(int face) { return face ^ 1; }

// This rank's grid and its run: MPI is initialized, the GPU chosen, the grid allocated.
struct Grid {
  float* device = nullptr;
  int n = 0;
  int iterations = 0;
  int rank = 0;
  int peer = 0;
  std::size_t cells() const { return static_cast<std::size_t>(n) * n * n; }
};

// Reads `program [n] [iterations]` (defaults 128 and `iterations`, n up to `largest`). Returns 0,
// or the exit code after MPI_Finalize where the run cannot go on.
inline int start(int* argc, char*** argv, const char* program, int iterations, int largest, Grid* grid) {
  MPI_Init(argc, argv);
  int ranks = 0, devices = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &grid->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  grid->n = *argc > 1 ? std::atoi((*argv)[1]) : 128;
  grid->iterations = *argc > 2 ? std::atoi((*argv)[2]) : iterations;
  grid->peer = 1 - grid->rank;
  if (ranks != 2 || grid->n < 4 || grid->n > largest || grid->iterations < 5 ||
      !cuda_ok(cudaGetDeviceCount(&devices), "cudaGetDeviceCount") || devices == 0) {
    if (grid->rank == 0)
      std::fprintf(stderr, "usage: mpiexec -n 2 %s [n: 4..%d] [iterations >= 5] (needs a GPU)\n", program, largest);
    MPI_Finalize();
    return 2;
  }
  cuda_ok(cudaSetDevice(grid->rank % devices), "cudaSetDevice");
  if (!cuda_ok(cudaMalloc(&grid->device, grid->cells() * sizeof(float)), "cudaMalloc")) MPI_Abort(MPI_COMM_WORLD, 1);
  return 0;
}

// Ghost cells of `host` (this rank's grid after an exchange) that differ from the peer's interior
// faces.
inline long wrong_ghost_cells(const std::vector<float>& host, int n, int peer) {
  auto at = [n](int i, int j, int k) { return (static_cast<std::size_t>(i) * n + j) * n + k; };
  long wrong = 0;
  for (int f = 0; f < kFaces; ++f) {
    const int axis = f / 2;
    const bool high = f % 2 == 1;
    const int ghost = high ? n - 1 : 0;
    const int source = high ? 1 : n - 2;  // the peer's opposite interior face
    for (int a = 1; a < n - 1; ++a) {
      for (int b = 1; b < n - 1; ++b) {
        int g[3], s[3];
        const int other1 = axis == 0 ? 1 : 0, other2 = axis == 2 ? 1 : 2;
        g[axis] = ghost;
        s[axis] = source;
        g[other1] = s[other1] = a;
        g[other2] = s[other2] = b;
        if (host[at(g[0], g[1], g[2])] != initial_value(peer, at(s[0], s[1], s[2]))) ++wrong;
      }
    }
  }
  return wrong;
}

// Fills the grid with this rank's values, calls `stored` (what the method needs after stores into
// the grid), runs one exchange and counts the ghost cells that differ from the peer's faces on any
// rank; a failed CUDA call counts as all wrong.
inline long checked_exchange(const Grid& grid, const std::function<void()>& stored, const std::function<void()>& run) {
  std::vector<float> host(grid.cells());
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = initial_value(grid.rank, i);
  const std::size_t bytes = host.size() * sizeof(float);
  long wrong = 1L << 40;
  if (cuda_ok(cudaMemcpy(grid.device, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy")) {
    stored();
    run();
    if (cuda_ok(cudaMemcpy(host.data(), grid.device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy"))
      wrong = wrong_ghost_cells(host, grid.n, grid.peer);
  }
  long wrong_anywhere = 0;
  MPI_Allreduce(&wrong, &wrong_anywhere, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  return wrong_anywhere;
}

// Microseconds of `iterations` runs, sorted, each after a barrier; the first fifth more warm up.
inline std::vector<double> timed(int iterations, const std::function<void()>& run) {
  std::vector<double> us;
  for (int i = 0; i < iterations + iterations / 5; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    run();
    if (i >= iterations / 5) us.push_back((MPI_Wtime() - start) * 1e6);
  }
  std::sort(us.begin(), us.end());
  return us;
}

struct Method {
  std::string name;
  std::function<void()> run;
};

// Checks and times every method, printing (rank 0) a row each: median, 10th and 90th percentile,
// the median's ratio to the first method's. Returns 1 where a method's ghost layers were wrong.
inline int compare(const Grid& grid, const std::vector<Method>& methods, const std::function<void()>& stored) {
  if (grid.rank == 0) std::printf("%-28s %10s %10s %10s %10s  %s\n", "method", "median", "p10", "p90", "ratio", "data");
  int status = 0;
  double first = 0;
  for (const Method& method : methods) {
    const long wrong = checked_exchange(grid, stored, method.run);
    const std::vector<double> us = timed(grid.iterations, method.run);
    const double median = us[us.size() / 2];
    if (first == 0) first = median;
    if (wrong != 0) status = 1;
    if (grid.rank == 0) {
      std::printf("%-28s %10.1f %10.1f %10.1f %10.2f  %s\n", method.name.c_str(), median, us[us.size() / 10],
                  us[us.size() * 9 / 10], median / first, wrong == 0 ? "checked" : "WRONG");
    }
  }
  return status;
}

}  // namespace gddt_bench::halo
