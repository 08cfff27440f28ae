// Stream-ordered sends and receives (gddt_*_enqueue) between 2 or more ranks, device memory:
// a ping-pong, a ring and a window of nonblocking operations with vector, subarray, indexed,
// struct and large vector types, then a halo exchange
// captured in a CUDA graph and replayed 100 times. Every byte of every receive buffer is
// compared with what the MPI library's own MPI_Pack/MPI_Unpack make of host copies. Skipped
// (a "skipped:" line, exit 0) without a GPU.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gddt/gddt_device.h"

namespace {

int rank = 0;
int nranks = 1;
int failures = 0;

#define CHECK_CUDA(call)                                                              \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "rank %d: %s: %s\n", rank, #call, cudaGetErrorString(e_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                   \
    }                                                                                 \
  } while (0)
#define CHECK_MPI(call)                                                        \
  do {                                                                         \
    int rc_ = (call);                                                          \
    if (rc_ != MPI_SUCCESS) {                                                  \
      std::fprintf(stderr, "rank %d: %s: error class %d\n", rank, #call, rc_); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                            \
    }                                                                          \
  } while (0)

void expect(bool ok, const char* what, int detail) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "rank %d: FAILED %s (%d)\n", rank, what, detail);
}

struct Case {
  const char* name;
  MPI_Datatype type;
  int count;
  size_t bytes;  // buffer span from the pointer
};

Case make_case(const char* name, MPI_Datatype type, int count) {
  MPI_Type_commit(&type);
  MPI_Aint lb, extent, true_lb, true_extent;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  return Case{name, type, count, static_cast<size_t>(true_lb + true_extent + (count - 1) * extent)};
}

std::vector<Case> make_cases() {
  std::vector<Case> cases;
  MPI_Datatype t;
  MPI_Type_vector(64, 3, 7, MPI_DOUBLE, &t);
  cases.push_back(make_case("vector", t, 3));
  const int sizes[3] = {12, 10, 9}, subsizes[3] = {12, 1, 9}, starts[3] = {0, 4, 0};
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &t);
  cases.push_back(make_case("subarray", t, 2));
  const int lengths[5] = {1, 4, 2, 7, 3}, displs[5] = {0, 3, 11, 15, 29};
  MPI_Type_indexed(5, lengths, displs, MPI_INT, &t);
  cases.push_back(make_case("indexed", t, 4));
  const int blocks[3] = {1, 2, 3};
  const MPI_Aint offsets[3] = {0, 8, 27};
  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype s;
  MPI_Type_create_struct(3, blocks, offsets, types, &s);
  MPI_Type_create_resized(s, 0, 40, &t);
  MPI_Type_free(&s);
  cases.push_back(make_case("struct", t, 5));
  // A large one (2 MiB packed): staging and kernels of its own, as every message of more than
  // one ring slot.
  MPI_Type_vector(1 << 16, 2, 3, MPI_DOUBLE, &t);
  cases.push_back(make_case("large vector", t, 2));
  return cases;
}

std::vector<unsigned char> pattern(size_t bytes, int seed) {
  std::vector<unsigned char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed * 17 + 1) % 251);
  return v;
}

// What `dst` holds after receiving `src` (both host images) through `c`, by the MPI library.
std::vector<unsigned char> expected(const Case& c, std::vector<unsigned char> src, std::vector<unsigned char> dst) {
  int packed = 0, position = 0;
  MPI_Pack_size(c.count, c.type, MPI_COMM_WORLD, &packed);
  std::vector<unsigned char> bytes(packed);
  MPI_Pack(src.data(), c.count, c.type, bytes.data(), packed, &position, MPI_COMM_WORLD);
  const int used = position;
  position = 0;
  MPI_Unpack(bytes.data(), used, &position, dst.data(), c.count, c.type, MPI_COMM_WORLD);
  return dst;
}

void* upload(const std::vector<unsigned char>& host) {
  void* p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, host.size()));
  CHECK_CUDA(cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice));
  return p;
}

std::vector<unsigned char> download(const void* p, size_t bytes) {
  std::vector<unsigned char> host(bytes);
  CHECK_CUDA(cudaMemcpy(host.data(), p, bytes, cudaMemcpyDeviceToHost));
  return host;
}

// Which case runs, as it starts: a case that hangs is the last one named.
void progress_line(const char* what, const char* name) {
  if (rank == 0) {
    std::fprintf(stderr, "%s %s\n", what, name);
    std::fflush(stderr);
  }
}

void check_bytes(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want, const char* what) {
  size_t bad = 0;
  while (bad < got.size() && got[bad] == want[bad]) ++bad;
  expect(bad == got.size(), what, static_cast<int>(bad));
}

void ping_pong(const Case& c, MPI_Comm comm, cudaStream_t stream) {
  if (rank > 1) return;
  const auto src = pattern(c.bytes, rank), dst = pattern(c.bytes, 100 + rank);
  void* send = upload(src);
  void* recv = upload(dst);
  MPI_Status status;
  const int peer = 1 - rank;
  if (rank == 0) {
    CHECK_MPI(gddt_send_enqueue(send, c.count, c.type, peer, 5, comm));
    CHECK_MPI(gddt_recv_enqueue(recv, c.count, c.type, peer, MPI_ANY_TAG, comm, &status));
  } else {
    CHECK_MPI(gddt_recv_enqueue(recv, c.count, c.type, MPI_ANY_SOURCE, 5, comm, &status));
    CHECK_MPI(gddt_send_enqueue(send, c.count, c.type, peer, 6, comm));
  }
  CHECK_MPI(gddt_device_stream_synchronize(stream));
  // The status may be read once the stream has passed the receive.
  int count = -1;
  MPI_Get_count(&status, c.type, &count);
  expect(status.MPI_SOURCE == peer, "ping-pong status source", status.MPI_SOURCE);
  expect(status.MPI_TAG == (rank == 0 ? 6 : 5), "ping-pong status tag", status.MPI_TAG);
  expect(count == c.count, "ping-pong status count", count);
  check_bytes(download(recv, c.bytes), expected(c, pattern(c.bytes, peer), dst), c.name);
  cudaFree(send);
  cudaFree(recv);
}

void ring(const Case& c, MPI_Comm comm, cudaStream_t stream) {
  const int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  const auto src = pattern(c.bytes, rank), dst = pattern(c.bytes, 100 + rank);
  void* send = upload(src);
  void* recv = upload(dst);
  gddt_stream_request_t requests[2];
  MPI_Status statuses[2];
  CHECK_MPI(gddt_irecv_enqueue(recv, c.count, c.type, left, 9, comm, &requests[0]));
  CHECK_MPI(gddt_isend_enqueue(send, c.count, c.type, right, 9, comm, &requests[1]));
  CHECK_MPI(gddt_waitall_enqueue(2, requests, statuses));
  expect(requests[0] == nullptr && requests[1] == nullptr, "requests released", 0);
  CHECK_MPI(gddt_device_stream_synchronize(stream));
  expect(statuses[0].MPI_SOURCE == left, "ring status source", statuses[0].MPI_SOURCE);
  check_bytes(download(recv, c.bytes), expected(c, pattern(c.bytes, left), dst), c.name);
  cudaFree(send);
  cudaFree(recv);
}

// A window of nonblocking receives and sends on one stream, all posted before one wait, no
// status wanted (the last kernel of each operation hands its record back by a flag): with the
// small ring their slots would fill it, and a stream waiting for slots that its own unwaited
// operations hold would wait for ever.
void window(const Case& c, MPI_Comm comm, cudaStream_t stream) {
  constexpr int kEach = 12;
  const int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  std::vector<void*> sends, recvs;
  std::vector<std::vector<unsigned char>> poisons;
  gddt_stream_request_t requests[2 * kEach];
  for (int i = 0; i < kEach; ++i) {
    poisons.push_back(pattern(c.bytes, 200 + i));
    recvs.push_back(upload(poisons.back()));
    sends.push_back(upload(pattern(c.bytes, 10 * rank + i)));
    CHECK_MPI(gddt_irecv_enqueue(recvs[i], c.count, c.type, left, 30 + i, comm, &requests[i]));
  }
  for (int i = 0; i < kEach; ++i)
    CHECK_MPI(gddt_isend_enqueue(sends[i], c.count, c.type, right, 30 + i, comm, &requests[kEach + i]));
  CHECK_MPI(gddt_waitall_enqueue(2 * kEach, requests, MPI_STATUSES_IGNORE));
  CHECK_MPI(gddt_device_stream_synchronize(stream));
  for (int i = 0; i < kEach; ++i) {
    check_bytes(download(recvs[i], c.bytes), expected(c, pattern(c.bytes, 10 * left + i), poisons[i]), c.name);
    cudaFree(recvs[i]);
    cudaFree(sends[i]);
  }
}

// A 3-D grid (nz, ny, nx interior plus one halo layer) split over the ranks in x: each
// iteration writes the interior from a device counter, then exchanges the x faces (subarray
// types) with both neighbours.
constexpr int nx = 16, ny = 12, nz = 10;
constexpr int X = nx + 2, Y = ny + 2, Z = nz + 2;

__host__ __device__ double value(int r, int iteration, int i) { return r * 1e6 + iteration * 1e3 + i % 997; }

__global__ void compute(double* grid, int* iteration, int r) {
  const int it = *iteration;  // read by every thread before block 0 advances it: one block
  for (int i = threadIdx.x; i < X * Y * Z; i += blockDim.x) {
    const int x = i % X, y = i / X % Y, z = i / (X * Y);
    if (x >= 1 && x <= nx && y >= 1 && y <= ny && z >= 1 && z <= nz) grid[i] = value(r, it, i);
  }
  __syncthreads();
  if (threadIdx.x == 0) *iteration = it + 1;
}

MPI_Datatype face(int x) {
  const int sizes[3] = {Z, Y, X}, subsizes[3] = {nz, ny, 1}, starts[3] = {1, 1, x};
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

void enqueue_halo(double* grid, MPI_Datatype faces[4], MPI_Comm comm, MPI_Status statuses[4]) {
  const int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  gddt_stream_request_t requests[4];
  CHECK_MPI(gddt_irecv_enqueue(grid, 1, faces[0], left, 1, comm, &requests[0]));   // x = 0
  CHECK_MPI(gddt_irecv_enqueue(grid, 1, faces[3], right, 2, comm, &requests[1]));  // x = nx + 1
  CHECK_MPI(gddt_isend_enqueue(grid, 1, faces[2], right, 1, comm, &requests[2]));  // x = nx
  CHECK_MPI(gddt_isend_enqueue(grid, 1, faces[1], left, 2, comm, &requests[3]));   // x = 1
  CHECK_MPI(gddt_waitall_enqueue(4, requests, statuses));
}

std::vector<double> expected_grid(int iteration, MPI_Datatype faces[4]) {
  const int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  auto fill = [&](int r) {
    std::vector<double> g(X * Y * Z, -1.0);
    for (int i = 0; i < X * Y * Z; ++i) {
      const int x = i % X, y = i / X % Y, z = i / (X * Y);
      if (x >= 1 && x <= nx && y >= 1 && y <= ny && z >= 1 && z <= nz) g[i] = value(r, iteration, i);
    }
    return g;
  };
  std::vector<double> mine = fill(rank);
  const auto from_left = fill(left), from_right = fill(right);
  int packed = 0, position = 0;
  MPI_Pack_size(1, faces[2], MPI_COMM_WORLD, &packed);
  std::vector<char> bytes(packed);
  MPI_Pack(from_left.data(), 1, faces[2], bytes.data(), packed, &position, MPI_COMM_WORLD);
  position = 0;
  MPI_Unpack(bytes.data(), packed, &position, mine.data(), 1, faces[0], MPI_COMM_WORLD);
  position = 0;
  MPI_Pack(from_right.data(), 1, faces[1], bytes.data(), packed, &position, MPI_COMM_WORLD);
  position = 0;
  MPI_Unpack(bytes.data(), packed, &position, mine.data(), 1, faces[3], MPI_COMM_WORLD);
  return mine;
}

void halo(MPI_Comm comm, cudaStream_t stream, bool graph) {
  MPI_Datatype faces[4] = {face(0), face(1), face(nx), face(nx + 1)};
  const std::vector<double> initial(X * Y * Z, -1.0);
  double* grid = static_cast<double*>(
      upload(std::vector<unsigned char>(reinterpret_cast<const unsigned char*>(initial.data()),
                                        reinterpret_cast<const unsigned char*>(initial.data() + initial.size()))));
  int* iteration = nullptr;
  CHECK_CUDA(cudaMalloc(&iteration, sizeof(int)));
  CHECK_CUDA(cudaMemset(iteration, 0, sizeof(int)));
  MPI_Status statuses[4];
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    cudaGraph_t g;
    // Thread-local capture: gddt's proxy thread keeps calling CUDA meanwhile.
    CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    compute<<<1, 256, 0, stream>>>(grid, iteration, rank);
    enqueue_halo(grid, faces, comm, statuses);
    CHECK_CUDA(cudaStreamEndCapture(stream, &g));
    CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
    CHECK_CUDA(cudaGraphDestroy(g));
  }
  const int iterations = graph ? 100 : 5;
  for (int it = 0; it < iterations; ++it) {
    if (graph) {
      CHECK_CUDA(cudaGraphLaunch(exec, stream));
    } else {
      compute<<<1, 256, 0, stream>>>(grid, iteration, rank);
      enqueue_halo(grid, faces, comm, statuses);
    }
    CHECK_MPI(gddt_device_stream_synchronize(stream));
    std::vector<double> got(X * Y * Z);
    CHECK_CUDA(cudaMemcpy(got.data(), grid, got.size() * sizeof(double), cudaMemcpyDeviceToHost));
    const auto want = expected_grid(it, faces);
    check_bytes(std::vector<unsigned char>(reinterpret_cast<unsigned char*>(got.data()),
                                           reinterpret_cast<unsigned char*>(got.data() + got.size())),
                std::vector<unsigned char>(reinterpret_cast<const unsigned char*>(want.data()),
                                           reinterpret_cast<const unsigned char*>(want.data() + want.size())),
                graph ? "halo graph replay" : "halo");
    expect(statuses[0].MPI_TAG == 1 && statuses[1].MPI_TAG == 2, "halo statuses", it);
  }
  if (exec != nullptr) CHECK_CUDA(cudaGraphExecDestroy(exec));
  cudaFree(grid);
  cudaFree(iteration);
  for (MPI_Datatype& t : faces) MPI_Type_free(&t);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int devices = 0;
  // Every rank skips together: one leaving alone would keep the others waiting for it.
  int usable = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 ? 1 : 0, all_usable = 0;
  MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_usable) {
    if (rank == 0) std::printf("stream_ordered: skipped: no GPU\n");
    MPI_Finalize();
    return 0;  // the line above skips the test (gddt_add_mpi_test)
  }
  CHECK_CUDA(cudaSetDevice(rank % devices));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  MPI_Comm comm;
  CHECK_MPI(gddt_stream_comm_create(MPI_COMM_WORLD, stream, &comm));
  for (const Case& c : make_cases()) {
    progress_line("ping-pong", c.name);
    ping_pong(c, comm, stream);
    progress_line("ring", c.name);
    ring(c, comm, stream);
    progress_line("window", c.name);
    window(c, comm, stream);
    MPI_Datatype t = c.type;
    MPI_Type_free(&t);
  }
  progress_line("halo", "streamed");
  halo(comm, stream, false);
  progress_line("halo", "graph");
  halo(comm, stream, true);
  MPI_Comm_free(&comm);
  CHECK_CUDA(cudaStreamDestroy(stream));
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("stream-ordered: %s (%d failures)\n", total == 0 ? "passed" : "FAILED", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
