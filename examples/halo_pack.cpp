// gddt demo: the faces of a 3-D grid described by MPI_Type_create_subarray, packed with plain
// MPI_Pack straight from GPU memory (host memory where no GPU is present) and exchanged
// around a ring of ranks with MPI_Unpack into the neighbour's ghost layer. Nothing here
// knows about gddt except the line that prints where the grid lives.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gddt/gddt.h"

#ifdef GDDT_EXAMPLE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

struct Grid {
  int nx, ny, nz;  // x fastest
  std::size_t cells() const { return static_cast<std::size_t>(nx) * ny * nz; }
  std::size_t index(int i, int j, int k) const { return (static_cast<std::size_t>(k) * ny + j) * nx + i; }
};

double cell_value(int rank, int i, int j, int k) { return rank * 1e9 + k * 1e6 + j * 1e3 + i; }

bool use_gpu() {
#ifdef GDDT_EXAMPLE_CUDA
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
#else
  return false;
#endif
}

void* grid_alloc(std::size_t bytes, bool gpu) {
#ifdef GDDT_EXAMPLE_CUDA
  void* p = nullptr;
  if (gpu) return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
#endif
  (void)gpu;
  return std::malloc(bytes);
}

void grid_free(void* p, bool gpu) {
#ifdef GDDT_EXAMPLE_CUDA
  if (gpu) { cudaFree(p); return; }
#endif
  (void)gpu;
  std::free(p);
}

void copy(void* dst, const void* src, std::size_t bytes, bool gpu) {
#ifdef GDDT_EXAMPLE_CUDA
  if (gpu) { cudaMemcpy(dst, src, bytes, cudaMemcpyDefault); return; }
#endif
  (void)gpu;
  std::memcpy(dst, src, bytes);
}

// The face of cells with one coordinate fixed: axis 0 = x, 1 = y, 2 = z.
MPI_Datatype face_type(const Grid& g, int axis, int at) {
  int sizes[3] = {g.nz, g.ny, g.nx};  // C order: the last dimension is x, the fastest
  int subsizes[3] = {g.nz, g.ny, g.nx};
  int starts[3] = {0, 0, 0};
  subsizes[2 - axis] = 1;
  starts[2 - axis] = at;
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

// The expected packed face: every cell of the face in C order (z slowest, x fastest).
std::vector<double> expected_face(const Grid& g, int rank, int axis, int at) {
  std::vector<double> v;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        int c[3] = {i, j, k};
        if (c[axis] == at) v.push_back(cell_value(rank, i, j, k));
      }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? std::max(4, std::atoi(argv[1])) : 128;
  const Grid g{n, n, n};
  const bool gpu = use_gpu();

  std::vector<double> host(g.cells());
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) host[g.index(i, j, k)] = cell_value(rank, i, j, k);
  auto* grid = static_cast<double*>(grid_alloc(g.cells() * sizeof(double), gpu));
  if (grid == nullptr) MPI_Abort(MPI_COMM_WORLD, 1);
  copy(grid, host.data(), g.cells() * sizeof(double), gpu);

  gddt_memory_type_t where = GDDT_MEMORY_HOST;
  int device = -1;
  gddt_memory_classify(grid, &where, &device);
  if (rank == 0)
    std::printf("gddt %s demo: %d ranks, %dx%dx%d grid of doubles in %s memory\n\n", gddt_version_string(),
                size, n, n, n, gddt_memory_type_name(where));

  // 1. Pack each face straight from the grid into a host buffer and check every value.
  int failures = 0;
  const char* axis_name[3] = {"x", "y", "z"};
  if (rank == 0) std::printf("%-8s %12s %12s %10s  %s\n", "face", "bytes", "median us", "GB/s", "check");
  for (int axis = 0; axis < 3; ++axis) {
    MPI_Datatype face = face_type(g, axis, 1);
    int bytes = 0;
    MPI_Pack_size(1, face, MPI_COMM_WORLD, &bytes);
    std::vector<double> packed(static_cast<std::size_t>(bytes) / sizeof(double));
    std::vector<double> times;
    for (int rep = 0; rep < 11; ++rep) {
      int position = 0;
      auto t0 = std::chrono::steady_clock::now();
      MPI_Pack(grid, 1, face, packed.data(), bytes, &position, MPI_COMM_WORLD);
      times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    bool ok = packed == expected_face(g, rank, axis, 1);
    failures += !ok;
    if (rank == 0)
      std::printf("%-8s %12d %12.1f %10.2f  %s\n", axis_name[axis], bytes, times[times.size() / 2],
                  bytes / times[times.size() / 2] / 1e3, ok ? "ok" : "WRONG");
    MPI_Type_free(&face);
  }

  // 2. Halo exchange around the ring: send my x = nx-2 face, unpack the left neighbour's
  //    face into my ghost layer x = 0, on the GPU when there is one.
  MPI_Datatype inner = face_type(g, 0, g.nx - 2), ghost = face_type(g, 0, 0);
  int bytes = 0;
  MPI_Pack_size(1, inner, MPI_COMM_WORLD, &bytes);
  std::vector<char> out(static_cast<std::size_t>(bytes)), in(static_cast<std::size_t>(bytes));
  int position = 0;
  MPI_Pack(grid, 1, inner, out.data(), bytes, &position, MPI_COMM_WORLD);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Sendrecv(out.data(), position, MPI_PACKED, right, 7, in.data(), bytes, MPI_PACKED, left, 7,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  position = 0;
  MPI_Unpack(in.data(), bytes, &position, grid, 1, ghost, MPI_COMM_WORLD);
  copy(host.data(), grid, g.cells() * sizeof(double), gpu);
  bool halo_ok = true;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i) {
        double want = i == 0 ? cell_value(left, g.nx - 2, j, k) : cell_value(rank, i, j, k);
        halo_ok = halo_ok && host[g.index(i, j, k)] == want;
      }
  failures += !halo_ok;
  MPI_Type_free(&inner);
  MPI_Type_free(&ghost);

  int total = 0;
  MPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("\nhalo exchange around %d ranks: %s\ndemo: %s\n", size, total ? "WRONG" : "ok",
                total ? "FAILED" : "all checks passed");
  grid_free(grid, gpu);
  MPI_Finalize();
  return total ? 1 : 0;
}
