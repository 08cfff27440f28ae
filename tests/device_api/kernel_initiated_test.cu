// The device API from real kernels: ping-pong and ring exchanges of derived datatypes on
// cudaMalloc memory at thread, warp and block scope, the ring filled and wrapped, several blocks
// at once, wildcards, direct sends, a host rank on the other end, in-kernel argument errors and
// the collectives. Every received byte is compared with the library's own MPI_Unpack of its
// MPI_Pack of host copies, so the gaps between a type's blocks must keep their poison.
//
// Two ranks may share one GPU without MPS: their kernels take turns, so no case needs both
// kernels resident at once, only MPI's own matching, and the iteration counts stay small.
// Skipped (a "skipped:" line, exit 0) when a rank has no usable GPU.
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gddt/gddt_device.h"
#include "type_cases.hpp"

namespace {

constexpr int kThreads = 128;        // four warps: warp scope is not block scope
constexpr int kMaxOutstanding = 32;  // requests one calling group holds in `many`
constexpr unsigned char kPoison = 0xEE;

// ---- the kernels' side ---------------------------------------------------------------------

// What went wrong inside a kernel: the first failed check wins the fields.
struct DeviceLog {
  int failures;
  int line;
  int got;
  int want;
};

__device__ void note(DeviceLog *log, int line, int got, int want) {
  if (atomicAdd(&log->failures, 1) == 0) {
    log->line = line;
    log->got = got;
    log->want = want;
  }
}

#define DCHECK_RC(expr, want)                              \
  do {                                                     \
    const int got_ = (expr);                               \
    if (got_ != (want)) note(log, __LINE__, got_, (want)); \
  } while (0)
#define DCHECK(cond)                          \
  do {                                        \
    if (!(cond)) note(log, __LINE__, -1, -1); \
  } while (0)

// Whether this thread is one of the group that makes the calls of `scope`.
__device__ bool calls(gddt_scope scope) {
  return scope == GDDT_SCOPE_BLOCK || (scope == GDDT_SCOPE_WARP ? threadIdx.x < 32 : threadIdx.x == 0);
}

// What every kernel is told about its message: the buffers hold one slice per iteration, `span`
// bytes apart, so that no iteration can pass on bytes an earlier one left behind.
struct Message {
  gddt_device_type_t type;
  int count;
  int64_t bytes;  // count * MPI_Type_size
  int64_t span;
  int tag;
};

// Rank 0 sends slice i and receives it back into its own slice i; the other end echoes what it
// received. Block b uses tag + b and its own slices.
__global__ void pingpong_kernel(gddt_device_comm_t comm, Message m, gddt_scope scope, unsigned char *send,
                                unsigned char *recv, int iters, DeviceLog *log) {
  if (!calls(scope)) return;
  const int tag = m.tag + static_cast<int>(blockIdx.x);
  const int64_t first = static_cast<int64_t>(blockIdx.x) * iters;
  const int peer = 1 - comm.rank;
  for (int i = 0; i < iters; ++i) {
    unsigned char *in = recv + (first + i) * m.span;
    gddt_device_request_t r;
    gddt_device_status_t st;
    if (comm.rank == 0) {
      DCHECK_RC(gddt_isend(send + (first + i) * m.span, m.count, m.type, peer, tag, comm, &r, scope), MPI_SUCCESS);
      DCHECK_RC(gddt_wait(comm, &r, nullptr, scope), MPI_SUCCESS);
      DCHECK_RC(gddt_irecv(in, m.count, m.type, peer, tag, comm, &r, scope), MPI_SUCCESS);
      DCHECK_RC(gddt_wait(comm, &r, &st, scope), MPI_SUCCESS);
    } else {
      DCHECK_RC(gddt_irecv(in, m.count, m.type, peer, tag, comm, &r, scope), MPI_SUCCESS);
      DCHECK_RC(gddt_wait(comm, &r, &st, scope), MPI_SUCCESS);
      DCHECK_RC(gddt_isend(in, m.count, m.type, peer, tag, comm, &r, scope), MPI_SUCCESS);
      DCHECK_RC(gddt_wait(comm, &r, nullptr, scope), MPI_SUCCESS);
    }
    DCHECK(st.source == peer && st.tag == tag && st.bytes == m.bytes && st.error == MPI_SUCCESS);
    DCHECK(r.ticket == GDDT_DEVICE_REQUEST_NULL_TICKET);
  }
}

// Every rank receives from its left and sends to its right, both outstanding at once.
__global__ void exchange_kernel(gddt_device_comm_t comm, Message m, gddt_scope scope, unsigned char *send,
                                unsigned char *recv, int iters, DeviceLog *log) {
  if (!calls(scope)) return;
  const int right = (comm.rank + 1) % comm.size, left = (comm.rank + comm.size - 1) % comm.size;
  for (int i = 0; i < iters; ++i) {
    gddt_device_request_t r[2];
    gddt_device_status_t st[2];
    DCHECK_RC(gddt_irecv(recv + i * m.span, m.count, m.type, left, m.tag + i, comm, &r[0], scope), MPI_SUCCESS);
    DCHECK_RC(gddt_isend(send + i * m.span, m.count, m.type, right, m.tag + i, comm, &r[1], scope), MPI_SUCCESS);
    DCHECK_RC(gddt_waitall(comm, 2, r, st, scope), MPI_SUCCESS);
    DCHECK(st[0].source == left && st[0].tag == m.tag + i && st[0].bytes == m.bytes);
  }
}

// `rounds` times, `n` requests outstanding at once (rank 0 sends, rank 1 receives), then one
// waitall: with n at the ring's size the ring is full, and the rounds wrap it. With `wildcard`
// the receives take MPI_ANY_SOURCE and MPI_ANY_TAG and the statuses must say which message came.
__global__ void many_kernel(gddt_device_comm_t comm, Message m, gddt_scope scope, unsigned char *buf, int n, int rounds,
                            bool wildcard, DeviceLog *log) {
  if (!calls(scope)) return;
  const bool receive = comm.rank == 1;
  for (int round = 0; round < rounds; ++round) {
    gddt_device_request_t r[kMaxOutstanding];
    gddt_device_status_t st[kMaxOutstanding];
    for (int j = 0; j < n; ++j) {
      unsigned char *slice = buf + static_cast<int64_t>(round * n + j) * m.span;
      const int tag = m.tag + j;
      if (receive) {
        DCHECK_RC(gddt_irecv(slice, m.count, m.type, wildcard ? MPI_ANY_SOURCE : 0, wildcard ? MPI_ANY_TAG : tag, comm,
                             &r[j], scope),
                  MPI_SUCCESS);
      } else {
        DCHECK_RC(gddt_isend(slice, m.count, m.type, 1, tag, comm, &r[j], scope), MPI_SUCCESS);
      }
    }
    DCHECK_RC(gddt_waitall(comm, n, r, st, scope), MPI_SUCCESS);
    if (receive)
      for (int j = 0; j < n; ++j) DCHECK(st[j].source == 0 && st[j].tag == m.tag + j && st[j].bytes == m.bytes);
  }
}

// Arguments MPI refuses come back to every calling thread at once, and nothing is posted.
__global__ void errors_kernel(gddt_device_comm_t comm, Message m, gddt_scope scope, unsigned char *buf,
                              DeviceLog *log) {
  if (!calls(scope)) return;
  const int peer = 1 - comm.rank;
  gddt_device_request_t r;
  DCHECK_RC(gddt_isend(buf, m.count, m.type, comm.size, 0, comm, &r, scope), MPI_ERR_RANK);
  DCHECK_RC(gddt_isend(buf, m.count, m.type, -7, 0, comm, &r, scope), MPI_ERR_RANK);
  DCHECK_RC(gddt_isend(buf, m.count, m.type, MPI_ANY_SOURCE, 0, comm, &r, scope), MPI_ERR_RANK);
  DCHECK_RC(gddt_irecv(buf, m.count, m.type, comm.size + 3, 0, comm, &r, scope), MPI_ERR_RANK);
  DCHECK_RC(gddt_isend(buf, m.count, m.type, peer, -5, comm, &r, scope), MPI_ERR_TAG);
  DCHECK_RC(gddt_isend(buf, m.count, m.type, peer, MPI_ANY_TAG, comm, &r, scope), MPI_ERR_TAG);
  DCHECK_RC(gddt_irecv(buf, m.count, m.type, peer, -9, comm, &r, scope), MPI_ERR_TAG);
  if (comm.tag_ub < INT_MAX)
    DCHECK_RC(gddt_isend(buf, m.count, m.type, peer, comm.tag_ub + 1, comm, &r, scope), MPI_ERR_TAG);
  DCHECK_RC(gddt_isend(buf, -1, m.type, peer, 0, comm, &r, scope), MPI_ERR_COUNT);
  gddt_device_status_t st;
  DCHECK_RC(gddt_irecv(buf, m.count, m.type, MPI_PROC_NULL, 0, comm, &r, scope), MPI_SUCCESS);
  DCHECK_RC(gddt_wait(comm, &r, &st, scope), MPI_SUCCESS);
  DCHECK(st.source == MPI_PROC_NULL && st.tag == MPI_ANY_TAG && st.bytes == 0);
}

// A barrier, a sum of doubles (out of place) and a max of ints (in place); `iters` times, so
// that the later rounds reuse ring slots.
__global__ void collectives_kernel(gddt_device_comm_t comm, gddt_scope scope, const double *in, double *sum, int *ints,
                                   int nd, int ni, int iters, DeviceLog *log) {
  if (!calls(scope)) return;
  for (int i = 0; i < iters; ++i) {
    DCHECK_RC(gddt_barrier(comm, scope), MPI_SUCCESS);
    DCHECK_RC(gddt_allreduce(in, sum + i * nd, nd, GDDT_DEVICE_DOUBLE, GDDT_DEVICE_SUM, comm, scope), MPI_SUCCESS);
    DCHECK_RC(gddt_allreduce(ints + i * ni, ints + i * ni, ni, GDDT_DEVICE_INT, GDDT_DEVICE_MAX, comm, scope),
              MPI_SUCCESS);
  }
}

// ---- the host's side -----------------------------------------------------------------------

int rank = 0, nranks = 1;
int failed_cases = 0;
cudaStream_t stream;

std::vector<TypeCase> make_types() {
  std::vector<TypeCase> types = committed_type_cases();
  for (TypeCase &c : types) {
    if (gddt_device_type_create(c.type, &c.device) != MPI_SUCCESS) {
      std::fprintf(stderr, "rank %d: gddt_device_type_create(%s) failed\n", rank, c.name);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  return types;
}

int type_size(MPI_Datatype type) {
  int size = 0;
  MPI_Type_size(type, &size);
  return size;
}

// Bytes `count` elements of `type` reach, plus a tail the type never touches, in 16-byte steps
// so that every slice allows the widest words.
int64_t span_of(MPI_Datatype type, int count) {
  MPI_Aint lb, extent, true_lb, true_extent;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  return ((count - 1) * extent + true_lb + true_extent + 16 + 15) / 16 * 16;
}

Message message(const TypeCase &c, int count, int tag) {
  return Message{c.device, count, static_cast<int64_t>(count) * type_size(c.type), span_of(c.type, count), tag};
}

// `slices` slices, slice i filled from seed + i (or, with seed < 0, all poison).
std::vector<unsigned char> host_slices(const Message &m, int slices, int seed) {
  std::vector<unsigned char> b(static_cast<std::size_t>(m.span * slices), kPoison);
  if (seed >= 0)
    for (int s = 0; s < slices; ++s)
      for (int64_t i = 0; i < m.span; ++i) b[s * m.span + i] = static_cast<unsigned char>((seed + s) * 131 + i * 7 + 1);
  return b;
}

// What poisoned slices hold after receiving slice i of host_slices(m, slices, seed) each: the
// library's MPI_Unpack of its MPI_Pack.
std::vector<unsigned char> expected_slices(const TypeCase &c, const Message &m, int slices, int seed) {
  const std::vector<unsigned char> source = host_slices(m, slices, seed);
  std::vector<unsigned char> out = host_slices(m, slices, -1);
  int size = 0;
  MPI_Pack_size(m.count, c.type, MPI_COMM_WORLD, &size);
  std::vector<unsigned char> packed(size);
  for (int s = 0; s < slices; ++s) {
    int position = 0;
    MPI_Pack(source.data() + s * m.span, m.count, c.type, packed.data(), size, &position, MPI_COMM_WORLD);
    const int packed_bytes = position;
    position = 0;
    MPI_Unpack(packed.data(), packed_bytes, &position, out.data() + s * m.span, m.count, c.type, MPI_COMM_WORLD);
  }
  return out;
}

// Device memory holding a copy of `host`.
struct DeviceBuffer {
  unsigned char *ptr = nullptr;
  std::size_t bytes = 0;
  explicit DeviceBuffer(const std::vector<unsigned char> &host) : bytes(host.size()) {
    cudaMalloc(&ptr, bytes);
    cudaMemcpy(ptr, host.data(), bytes, cudaMemcpyHostToDevice);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { cudaFree(ptr); }
  std::vector<unsigned char> read() const {
    std::vector<unsigned char> host(bytes);
    cudaMemcpy(host.data(), ptr, bytes, cudaMemcpyDeviceToHost);
    return host;
  }
};

// One case's verdict on this rank: the first thing that went wrong, empty when nothing did.
struct Verdict {
  std::string why;
  void fail(const std::string &what) {
    if (why.empty()) why = what;
  }
  void expect_bytes(const std::vector<unsigned char> &got, const std::vector<unsigned char> &want, const char *what) {
    if (got.size() != want.size()) return fail(std::string(what) + ": size differs");
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i]) {
        char line[160];
        std::snprintf(line, sizeof line, "%s: byte %zu is 0x%02x, expected 0x%02x", what, i, got[i], want[i]);
        return fail(line);
      }
  }
  void expect_rc(int got, int want, const char *what) {
    if (got == want) return;
    char line[160];
    std::snprintf(line, sizeof line, "%s returned %d, expected %d", what, got, want);
    fail(line);
  }
};

// Launches a kernel with a fresh device log, waits for it through gddt (which runs the proxy when
// it has no thread of its own) and folds the log into `v`.
template <class Launch>
void run_kernel(Verdict &v, Launch launch) {
  DeviceLog *log = nullptr;
  cudaMalloc(&log, sizeof(DeviceLog));
  cudaMemset(log, 0, sizeof(DeviceLog));
  launch(log);
  v.expect_rc(cudaGetLastError(), cudaSuccess, "kernel launch");
  v.expect_rc(gddt_device_stream_synchronize(stream), MPI_SUCCESS, "gddt_device_stream_synchronize");
  v.expect_rc(cudaGetLastError(), cudaSuccess, "kernel");
  DeviceLog h{};
  cudaMemcpy(&h, log, sizeof h, cudaMemcpyDeviceToHost);
  cudaFree(log);
  if (h.failures != 0) {
    char line[160];
    std::snprintf(line, sizeof line,
                  "device checks failed %d time(s), counted per thread; first at line %d (got %d, expected %d)",
                  h.failures, h.line, h.got, h.want);
    v.fail(line);
  }
}

// Every rank's verdict gathered: one line per case from rank 0.
void report(const std::string &name, const Verdict &v) {
  const int mine = v.why.empty() ? 0 : 1;
  int any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (mine) std::printf("FAIL %s: rank %d: %s\n", name.c_str(), rank, v.why.c_str());
  std::fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && !any) std::printf("ok %s\n", name.c_str());
  std::fflush(stdout);
  failed_cases += any;
}

const char *scope_name(gddt_scope s) {
  return s == GDDT_SCOPE_THREAD ? "thread" : s == GDDT_SCOPE_WARP ? "warp" : "block";
}

long long counter(const char *name) {
  long long value = 0;
  gddt_counter(name, &value);
  return value;
}

// Ping-pong between rank 0 and 1 over `blocks` blocks; `host_rank` (0 or 1), if any, plays its
// part with blocking MPI on device memory instead of a kernel. Returns the device.direct count
// this rank's requests added.
long long pingpong(Verdict &v, const gddt_device_comm_t &comm, const TypeCase &c, gddt_scope scope, int count,
                   int iters, int blocks, int host_rank) {
  const Message m = message(c, count, 100);
  const int slices = iters * blocks;
  const int seed = 7 + count;
  DeviceBuffer send(host_slices(m, slices, rank == 0 ? seed : -1)), recv(host_slices(m, slices, -1));
  const long long direct_before = counter("device.direct");
  if (rank == host_rank) {
    for (int i = 0; i < iters; ++i) {
      unsigned char *in = recv.ptr + i * m.span;
      if (rank == 0) {
        MPI_Send(send.ptr + i * m.span, count, c.type, 1, m.tag, MPI_COMM_WORLD);
        MPI_Recv(in, count, c.type, 1, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(in, count, c.type, 0, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(in, count, c.type, 0, m.tag, MPI_COMM_WORLD);
      }
    }
  } else {
    run_kernel(v, [&](DeviceLog *log) {
      pingpong_kernel<<<blocks, kThreads, 0, stream>>>(comm, m, scope, send.ptr, recv.ptr, iters, log);
    });
  }
  v.expect_bytes(recv.read(), expected_slices(c, m, slices, seed), "received");
  return counter("device.direct") - direct_before;
}

void pingpong_case(const gddt_device_comm_t &comm, const TypeCase &c, gddt_scope scope) {
  Verdict v;
  pingpong(v, comm, c, scope, 3, 16, 1, -1);
  report(std::string("pingpong ") + c.name + " " + scope_name(scope), v);
}

void exchange_case(const gddt_device_comm_t &comm, const TypeCase &c, gddt_scope scope) {
  Verdict v;
  // Eight elements: the subarray's 1280 bytes take two of the test's 1 KiB staging slots.
  const Message m = message(c, 8, 200);
  const int iters = 8;
  const int left = (rank + nranks - 1) % nranks;
  DeviceBuffer send(host_slices(m, iters, 1000 * rank)), recv(host_slices(m, iters, -1));
  run_kernel(v, [&](DeviceLog *log) {
    exchange_kernel<<<1, kThreads, 0, stream>>>(comm, m, scope, send.ptr, recv.ptr, iters, log);
  });
  v.expect_bytes(recv.read(), expected_slices(c, m, iters, 1000 * left), "received");
  report(std::string("exchange ") + c.name + " " + scope_name(scope), v);
}

void many_case(const gddt_device_comm_t &comm, const TypeCase &c, gddt_scope scope, int n, int rounds, bool wildcard,
               const std::string &name) {
  Verdict v;
  const Message m = message(c, 1, 300);
  if (m.bytes > comm.ring.slot_bytes || n > kMaxOutstanding)
    v.fail("needs GDDT_DEVICE_RING_SLOTS <= 32 and 1 KiB slots (the test's registration sets them)");
  const int slices = n * rounds;
  if (v.why.empty() && rank <= 1) {
    DeviceBuffer buf(host_slices(m, slices, rank == 0 ? 50 : -1));
    run_kernel(v, [&](DeviceLog *log) {
      many_kernel<<<1, kThreads, 0, stream>>>(comm, m, scope, buf.ptr, n, rounds, wildcard, log);
    });
    if (rank == 1) v.expect_bytes(buf.read(), expected_slices(c, m, slices, 50), "received");
  }
  report(name, v);
}

void several_blocks_case(const gddt_device_comm_t &comm, const TypeCase &c) {
  Verdict v;
  pingpong(v, comm, c, GDDT_SCOPE_BLOCK, 2, 6, 4, -1);
  report(std::string("several blocks ") + c.name, v);
}

void host_peer_case(const gddt_device_comm_t &comm, const TypeCase &c, int host_rank) {
  Verdict v;
  pingpong(v, comm, c, GDDT_SCOPE_BLOCK, 3, 8, 1, host_rank);
  report(std::string("host rank ") + std::to_string(host_rank) + " MPI_Send/MPI_Recv " + c.name, v);
}

// Beyond the staging (every scope), and beyond GDDT_DEVICE_THREAD_PACK_MAX for one thread: the
// proxy hands the device buffer and datatype to gddt's point-to-point.
void direct_case(const gddt_device_comm_t &comm, const TypeCase &c, gddt_scope scope, int64_t bytes, const char *why) {
  Verdict v;
  const int count = static_cast<int>(bytes / type_size(c.type) + 1);
  const int iters = 4;
  const long long direct = pingpong(v, comm, c, scope, count, iters, 1, -1);
  if (direct != 2 * iters)
    v.fail("device.direct grew by " + std::to_string(direct) + ", not " + std::to_string(2 * iters));
  report(std::string("direct (") + why + ") " + c.name + " " + scope_name(scope), v);
}

void errors_case(const gddt_device_comm_t &comm, const TypeCase &c, gddt_scope scope) {
  Verdict v;
  const Message m = message(c, 2, 0);
  DeviceBuffer buf(host_slices(m, 1, 3));
  const long long posts = counter("device.posts");
  run_kernel(v, [&](DeviceLog *log) { errors_kernel<<<1, kThreads, 0, stream>>>(comm, m, scope, buf.ptr, log); });
  if (counter("device.posts") != posts) v.fail("a refused request reached the proxy");
  v.expect_bytes(buf.read(), host_slices(m, 1, 3), "the buffer of refused requests");
  report(std::string("in-kernel errors ") + scope_name(scope), v);
}

void collectives_case(const gddt_device_comm_t &comm, gddt_scope scope) {
  Verdict v;
  const int nd = 5, ni = 33, iters = 3;
  std::vector<double> in(nd);
  for (int i = 0; i < nd; ++i) in[i] = 0.25 * i + rank;
  std::vector<int> ints(ni * iters);
  for (int i = 0; i < ni * iters; ++i) ints[i] = (i % 3 == rank % 3) ? 1000 * rank + i : -i;
  double *d_in = nullptr, *d_sum = nullptr;
  int *d_ints = nullptr;
  cudaMalloc(&d_in, nd * sizeof(double));
  cudaMalloc(&d_sum, nd * iters * sizeof(double));
  cudaMalloc(&d_ints, ni * iters * sizeof(int));
  cudaMemcpy(d_in, in.data(), nd * sizeof(double), cudaMemcpyHostToDevice);
  cudaMemset(d_sum, 0xEE, nd * iters * sizeof(double));
  cudaMemcpy(d_ints, ints.data(), ni * iters * sizeof(int), cudaMemcpyHostToDevice);
  run_kernel(v, [&](DeviceLog *log) {
    collectives_kernel<<<1, kThreads, 0, stream>>>(comm, scope, d_in, d_sum, d_ints, nd, ni, iters, log);
  });
  std::vector<double> sum(nd * iters);
  cudaMemcpy(sum.data(), d_sum, sum.size() * sizeof(double), cudaMemcpyDeviceToHost);
  cudaMemcpy(ints.data(), d_ints, ints.size() * sizeof(int), cudaMemcpyDeviceToHost);
  for (int k = 0; k < iters; ++k)
    for (int i = 0; i < nd; ++i) {
      // Quarters and small integers: every partial sum is exact in any order.
      const double want = 0.25 * i * nranks + nranks * (nranks - 1) / 2.0;
      if (sum[k * nd + i] != want)
        v.fail("sum of doubles, element " + std::to_string(i) + " is " + std::to_string(sum[k * nd + i]));
    }
  for (int i = 0; i < ni * iters; ++i) {
    int want = INT_MIN;
    for (int r = 0; r < nranks; ++r) want = std::max(want, (i % 3 == r % 3) ? 1000 * r + i : -i);
    if (ints[i] != want) v.fail("max of ints, element " + std::to_string(i) + " is " + std::to_string(ints[i]));
  }
  cudaFree(d_in);
  cudaFree(d_sum);
  cudaFree(d_ints);
  report(std::string("barrier, allreduce ") + scope_name(scope), v);
}

}  // namespace

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int devices = 0;
  const int usable = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 ? 1 : 0;
  int all_usable = 0;
  MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_usable || nranks != 2) {
    if (rank == 0) std::printf("device_kernel: skipped: needs 2 ranks, each with a usable GPU\n");
    MPI_Finalize();
    return 0;  // the line above skips the test (gddt_add_mpi_test)
  }
  MPI_Comm local;
  int local_rank = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_free(&local);
  cudaSetDevice(local_rank % devices);
  // gddt orders its own GPU work after the legacy default stream: kernels that wait on direct
  // messages must not be on a stream that waits for it.
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (rank == 0)
    std::printf("MPI thread level %d, proxy %s\n", provided,
                std::getenv("GDDT_DEVICE_PROXY") ? std::getenv("GDDT_DEVICE_PROXY") : "auto");

  gddt_device_comm_t comm;
  if (gddt_device_comm_create(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
    std::fprintf(stderr, "rank %d: gddt_device_comm_create failed\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::vector<TypeCase> types = make_types();
  const gddt_scope scopes[3] = {GDDT_SCOPE_THREAD, GDDT_SCOPE_WARP, GDDT_SCOPE_BLOCK};
  for (const TypeCase &c : types)
    for (gddt_scope s : scopes) {
      pingpong_case(comm, c, s);
      exchange_case(comm, c, s);
    }
  const int nslots = static_cast<int>(comm.ring.nslots);
  many_case(comm, types[0], GDDT_SCOPE_WARP, nslots, 3, false, "ring full, 3 rounds (wraps)");
  many_case(comm, types[3], GDDT_SCOPE_THREAD, nslots - 1, 2, false, "ring one short of full, thread scope");
  many_case(comm, types[2], GDDT_SCOPE_BLOCK, 6, 2, true, "MPI_ANY_SOURCE, MPI_ANY_TAG");
  for (const TypeCase &c : types) several_blocks_case(comm, c);
  for (int host_rank : {1, 0}) host_peer_case(comm, types[1], host_rank);
  host_peer_case(comm, types[3], 1);
  const int64_t staging = static_cast<int64_t>(nslots) * comm.ring.slot_bytes;
  direct_case(comm, types[0], GDDT_SCOPE_BLOCK, staging, "beyond the staging");
  direct_case(comm, types[1], GDDT_SCOPE_WARP, staging, "beyond the staging");
  direct_case(comm, types[3], GDDT_SCOPE_THREAD, static_cast<int64_t>(comm.ring.thread_pack_max),
              "beyond the thread pack limit");
  for (gddt_scope s : scopes) errors_case(comm, types[2], s);
  for (gddt_scope s : scopes) collectives_case(comm, s);

  for (TypeCase &c : types) {
    gddt_device_type_free(&c.device);
    MPI_Type_free(&c.type);
  }
  gddt_device_comm_free(&comm);
  cudaStreamDestroy(stream);
  if (rank == 0) std::printf("%s: %d case(s) failed\n", failed_cases == 0 ? "PASS" : "FAIL", failed_cases);
  MPI_Finalize();
  return failed_cases == 0 ? 0 : 1;
}
