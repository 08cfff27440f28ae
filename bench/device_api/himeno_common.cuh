// What the three Himeno versions share: the grid and its 2-D decomposition over the ranks in j
// and k, the face datatypes, the Jacobi kernel (Himeno's 19-point pressure update, 34 flops a
// point) and the report. Himeno's coefficient arrays hold constants (a = 1, 1, 1, 1/6,
// b = 0, c = 1, bnd = 1, wrk1 = 0), so they are folded into the kernel: every version does
// the same arithmetic on p and its copy, and the residual is summed in the same order (per
// tile of 256 (j, k) columns and 16 i planes, tiles in order), so the three print the same gosa.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace himeno {

constexpr int kThreads = 256;
constexpr int kChunkI = 16;  // i planes of a tile: enough tiles to fill the GPU
constexpr float kOmega = 0.8f;

#define HIMENO_CHECK(ok, what)                           \
  do {                                                   \
    if (!(ok)) {                                         \
      std::fprintf(stderr, "himeno: %s failed\n", what); \
      MPI_Abort(MPI_COMM_WORLD, 1);                      \
    }                                                    \
  } while (0)

struct Grid {
  int imax, jmax, kmax;        // global points, boundaries included (Himeno's MIMAX, MJMAX, MKMAX)
  int mi, mj, mk;              // local array, one halo layer in j and k
  int j0, k0;                  // global index of local j = 1, k = 1
  int nj, nk;                  // local interior points in j and k
  int column_tiles;            // tiles of kThreads (j, k) columns
  int ntiles;                  // column tiles times chunks of kChunkI planes in i
  int lo_j, hi_j, lo_k, hi_k;  // neighbours (MPI_PROC_NULL at the domain's edge)
  MPI_Comm cart;
  int rank;
  int iterations;
};

// Size from argv[1] (XS, S, M, L; M by default) and iterations from argv[2].
inline Grid make_grid(int argc, char** argv) {
  Grid g{};
  const std::string size = argc > 1 ? argv[1] : "M";
  if (size == "XS")
    g.imax = 33, g.jmax = 33, g.kmax = 65;
  else if (size == "S")
    g.imax = 65, g.jmax = 65, g.kmax = 129;
  else if (size == "L")
    g.imax = 257, g.jmax = 257, g.kmax = 513;
  else
    g.imax = 129, g.jmax = 129, g.kmax = 257;
  g.iterations = argc > 2 ? std::atoi(argv[2]) : 200;
  int nranks = 0, dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  MPI_Dims_create(nranks, 2, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &g.cart);
  MPI_Comm_rank(g.cart, &g.rank);
  MPI_Cart_coords(g.cart, g.rank, 2, coords);
  MPI_Cart_shift(g.cart, 0, 1, &g.lo_j, &g.hi_j);
  MPI_Cart_shift(g.cart, 1, 1, &g.lo_k, &g.hi_k);
  auto split = [](int interior, int parts, int index, int* first, int* count) {
    *count = interior / parts + (index < interior % parts ? 1 : 0);
    *first = 1 + index * (interior / parts) + (index < interior % parts ? index : interior % parts);
  };
  split(g.jmax - 2, dims[0], coords[0], &g.j0, &g.nj);
  split(g.kmax - 2, dims[1], coords[1], &g.k0, &g.nk);
  g.mi = g.imax, g.mj = g.nj + 2, g.mk = g.nk + 2;
  g.column_tiles = (g.nj * g.nk + kThreads - 1) / kThreads;
  g.ntiles = g.column_tiles * ((g.imax - 2 + kChunkI - 1) / kChunkI);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    // Every rank sees the same machine: all leave cleanly with 77 (the tests' skip code). Through
    // MPI_Abort, MPICH's launcher may kill the ranks before their last line reaches it.
    std::printf("himeno: finding a GPU failed\n");
    std::fflush(stdout);
    MPI_Finalize();
    std::exit(77);
  }
  cudaSetDevice(g.rank % devices);
  return g;
}

__host__ __device__ inline size_t points(const Grid& g) { return static_cast<size_t>(g.mi) * g.mj * g.mk; }
__host__ __device__ inline size_t at(const Grid& g, int i, int j, int k) {
  return (static_cast<size_t>(i) * g.mj + j) * g.mk + k;
}

// Himeno's initial pressure, i^2 / (imax - 1)^2, halos and boundaries included.
__global__ void init(Grid g, float* p, float* wrk2) {
  const size_t n = points(g);
  for (size_t x = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; x < n; x += gridDim.x * blockDim.x) {
    const int i = static_cast<int>(x / (static_cast<size_t>(g.mj) * g.mk));
    p[x] = wrk2[x] = static_cast<float>(i * i) / static_cast<float>((g.imax - 1) * (g.imax - 1));
  }
}

// One tile: thread t updates interior column (j, k) for kChunkI planes of i into wrk2 and the
// block's sum of squared residuals goes to partial[tile] (a fixed tree: the same sum in every
// version). Needs kThreads threads.
__device__ inline void jacobi_tile(const Grid& g, const float* __restrict__ p, float* __restrict__ wrk2,
                                   double* partial, int tile) {
  __shared__ double sums[kThreads];
  const int column = tile % g.column_tiles * kThreads + threadIdx.x;
  const int first = 1 + tile / g.column_tiles * kChunkI, last = min(first + kChunkI, g.imax - 1);
  double gosa = 0.0;
  if (column < g.nj * g.nk) {
    const int j = 1 + column / g.nk, k = 1 + column % g.nk;
    const size_t sj = g.mk, si = static_cast<size_t>(g.mj) * g.mk;
    for (int i = first; i < last; ++i) {
      const size_t c = at(g, i, j, k);
      // a = (1, 1, 1, 1/6), b = 0, c = 1, bnd = 1, wrk1 = 0: Himeno's 34 flops.
      const float s0 = 1.0f * p[c + si] + 1.0f * p[c + sj] + 1.0f * p[c + 1] +
                       0.0f * (p[c + si + sj] - p[c + si - sj] - p[c - si + sj] + p[c - si - sj]) +
                       0.0f * (p[c + sj + 1] - p[c - sj + 1] - p[c + sj - 1] + p[c - sj - 1]) +
                       0.0f * (p[c + si + 1] - p[c - si + 1] - p[c + si - 1] + p[c - si - 1]) + 1.0f * p[c - si] +
                       1.0f * p[c - sj] + 1.0f * p[c - 1] + 0.0f;
      const float ss = (s0 * (1.0f / 6.0f) - p[c]) * 1.0f;
      gosa += static_cast<double>(ss) * ss;
      wrk2[c] = p[c] + kOmega * ss;
    }
  }
  sums[threadIdx.x] = gosa;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[tile] = sums[0];
  __syncthreads();
}

// Copies the interior of wrk2 back into p (Himeno's second loop), grid-stride over its points.
__device__ inline void copy_back(const Grid& g, float* p, const float* wrk2, int first, int stride) {
  const int columns = g.nj * g.nk;
  for (int x = first; x < (g.imax - 2) * columns; x += stride) {
    const int i = 1 + x / columns, j = 1 + x % columns / g.nk, k = 1 + x % g.nk;
    p[at(g, i, j, k)] = wrk2[at(g, i, j, k)];
  }
}

__device__ inline double sum_partials(const double* partial, int n) {
  double sum = 0.0;
  for (int t = 0; t < n; ++t) sum += partial[t];
  return sum;
}

__global__ void jacobi_kernel(Grid g, const float* p, float* wrk2, double* partial) {
  for (int tile = blockIdx.x; tile < g.ntiles; tile += gridDim.x) jacobi_tile(g, p, wrk2, partial, tile);
}
__global__ void copy_kernel(Grid g, float* p, const float* wrk2) {
  copy_back(g, p, wrk2, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x);
}
__global__ void sum_kernel(const double* partial, int n, double* gosa) { *gosa = sum_partials(partial, n); }

// The faces as datatypes on p (offsets inside them): k faces carry interior j, j faces every k,
// so exchanging k first and j second fills the (j, k) corners the 19-point stencil reads.
struct Faces {
  MPI_Datatype send_lo_k, send_hi_k, recv_lo_k, recv_hi_k, send_lo_j, send_hi_j, recv_lo_j, recv_hi_j;
};

inline MPI_Datatype face(const Grid& g, bool j_face, int at_index) {
  const int sizes[3] = {g.mi, g.mj, g.mk};
  const int subsizes[3] = {g.mi, j_face ? 1 : g.nj, j_face ? g.mk : 1};
  const int starts[3] = {0, j_face ? at_index : 1, j_face ? 0 : at_index};
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &t);
  MPI_Type_commit(&t);
  return t;
}

inline Faces make_faces(const Grid& g) {
  return Faces{face(g, false, 1), face(g, false, g.nk), face(g, false, 0), face(g, false, g.nk + 1),
               face(g, true, 1),  face(g, true, g.nj),  face(g, true, 0),  face(g, true, g.nj + 1)};
}

inline void free_faces(Faces* f) {
  for (MPI_Datatype* t : {&f->send_lo_k, &f->send_hi_k, &f->recv_lo_k, &f->recv_hi_k, &f->send_lo_j, &f->send_hi_j,
                          &f->recv_lo_j, &f->recv_hi_j})
    MPI_Type_free(t);
}

inline double* device_partials(const Grid& g) {
  double* partial = nullptr;
  HIMENO_CHECK(cudaMalloc(&partial, sizeof(double) * g.ntiles) == cudaSuccess, "cudaMalloc");
  return partial;
}

// Allocates p and wrk2 and fills them.
inline void make_arrays(const Grid& g, float** p, float** wrk2) {
  HIMENO_CHECK(cudaMalloc(p, sizeof(float) * points(g)) == cudaSuccess, "cudaMalloc");
  HIMENO_CHECK(cudaMalloc(wrk2, sizeof(float) * points(g)) == cudaSuccess, "cudaMalloc");
  init<<<1024, kThreads>>>(g, *p, *wrk2);
  HIMENO_CHECK(cudaDeviceSynchronize() == cudaSuccess, "init");
}

// Himeno's report: MFLOPS by its count of 34 flops per interior point and iteration.
inline void report(const Grid& g, const char* version, double seconds, double gosa) {
  if (g.rank != 0) return;
  int nranks = 0;
  MPI_Comm_size(g.cart, &nranks);
  const double flops = 34.0 * (g.imax - 2) * (g.jmax - 2) * (g.kmax - 2) * g.iterations;
  std::printf(
      "himeno %-8s grid %dx%dx%d ranks %d iterations %d time %.4f s  %.2f us/iteration  %.1f MFLOPS  "
      "gosa %.12e\n",
      version, g.imax, g.jmax, g.kmax, nranks, g.iterations, seconds, seconds * 1e6 / g.iterations,
      flops / seconds * 1e-6, gosa);
}

}  // namespace himeno
