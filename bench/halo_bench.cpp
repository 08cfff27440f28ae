// gddt-bench-halo: a 3-D halo exchange between two ranks, each with an n^3 float grid in device
// memory. Six interior faces (MPI_Type_create_subarray, the other two axes without their ghost
// layers) go to the peer's ghost layers, through the plain MPI calls: persistent requests with
// one MPI_Startall, and MPI_Irecv/MPI_Isend; one MPI_Waitall each. Prints the median time of an
// exchange. The received ghost layers are checked against the peer's faces before timing.
//   mpiexec -n 2 gddt-bench-halo [n] [iterations]      (defaults 128, 500)
// Run it twice with -x GDDT_PACK_SETS=0 and =1 to see what packing the faces in one launch saves.
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kFaces = 6;

bool cuda_ok(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "gddt-bench-halo: %s: %s\n", what, cudaGetErrorString(error));
  return false;
}

// Face f lies on axis f / 2; side 0 is the low end. Interior faces are sent, ghost layers received.
MPI_Datatype face_type(int n, int face, bool ghost) {
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

float initial_value(int rank, std::size_t index) { return static_cast<float>(rank * 3000000 + index % 3000000); }

// The peer sends its high face of an axis into our low ghost layer and the reverse (tag: the
// receiving face), as neighbours along a periodic line of two ranks do.
int opposite(int face) { return face ^ 1; }

class Exchange {
 public:
  Exchange(float* grid, int n, int peer) : grid_(grid), peer_(peer) {
    for (int f = 0; f < kFaces; ++f) {
      interior_[f] = face_type(n, f, false);
      ghost_[f] = face_type(n, f, true);
    }
    for (int f = 0; f < kFaces; ++f) {
      MPI_Recv_init(grid_, 1, ghost_[f], peer_, f, MPI_COMM_WORLD, &persistent_[f]);
      MPI_Send_init(grid_, 1, interior_[opposite(f)], peer_, f, MPI_COMM_WORLD, &persistent_[kFaces + f]);
    }
  }
  ~Exchange() {
    for (MPI_Request& request : persistent_) MPI_Request_free(&request);
    for (int f = 0; f < kFaces; ++f) {
      MPI_Type_free(&interior_[f]);
      MPI_Type_free(&ghost_[f]);
    }
  }
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  void startall() {
    MPI_Startall(2 * kFaces, persistent_);
    MPI_Waitall(2 * kFaces, persistent_, MPI_STATUSES_IGNORE);
  }
  void nonblocking() {
    MPI_Request requests[2 * kFaces];
    for (int f = 0; f < kFaces; ++f) MPI_Irecv(grid_, 1, ghost_[f], peer_, f, MPI_COMM_WORLD, &requests[f]);
    for (int f = 0; f < kFaces; ++f)
      MPI_Isend(grid_, 1, interior_[opposite(f)], peer_, f, MPI_COMM_WORLD, &requests[kFaces + f]);
    MPI_Waitall(2 * kFaces, requests, MPI_STATUSES_IGNORE);
  }

 private:
  float* grid_;
  int peer_;
  MPI_Datatype interior_[kFaces];
  MPI_Datatype ghost_[kFaces];
  MPI_Request persistent_[2 * kFaces];
};

// Fills the grid with this rank's values, runs one exchange and checks every ghost cell of the
// six faces against the peer's interior face. Returns the number of wrong cells.
template <typename Run>
long checked_exchange(float* grid, int n, int rank, int peer, Run run) {
  const std::size_t cells = static_cast<std::size_t>(n) * n * n;
  std::vector<float> host(cells);
  for (std::size_t i = 0; i < cells; ++i) host[i] = initial_value(rank, i);
  if (!cuda_ok(cudaMemcpy(grid, host.data(), cells * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy")) return -1;
  run();
  if (!cuda_ok(cudaMemcpy(host.data(), grid, cells * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy")) return -1;
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

template <typename Run>
std::vector<double> timed(int iterations, Run run) {
  std::vector<double> us;
  for (int i = 0; i < iterations + iterations / 5; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    run();
    if (i >= iterations / 5) us.push_back((MPI_Wtime() - start) * 1e6);  // the first fifth warms up
  }
  std::sort(us.begin(), us.end());
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int n = argc > 1 ? std::atoi(argv[1]) : 128;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 500;
  int devices = 0;
  if (ranks != 2 || n < 4 || n > 200 || iterations < 5 || !cuda_ok(cudaGetDeviceCount(&devices), "cudaGetDeviceCount") ||
      devices == 0) {
    if (rank == 0) std::fprintf(stderr, "usage: mpiexec -n 2 gddt-bench-halo [n: 4..200] [iterations >= 5] (needs a GPU)\n");
    MPI_Finalize();
    return 2;
  }
  cuda_ok(cudaSetDevice(rank % devices), "cudaSetDevice");
  float* grid = nullptr;
  if (!cuda_ok(cudaMalloc(&grid, static_cast<std::size_t>(n) * n * n * sizeof(float)), "cudaMalloc")) MPI_Abort(MPI_COMM_WORLD, 1);
  const int peer = 1 - rank;
  int status = 0;
  {
    Exchange exchange(grid, n, peer);
    struct Method {
      const char* name;
      void (Exchange::*run)();
    };
    const Method methods[] = {{"MPI_Startall (persistent)", &Exchange::startall},
                              {"MPI_Irecv + MPI_Isend", &Exchange::nonblocking}};
    if (rank == 0) {
      std::printf("halo exchange of %d faces of %.1f KiB (float subarrays of a %d^3 grid in device memory), 2 ranks, "
                  "one GPU each; us per exchange over %d exchanges\n",
                  kFaces, (n - 2.0) * (n - 2.0) * 4 / 1024, n, iterations);
      std::printf("%-28s %10s %10s %10s  %s\n", "method", "median", "p10", "p90", "data");
    }
    for (const Method& method : methods) {
      long wrong = checked_exchange(grid, n, rank, peer, [&] { (exchange.*method.run)(); });
      if (wrong < 0) wrong = 1L << 40;  // a CUDA call failed: nothing was checked
      long wrong_anywhere = 0;
      MPI_Allreduce(&wrong, &wrong_anywhere, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
      const std::vector<double> us = timed(iterations, [&] { (exchange.*method.run)(); });
      if (wrong_anywhere != 0) status = 1;
      if (rank == 0) {
        std::printf("%-28s %10.1f %10.1f %10.1f  %s\n", method.name, us[us.size() / 2], us[us.size() / 10],
                    us[us.size() * 9 / 10], wrong_anywhere == 0 ? "checked" : "WRONG");
      }
    }
  }
  cudaFree(grid);
  MPI_Finalize();
  return status;
}
