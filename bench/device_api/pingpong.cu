// gddt-bench-device-pingpong: ping-pong latency between ranks 0 and 1 of a vector datatype
// (every other double) in device memory, 8 B .. 1 MiB of packed bytes, four ways in one run:
//   host MPI    MPI_Send/MPI_Recv through gddt alone;
//   host-init   the same after a kernel launch and a stream synchronization each way (what a
//               host-driven solver pays per exchange);
//   stream      gddt_send_enqueue/gddt_recv_enqueue after the kernel, the whole run enqueued;
//   kernel      one kernel doing every iteration with gddt_isend/gddt_irecv/gddt_wait (block).
// One-way latency (half a round trip), the median of the repetitions, and the kernel-initiated
// overhead over the host MPI time alone (the issue's target: <= 3 us at 4 KiB).
//
//   mpiexec -n 2 gddt-bench-device-pingpong [iterations] [repetitions]
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../median.hpp"
#include "gddt/gddt_device.h"

namespace {

int rank = 0;

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "rank %d: %s failed\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// The computation a real code would launch between exchanges: here it touches one word.
__global__ void touch(double* buf) {
  if (threadIdx.x == 0) buf[0] += 1.0;
}

__global__ void kernel_pingpong(double* buf, int64_t count, gddt_device_type_t type, gddt_device_comm_t comm,
                                int iterations, int* error) {
  const int peer = 1 - comm.rank;
  __shared__ gddt_device_request_t request;
  __shared__ gddt_device_status_t status;
  int rc = MPI_SUCCESS;
  for (int i = 0; i < iterations && rc == MPI_SUCCESS; ++i) {
    if (comm.rank == 0) {
      rc = gddt_isend(buf, count, type, peer, 0, comm, &request, GDDT_SCOPE_BLOCK);
      if (rc == MPI_SUCCESS) rc = gddt_wait(comm, &request, &status, GDDT_SCOPE_BLOCK);
      if (rc == MPI_SUCCESS) rc = gddt_irecv(buf, count, type, peer, 0, comm, &request, GDDT_SCOPE_BLOCK);
      if (rc == MPI_SUCCESS) rc = gddt_wait(comm, &request, &status, GDDT_SCOPE_BLOCK);
    } else {
      rc = gddt_irecv(buf, count, type, peer, 0, comm, &request, GDDT_SCOPE_BLOCK);
      if (rc == MPI_SUCCESS) rc = gddt_wait(comm, &request, &status, GDDT_SCOPE_BLOCK);
      if (rc == MPI_SUCCESS) rc = gddt_isend(buf, count, type, peer, 0, comm, &request, GDDT_SCOPE_BLOCK);
      if (rc == MPI_SUCCESS) rc = gddt_wait(comm, &request, &status, GDDT_SCOPE_BLOCK);
    }
  }
  if (threadIdx.x == 0) *error = rc;
}

struct Setup {
  double* buf;
  int count;
  MPI_Datatype type;
  gddt_device_type_t device_type;
  gddt_device_comm_t device_comm;
  MPI_Comm stream_comm;
  cudaStream_t stream;
  int* error;
};

// Microseconds one way per iteration, the median of `repetitions` runs.
template <typename Body>
double one_way_us(int iterations, int repetitions, Body body) {
  std::vector<double> samples;
  for (int r = 0; r < repetitions; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    body(iterations);
    samples.push_back((MPI_Wtime() - start) * 1e6 / (2.0 * iterations));
  }
  return median(samples);
}

double host_mpi(const Setup& s, int iterations, int repetitions) {
  const int peer = 1 - rank;
  return one_way_us(iterations, repetitions, [&](int n) {
    for (int i = 0; i < n; ++i) {
      if (rank == 0) {
        MPI_Send(s.buf, 1, s.type, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(s.buf, 1, s.type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(s.buf, 1, s.type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(s.buf, 1, s.type, peer, 0, MPI_COMM_WORLD);
      }
    }
  });
}

double host_initiated(const Setup& s, int iterations, int repetitions) {
  const int peer = 1 - rank;
  auto compute = [&]() {
    touch<<<1, 32, 0, s.stream>>>(s.buf);
    cudaStreamSynchronize(s.stream);
  };
  return one_way_us(iterations, repetitions, [&](int n) {
    for (int i = 0; i < n; ++i) {
      if (rank == 0) {
        compute();
        MPI_Send(s.buf, 1, s.type, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(s.buf, 1, s.type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(s.buf, 1, s.type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        compute();
        MPI_Send(s.buf, 1, s.type, peer, 0, MPI_COMM_WORLD);
      }
    }
  });
}

double stream_ordered(const Setup& s, int iterations, int repetitions) {
  const int peer = 1 - rank;
  return one_way_us(iterations, repetitions, [&](int n) {
    for (int i = 0; i < n; ++i) {
      touch<<<1, 32, 0, s.stream>>>(s.buf);
      if (rank == 0) {
        gddt_send_enqueue(s.buf, 1, s.type, peer, 0, s.stream_comm);
        gddt_recv_enqueue(s.buf, 1, s.type, peer, 0, s.stream_comm, MPI_STATUS_IGNORE);
      } else {
        gddt_recv_enqueue(s.buf, 1, s.type, peer, 0, s.stream_comm, MPI_STATUS_IGNORE);
        gddt_send_enqueue(s.buf, 1, s.type, peer, 0, s.stream_comm);
      }
    }
    check(gddt_device_stream_synchronize(s.stream) == MPI_SUCCESS, "stream-ordered run");
  });
}

double kernel_initiated(const Setup& s, int iterations, int repetitions) {
  return one_way_us(iterations, repetitions, [&](int n) {
    kernel_pingpong<<<1, 256, 0, s.stream>>>(s.buf, 1, s.device_type, s.device_comm, n, s.error);
    check(gddt_device_stream_synchronize(s.stream) == MPI_SUCCESS, "kernel-initiated run");
    int error = MPI_SUCCESS;
    cudaMemcpy(&error, s.error, sizeof(int), cudaMemcpyDeviceToHost);
    check(error == MPI_SUCCESS, "kernel-initiated ping-pong");
  });
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0, size = 0, devices = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check(size == 2, "running on 2 ranks");
  check(cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0, "finding a GPU");
  cudaSetDevice(rank % devices);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 200;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 11;

  Setup s{};
  cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking);
  check(gddt_stream_comm_create(MPI_COMM_WORLD, s.stream, &s.stream_comm) == MPI_SUCCESS, "gddt_stream_comm_create");
  check(gddt_device_comm_create(MPI_COMM_WORLD, &s.device_comm) == MPI_SUCCESS, "gddt_device_comm_create");
  cudaMalloc(&s.error, sizeof(int));
  if (rank == 0) {
    std::printf(
        "# gddt-bench-device-pingpong: vector of doubles (every other one), device memory, one-way us "
        "(median of %d runs of %d round trips), MPI thread level %d\n",
        repetitions, iterations, provided);
    std::printf("%10s %10s %10s %10s %10s %14s %12s\n", "bytes", "host_mpi", "host_init", "stream", "kernel",
                "kernel-mpi_us", "kernel/host");
  }
  double overhead_4k = 0.0;
  for (long bytes = 8; bytes <= (1 << 20); bytes = bytes < 4096 ? bytes * 8 : bytes * 4) {
    const int blocks = static_cast<int>(bytes / 8);
    MPI_Type_vector(blocks, 1, 2, MPI_DOUBLE, &s.type);
    MPI_Type_commit(&s.type);
    check(cudaMalloc(&s.buf, 2 * bytes) == cudaSuccess, "cudaMalloc");
    cudaMemset(s.buf, 0, 2 * bytes);
    check(gddt_device_type_create(s.type, &s.device_type) == MPI_SUCCESS, "gddt_device_type_create");
    const int n = bytes >= (256 << 10) ? iterations / 4 + 1 : iterations;
    host_mpi(s, 10, 1);  // warm-up: connections, staging, pools
    const double mpi = host_mpi(s, n, repetitions);
    const double host = host_initiated(s, n, repetitions);
    const double stream = stream_ordered(s, n, repetitions);
    const double kernel = kernel_initiated(s, n, repetitions);
    if (bytes == 4096) overhead_4k = kernel - mpi;
    if (rank == 0)
      std::printf("%10ld %10.2f %10.2f %10.2f %10.2f %14.2f %12.2f\n", bytes, mpi, host, stream, kernel, kernel - mpi,
                  kernel / host);
    std::fflush(stdout);
    gddt_device_type_free(&s.device_type);
    cudaFree(s.buf);
    MPI_Type_free(&s.type);
  }
  if (rank == 0)
    std::printf("# kernel-initiated overhead over host MPI at 4 KiB: %.2f us (target <= 3 us)\n", overhead_4k);
  gddt_device_comm_free(&s.device_comm);
  MPI_Comm_free(&s.stream_comm);
  cudaFree(s.error);
  cudaStreamDestroy(s.stream);
  MPI_Finalize();
  return 0;
}
