// gddt-bench-neighbor-halo: a 3-D halo exchange with all 26 neighbours (faces, edges, corners) of
// an n^3 grid of doubles with one ghost layer, in device memory, on a periodic process grid:
//   neighbor   one MPI_Neighbor_alltoallw on a distributed-graph communicator of the 26
//              directions, subarray types for every region
//   p2p        the same regions with 26 MPI_Irecv, 26 MPI_Isend and one MPI_Waitall
// both through gddt. The two results are compared before timing; times are medians of the slower
// rank over the iterations, each bracketed by barriers.
//   mpiexec -n P gddt-bench-neighbor-halo [n] [iterations]      (defaults 64, 50)
#include <cuda_runtime.h>
#include <mpi.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "rank_timing.hpp"

namespace {

bool cuda_ok(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "gddt-bench-neighbor-halo: %s: %s\n", what, cudaGetErrorString(error));
  return false;
}

using Direction = std::array<int, 3>;

std::vector<Direction> directions() {
  std::vector<Direction> all;
  for (int x = -1; x <= 1; ++x)
    for (int y = -1; y <= 1; ++y)
      for (int z = -1; z <= 1; ++z)
        if (x != 0 || y != 0 || z != 0) all.push_back({x, y, z});
  return all;
}

// The region of an (n+2)^3 grid on side `d`: the interior layer there (sent), or the ghost layer
// (received).
MPI_Datatype region(int n, const Direction& d, bool ghost) {
  int sizes[3] = {n + 2, n + 2, n + 2}, subsizes[3], starts[3];
  for (int axis = 0; axis < 3; ++axis) {
    subsizes[axis] = d[axis] == 0 ? n : 1;
    starts[axis] = d[axis] == 0 ? 1 : d[axis] < 0 ? (ghost ? 0 : 1) : (ghost ? n + 1 : n);
  }
  MPI_Datatype type;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &type);
  MPI_Type_commit(&type);
  return type;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1, devices = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int n = argc > 1 ? std::atoi(argv[1]) : 64;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 50;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    if (rank == 0) std::printf("gddt-bench-neighbor-halo: no GPU\n");
    MPI_Finalize();
    return 0;
  }
  cudaSetDevice(rank % devices);
  int dims[3] = {0, 0, 0};
  const int periods[3] = {1, 1, 1};
  MPI_Dims_create(ranks, 3, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
  int coords[3];
  MPI_Cart_coords(cart, rank, 3, coords);
  const std::vector<Direction> all = directions();
  const int k = static_cast<int>(all.size());
  // Index i: interior side d_i goes to the neighbour at +d_i; the ghost side -d_i comes from the
  // neighbour at -d_i, which sent its interior side d_i.
  std::vector<int> to(k), from(k);
  std::vector<MPI_Datatype> send_types(k), receive_types(k);
  for (int i = 0; i < k; ++i) {
    int there[3], back[3];
    for (int axis = 0; axis < 3; ++axis) {
      there[axis] = coords[axis] + all[i][axis];
      back[axis] = coords[axis] - all[i][axis];
    }
    MPI_Cart_rank(cart, there, &to[i]);
    MPI_Cart_rank(cart, back, &from[i]);
    send_types[i] = region(n, all[i], false);
    receive_types[i] = region(n, {-all[i][0], -all[i][1], -all[i][2]}, true);
  }
  MPI_Comm graph;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, k, from.data(), MPI_UNWEIGHTED, k, to.data(), MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &graph);

  const std::size_t points = static_cast<std::size_t>(n + 2) * (n + 2) * (n + 2);
  std::vector<double> initial(points);
  for (std::size_t i = 0; i < points; ++i) initial[i] = rank * 1e9 + static_cast<double>(i);
  double *by_neighbor = nullptr, *by_p2p = nullptr;
  if (!cuda_ok(cudaMalloc(&by_neighbor, points * sizeof(double)), "cudaMalloc") ||
      !cuda_ok(cudaMalloc(&by_p2p, points * sizeof(double)), "cudaMalloc"))
    MPI_Abort(MPI_COMM_WORLD, 1);
  cudaMemcpy(by_neighbor, initial.data(), points * sizeof(double), cudaMemcpyHostToDevice);
  cudaMemcpy(by_p2p, initial.data(), points * sizeof(double), cudaMemcpyHostToDevice);

  const std::vector<int> ones(k, 1);
  const std::vector<MPI_Aint> zeros(k, 0);
  const auto neighbor = [&] {
    MPI_Neighbor_alltoallw(by_neighbor, ones.data(), zeros.data(), send_types.data(), by_neighbor, ones.data(),
                           zeros.data(), receive_types.data(), graph);
  };
  std::vector<MPI_Request> requests(2 * k);
  const auto p2p = [&] {
    for (int i = 0; i < k; ++i) MPI_Irecv(by_p2p, 1, receive_types[i], from[i], i, cart, &requests[i]);
    for (int i = 0; i < k; ++i) MPI_Isend(by_p2p, 1, send_types[i], to[i], i, cart, &requests[k + i]);
    MPI_Waitall(2 * k, requests.data(), MPI_STATUSES_IGNORE);
  };
  neighbor();
  p2p();
  std::vector<double> a(points), b(points);
  cudaMemcpy(a.data(), by_neighbor, points * sizeof(double), cudaMemcpyDeviceToHost);
  cudaMemcpy(b.data(), by_p2p, points * sizeof(double), cudaMemcpyDeviceToHost);
  int same = a == b, all_same = 0;
  MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  const double neighbor_us = slowest_rank_median_us(iterations, neighbor), p2p_us = slowest_rank_median_us(iterations, p2p);
  if (rank == 0) {
    std::printf("26-neighbour halo, %d ranks (grid %dx%dx%d), %d^3 doubles a rank, %d iterations\n", ranks, dims[0],
                dims[1], dims[2], n, iterations);
    std::printf("%-28s %10s\n", "method", "median us");
    std::printf("%-28s %10.1f\n", "MPI_Neighbor_alltoallw", neighbor_us);
    std::printf("%-28s %10.1f\n", "26 Irecv + 26 Isend", p2p_us);
    std::printf("neighbor/p2p %.2fx, results %s\n", neighbor_us / p2p_us, all_same ? "equal" : "DIFFER");
  }
  for (int i = 0; i < k; ++i) {
    MPI_Type_free(&send_types[i]);
    MPI_Type_free(&receive_types[i]);
  }
  cudaFree(by_neighbor);
  cudaFree(by_p2p);
  MPI_Comm_free(&graph);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return all_same ? 0 : 1;
}
