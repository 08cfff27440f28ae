// gddt-bench-pack: how fast gddt packs and unpacks device memory, next to what a program could
// do without it. For vectors (block 4 B .. 64 KiB, stride twice the block), faces of 3-D grids
// (one cell thick and four cells thick, normal to x, y and z), two indexed types with irregular
// blocks (4-128 B of ints; 64-256 B of doubles) and a struct type, at packed sizes 4 KiB .. 256 MiB, it times (median of event-timed
// runs after warm-up, L2 flushed before each run):
//   gddt pack / unpack   gddt_pack_window / gddt_unpack_window on a user stream
//   cpy2d                cudaMemcpy2DAsync, where the shape is one block dimension
//   naive                one thread per MPI base element (table of offsets for indexed/struct)
//   D2D                  cudaMemcpyAsync of the packed bytes, the copy roofline
// and for packed sizes up to 64 KiB the cost of a synchronous MPI_Pack on device memory next
// to an empty kernel launch + stream synchronize, and of MPI_Pack into and MPI_Unpack out of
// pinned host memory (host wall clock medians).
// Every result is checked once against MPI_Pack / MPI_Unpack of a host copy before timing.
// Run as one MPI rank: gddt-bench-pack [--max-bytes 256M] [--min-bytes 4K] [--runs 15]
//   [--cases vector,face,indexed,struct] [--warm-cache] [--csv FILE]
// Exits 1 when a result is wrong, 77 without a GPU.
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gddt/gddt_mpi.h"

namespace {

#define CUDA_OR_DIE(call)                                                                      \
  do {                                                                                         \
    const cudaError_t error_ = (call);                                                         \
    if (error_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(error_)); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                            \
    }                                                                                          \
  } while (0)

// ---- options ------------------------------------------------------------------------------------

struct Options {
  std::int64_t min_bytes = 4 << 10;
  std::int64_t max_bytes = 256 << 20;
  int runs = 15;
  int warmup = 3;
  bool flush_l2 = true;
  std::string cases = "vector,face,indexed,struct";
  std::string csv;
};

bool parse_size(const char* text, std::int64_t* bytes) {
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || value <= 0) return false;
  const std::string unit = end;
  const double scale = unit.empty() ? 1 : unit == "K" ? 1 << 10 : unit == "M" ? 1 << 20 : unit == "G" ? 1 << 30 : 0;
  if (scale == 0) return false;
  *bytes = static_cast<std::int64_t>(value * scale);
  return true;
}

bool parse_options(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = value != nullptr;
    if (arg == "--max-bytes" && ok) {
      ok = parse_size(argv[++i], &o->max_bytes);
    } else if (arg == "--min-bytes" && ok) {
      ok = parse_size(argv[++i], &o->min_bytes);
    } else if (arg == "--runs" && ok) {
      o->runs = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--cases" && ok) {
      o->cases = argv[++i];
    } else if (arg == "--csv" && ok) {
      o->csv = argv[++i];
    } else if (arg == "--warm-cache") {
      o->flush_l2 = false;
      ok = true;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "usage: gddt-bench-pack [--max-bytes SIZE] [--min-bytes SIZE] [--runs N]\n"
                   "         [--cases vector,face,indexed,struct] [--warm-cache] [--csv FILE]\n"
                   "SIZE: bytes with an optional K, M or G suffix (default 4K .. 256M)\n");
      return false;
    }
  }
  return true;
}

// ---- the cases ------------------------------------------------------------------------------------

// Typed offset of the naive kernel's element i: a box of up to three dimensions, or (with a
// table) element i / table_len of the datatype plus the table's offset of i % table_len.
// Indices are 32-bit, as a hand-written kernel would have them (every case here has fewer
// than 2^31 elements).
struct NaiveMap {
  int ndims = 0;
  unsigned counts[3] = {1, 1, 1};
  std::int64_t strides[3] = {0, 0, 0};
  std::int64_t base = 0;
  const std::int64_t* table = nullptr;
  unsigned table_len = 0;
  std::int64_t extent = 0;
};

struct Copy2d {
  bool possible = false;
  std::size_t width = 0, height = 0, pitch = 0;
  std::int64_t offset = 0;
};

struct Case {
  std::string family;  // vector, face, indexed, struct
  std::string label;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int count = 1;
  std::int64_t block_bytes = 0;  // typical contiguous run
  std::int64_t packed_bytes = 0;
  std::int64_t span_bytes = 0;   // typed bytes from the buffer pointer (all lower bounds are 0 here)
  std::int64_t extent = 0;
  int element_bytes = 4;         // the naive kernel's element
  NaiveMap naive;
  std::vector<std::int64_t> naive_table;  // host copy of naive.table
  Copy2d cpy2d;
};

void finish_case(Case* c) {
  MPI_Type_commit(&c->type);
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_size_x(c->type, &size);
  MPI_Type_get_extent_x(c->type, &lb, &extent);
  MPI_Type_get_true_extent_x(c->type, &true_lb, &true_extent);
  c->packed_bytes = size * c->count;
  c->span_bytes = (c->count - 1) * extent + true_lb + true_extent;
  c->extent = extent;
  c->naive.extent = extent;
}

Case vector_case(std::int64_t block, std::int64_t packed) {
  Case c;
  c.family = "vector";
  c.label = "vector";
  const std::int64_t blocks = packed / block;
  MPI_Type_vector(static_cast<int>(blocks), static_cast<int>(block / 4), static_cast<int>(2 * block / 4), MPI_INT,
                  &c.type);
  c.block_bytes = block;
  c.naive.ndims = 2;
  c.naive.counts[0] = static_cast<unsigned>(block / 4);
  c.naive.strides[0] = 4;
  c.naive.counts[1] = static_cast<unsigned>(blocks);
  c.naive.strides[1] = 2 * block;
  c.cpy2d = {true, static_cast<std::size_t>(block), static_cast<std::size_t>(blocks), static_cast<std::size_t>(2 * block), 0};
  finish_case(&c);
  return c;
}

// A face of a grid of doubles: `depth` cells thick, normal to `axis` (0 = x, fastest), covering
// the interior (a halo of 2 cells excluded) in the two other directions. The grid is 16 cells
// along the normal and sized across it so that the face holds about `packed` bytes.
Case face_case(int axis, int depth, std::int64_t packed) {
  constexpr int kHalo = 2;
  constexpr int kNormalCells = 16;
  const int across = std::max(1, static_cast<int>(std::lround(std::sqrt(static_cast<double>(packed) / (8.0 * depth)))));
  int sizes[3], subsizes[3], starts[3];  // x, y, z
  for (int d = 0; d < 3; ++d) {
    sizes[d] = d == axis ? kNormalCells : across + 2 * kHalo;
    subsizes[d] = d == axis ? depth : across;
    starts[d] = kHalo;
  }
  Case c;
  c.family = "face";
  c.label = std::string(1, "xyz"[axis]) + "-face " + (depth == 1 ? "2-D" : "3-D");
  const int c_sizes[3] = {sizes[2], sizes[1], sizes[0]};
  const int c_subsizes[3] = {subsizes[2], subsizes[1], subsizes[0]};
  const int c_starts[3] = {starts[2], starts[1], starts[0]};
  MPI_Type_create_subarray(3, c_sizes, c_subsizes, c_starts, MPI_ORDER_C, MPI_DOUBLE, &c.type);
  c.element_bytes = 8;
  c.block_bytes = 8LL * subsizes[0];
  const std::int64_t row = 8LL * sizes[0], plane = row * sizes[1];
  c.naive.ndims = 3;
  c.naive.counts[0] = subsizes[0];
  c.naive.strides[0] = 8;
  c.naive.counts[1] = subsizes[1];
  c.naive.strides[1] = row;
  c.naive.counts[2] = subsizes[2];
  c.naive.strides[2] = plane;
  c.naive.base = starts[2] * plane + starts[1] * row + 8LL * starts[0];
  // Rows of x-runs, equally spaced, when one of the two outer dimensions is a single cell.
  if (subsizes[1] == 1 || subsizes[2] == 1) {
    const auto rows = static_cast<std::size_t>(subsizes[1] == 1 ? subsizes[2] : subsizes[1]);
    const auto pitch = static_cast<std::size_t>(subsizes[1] == 1 ? plane : row);
    c.cpy2d = {true, static_cast<std::size_t>(c.block_bytes), rows, pitch, c.naive.base};
  }
  finish_case(&c);
  return c;
}

// Offsets of each 4-byte word of one element, in packed order, for the naive kernel.
void word_table(Case* c, const std::vector<std::pair<std::int64_t, std::int64_t>>& blocks) {
  for (const auto& [offset, bytes] : blocks) {
    for (std::int64_t b = 0; b < bytes; b += 4) c->naive_table.push_back(offset + b);
  }
  c->naive.table_len = static_cast<unsigned>(c->naive_table.size());
}

// 64 blocks of `shortest`..`longest` elements of `base` (`base_bytes` each) with gaps of 0..32
// elements (fixed seed), repeated to about `packed` bytes.
Case indexed_case(std::int64_t packed, const char* label, MPI_Datatype base, int base_bytes, int shortest, int longest) {
  constexpr int kBlocks = 64;
  std::mt19937 rng(7);
  std::vector<int> lengths(kBlocks), displacements(kBlocks);
  std::vector<std::pair<std::int64_t, std::int64_t>> blocks;
  int at = 0, elements = 0;
  for (int i = 0; i < kBlocks; ++i) {
    lengths[i] = shortest + static_cast<int>(rng() % static_cast<unsigned>(longest - shortest + 1));
    displacements[i] = at;
    blocks.emplace_back(std::int64_t{base_bytes} * at, std::int64_t{base_bytes} * lengths[i]);
    elements += lengths[i];
    at += lengths[i] + static_cast<int>(rng() % 33);
  }
  const std::int64_t element_bytes = std::int64_t{base_bytes} * elements;
  Case c;
  c.family = "indexed";
  c.label = label;
  MPI_Type_indexed(kBlocks, lengths.data(), displacements.data(), base, &c.type);
  c.count = static_cast<int>(std::max<std::int64_t>(1, packed / element_bytes));
  c.block_bytes = element_bytes / kBlocks;
  word_table(&c, blocks);
  finish_case(&c);
  return c;
}

// A particle record of which the position, id, velocity and mass are sent.
struct Particle {
  double position[3];
  float charge;
  int id;
  double velocity[3];
  double force[3];
  float mass;
  int flags;
};

Case struct_case(std::int64_t packed) {
  const int lengths[4] = {3, 1, 3, 1};
  const MPI_Aint displacements[4] = {offsetof(Particle, position), offsetof(Particle, id), offsetof(Particle, velocity),
                                     offsetof(Particle, mass)};
  const MPI_Datatype types[4] = {MPI_DOUBLE, MPI_INT, MPI_DOUBLE, MPI_FLOAT};
  MPI_Datatype record = MPI_DATATYPE_NULL;
  MPI_Type_create_struct(4, lengths, displacements, types, &record);
  Case c;
  c.family = "struct";
  c.label = "struct";
  MPI_Type_create_resized(record, 0, sizeof(Particle), &c.type);
  MPI_Type_free(&record);
  constexpr std::int64_t kSentBytes = 3 * 8 + 4 + 3 * 8 + 4;
  c.count = static_cast<int>(std::max<std::int64_t>(1, packed / kSentBytes));
  c.block_bytes = kSentBytes / 3;  // three runs: position, id + velocity, mass
  word_table(&c,
             {{offsetof(Particle, position), 24}, {offsetof(Particle, id), 4}, {offsetof(Particle, velocity), 24},
              {offsetof(Particle, mass), 4}});
  finish_case(&c);
  return c;
}

// Every power of two from 4 KiB to 64 KiB, where small-message thresholds lie, then every
// 16th up to 256 MiB.
std::vector<std::int64_t> packed_sizes(const Options& o) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = 4 << 10; s <= (std::int64_t{256} << 20); s *= s < (64 << 10) ? 2 : 16) {
    if (s >= o.min_bytes && s <= o.max_bytes) sizes.push_back(s);
  }
  return sizes;
}

bool wanted(const Options& o, const char* family) { return ("," + o.cases + ",").find(std::string(",") + family + ",") != std::string::npos; }

// ---- device work -----------------------------------------------------------------------------------

template <typename Element>
__global__ void naive_pack(const char* typed, Element* packed, unsigned n, NaiveMap m) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  std::int64_t offset = m.base;
  if (m.table != nullptr) {
    offset += static_cast<std::int64_t>(i / m.table_len) * m.extent + m.table[i % m.table_len];
  } else {
    unsigned rest = i;
    for (int d = 0; d < m.ndims; ++d) {
      offset += static_cast<std::int64_t>(rest % m.counts[d]) * m.strides[d];
      rest /= m.counts[d];
    }
  }
  packed[i] = *reinterpret_cast<const Element*>(typed + offset);
}

__global__ void fill_pattern(unsigned char* bytes, std::int64_t n, unsigned seed) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    bytes[i] = static_cast<unsigned char>((i * 2654435761u + seed) >> 11);
  }
}

__global__ void empty_kernel() {}

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

void fill(char* bytes, std::int64_t n, unsigned seed, cudaStream_t s) {
  fill_pattern<<<1024, 256, 0, s>>>(reinterpret_cast<unsigned char*>(bytes), n, seed);
  CUDA_OR_DIE(cudaGetLastError());
}

void launch_naive(const Case& c, const char* typed, char* packed, cudaStream_t s) {
  const auto n = static_cast<unsigned>(c.packed_bytes / (c.naive.table != nullptr ? 4 : c.element_bytes));
  const unsigned blocks = (n + 255) / 256;
  if (c.naive.table == nullptr && c.element_bytes == 8) {
    naive_pack<<<blocks, 256, 0, s>>>(typed, reinterpret_cast<unsigned long long*>(packed), n, c.naive);
  } else {
    naive_pack<<<blocks, 256, 0, s>>>(typed, reinterpret_cast<unsigned*>(packed), n, c.naive);
  }
}

// ---- timing ----------------------------------------------------------------------------------------

double median_of(std::vector<double> times) {
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

struct Timer {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  char* scratch = nullptr;  // written before each run to push the operands out of L2
  std::size_t scratch_bytes = 0;
  int runs = 15, warmup = 3;

  // Median event time of op() in microseconds; negative when op() failed.
  template <typename Op>
  double median_us(Op&& op) {
    for (int i = 0; i < warmup; ++i) {
      if (!op()) return -1;
    }
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
      if (scratch != nullptr) CUDA_OR_DIE(cudaMemsetAsync(scratch, i & 0xff, scratch_bytes, stream));
      CUDA_OR_DIE(cudaEventRecord(start, stream));
      if (!op()) return -1;
      CUDA_OR_DIE(cudaEventRecord(stop, stream));
      CUDA_OR_DIE(cudaEventSynchronize(stop));
      float ms = 0;
      CUDA_OR_DIE(cudaEventElapsedTime(&ms, start, stop));
      times.push_back(1000.0 * ms);
    }
    return median_of(std::move(times));
  }
};

template <typename Op, typename After>
double median_wall_us(int runs, Op&& op, After&& after) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    op();
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    after();
  }
  return median_of(std::move(times));
}

template <typename Op>
double median_wall_us(int runs, Op&& op) {
  return median_wall_us(runs, op, [] {});
}

// Median wall times of two operations timed in turns, each first in every other round, so that
// both see the same state of the machine (its clocks, the virtual machine's neighbours): timed
// in runs of their own, the same empty launch moved by up to 1.4 us from one row to the next.
template <typename OpA, typename OpB>
std::pair<double, double> paired_median_wall_us(int runs, OpA&& a, OpB&& b) {
  std::vector<double> a_times, b_times;
  const auto timed = [](auto&& op, std::vector<double>* times) {
    const auto t0 = std::chrono::steady_clock::now();
    op();
    times->push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  };
  for (int i = 0; i < runs; ++i) {
    if (i % 2 == 0) {
      timed(a, &a_times);
      timed(b, &b_times);
    } else {
      timed(b, &b_times);
      timed(a, &a_times);
    }
  }
  return {median_of(std::move(a_times)), median_of(std::move(b_times))};
}

// ---- checks ----------------------------------------------------------------------------------------

std::vector<char> to_host(const char* device, std::int64_t bytes) {
  std::vector<char> host(static_cast<std::size_t>(bytes));
  CUDA_OR_DIE(cudaMemcpy(host.data(), device, host.size(), cudaMemcpyDeviceToHost));
  return host;
}

bool same_bytes(const char* what, const Case& c, const std::vector<char>& got, const std::vector<char>& expected) {
  const auto bad = std::mismatch(got.begin(), got.end(), expected.begin());
  if (bad.first == got.end()) return true;
  std::printf("WRONG %s of %s (block %lld, packed %lld, count %d): byte %lld is %d, expected %d\n", what,
              c.label.c_str(), static_cast<long long>(c.block_bytes), static_cast<long long>(c.packed_bytes), c.count,
              static_cast<long long>(bad.first - got.begin()), *bad.first & 0xff, *bad.second & 0xff);
  return false;
}

// Allocated once for the largest case: gddt caches the address ranges of device memory, so a
// benchmark freeing and reallocating buffers would measure its re-classification (and a host
// allocation landing on freed device addresses would be taken for device memory).
struct Buffers {
  char* typed = nullptr;     // the data
  char* unpacked = nullptr;  // unpack target
  char* packed = nullptr;
  char* copy = nullptr;      // second packed buffer: D2D destination, other methods' results
  std::int64_t* table = nullptr;  // the naive kernel's offsets

  explicit Buffers(const std::vector<Case>& cases) {
    std::size_t span = 0, packed_bytes = 0, table_len = 1;
    for (const Case& c : cases) {
      span = std::max(span, static_cast<std::size_t>(c.span_bytes));
      packed_bytes = std::max(packed_bytes, static_cast<std::size_t>(c.packed_bytes));
      table_len = std::max(table_len, c.naive_table.size());
    }
    CUDA_OR_DIE(cudaMalloc(&typed, span));
    CUDA_OR_DIE(cudaMalloc(&unpacked, span));
    CUDA_OR_DIE(cudaMalloc(&packed, packed_bytes));
    CUDA_OR_DIE(cudaMalloc(&copy, packed_bytes));
    CUDA_OR_DIE(cudaMalloc(&table, table_len * sizeof(std::int64_t)));
  }
  ~Buffers() {
    for (void* p : {static_cast<void*>(typed), static_cast<void*>(unpacked), static_cast<void*>(packed),
                    static_cast<void*>(copy), static_cast<void*>(table)}) {
      cudaFree(p);
    }
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
};

// gddt's pack and unpack against MPI_Pack/MPI_Unpack of host copies; the baselines' packed
// bytes against MPI_Pack's. Leaves `typed` filled and `packed` holding its packed stream.
bool check(const Case& c, const Buffers& b, cudaStream_t s) {
  const std::int64_t n = c.packed_bytes;
  fill(b.typed, c.span_bytes, 1, s);
  fill(b.unpacked, c.span_bytes, 2, s);
  CUDA_OR_DIE(cudaStreamSynchronize(s));
  std::vector<char> typed_host = to_host(b.typed, c.span_bytes);
  std::vector<char> unpacked_host = to_host(b.unpacked, c.span_bytes);
  std::vector<char> reference(static_cast<std::size_t>(n));
  int position = 0;
  MPI_Pack(typed_host.data(), c.count, c.type, reference.data(), static_cast<int>(n), &position, MPI_COMM_SELF);
  position = 0;
  MPI_Unpack(reference.data(), static_cast<int>(n), &position, unpacked_host.data(), c.count, c.type, MPI_COMM_SELF);

  const gddt_status_t packed = gddt_pack_window(c.type, c.count, b.typed, b.packed, 0, n, s);
  const gddt_status_t unpacked = gddt_unpack_window(c.type, c.count, b.unpacked, b.packed, 0, n, s);
  CUDA_OR_DIE(cudaStreamSynchronize(s));
  if (packed != GDDT_OK || unpacked != GDDT_OK) {
    std::printf("WRONG %s: gddt_pack_window: %s, gddt_unpack_window: %s\n", c.label.c_str(),
                gddt_status_string(packed), gddt_status_string(unpacked));
    return false;
  }
  bool ok = same_bytes("gddt pack", c, to_host(b.packed, n), reference);
  ok = same_bytes("gddt unpack", c, to_host(b.unpacked, c.span_bytes), unpacked_host) && ok;
  launch_naive(c, b.typed, b.copy, s);
  CUDA_OR_DIE(cudaStreamSynchronize(s));
  ok = same_bytes("naive pack", c, to_host(b.copy, n), reference) && ok;
  if (c.cpy2d.possible) {
    CUDA_OR_DIE(cudaMemcpy2DAsync(b.copy, c.cpy2d.width, b.typed + c.cpy2d.offset, c.cpy2d.pitch, c.cpy2d.width,
                                  c.cpy2d.height, cudaMemcpyDeviceToDevice, s));
    CUDA_OR_DIE(cudaStreamSynchronize(s));
    ok = same_bytes("cpy2d", c, to_host(b.copy, n), reference) && ok;
  }
  return ok;
}

// ---- report -------------------------------------------------------------------------------------------

std::string human_bytes(std::int64_t bytes) {
  char text[32];
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) {
    std::snprintf(text, sizeof text, "%lld MiB", static_cast<long long>(bytes >> 20));
  } else if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) {
    std::snprintf(text, sizeof text, "%lld KiB", static_cast<long long>(bytes >> 10));
  } else if (bytes >= (1 << 20)) {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else if (bytes >= (1 << 10)) {
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / (1 << 10));
  } else {
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  }
  return text;
}

struct Report {
  FILE* csv = nullptr;

  void csv_row(const Case& c, const char* method, double us) const {
    if (csv == nullptr || us < 0) return;
    std::fprintf(csv, "%s,%s,%lld,%lld,%s,%.3f,%.3f\n", c.family.c_str(), c.label.c_str(),
                 static_cast<long long>(c.block_bytes), static_cast<long long>(c.packed_bytes), method, us,
                 static_cast<double>(c.packed_bytes) / us / 1e3);
  }
};

void print_header() {
  std::printf("\n%-13s %9s %10s |%17s |%17s |%17s |%17s |%17s | %8s %10s\n", "case", "block", "packed", "gddt pack",
              "gddt unpack", "cpy2d", "naive", "D2D", "pack/D2D", "pack/cpy2d");
  std::printf("%-13s %9s %10s |", "", "", "");
  for (int i = 0; i < 5; ++i) std::printf("%9s %7s |", "us", "GB/s");
  std::printf(" %8s %10s\n", "(GB/s)", "(GB/s)");
}

void print_time(double us, std::int64_t bytes) {
  if (us < 0) {
    std::printf("%9s %7s |", "-", "-");
  } else {
    std::printf("%9.1f %7.1f |", us, static_cast<double>(bytes) / us / 1e3);
  }
}

// gddt pack's bandwidth over D2D's (as a percentage) and over cpy2d's (as a factor).
void print_ratios(double pack_us, double d2d_us, double cpy2d_us) {
  char to_d2d[16] = "-", to_cpy2d[16] = "-";
  if (pack_us > 0 && d2d_us > 0) std::snprintf(to_d2d, sizeof to_d2d, "%.0f%%", 100 * d2d_us / pack_us);
  if (pack_us > 0 && cpy2d_us > 0) std::snprintf(to_cpy2d, sizeof to_cpy2d, "%.1fx", cpy2d_us / pack_us);
  std::printf(" %8s %10s", to_d2d, to_cpy2d);
}

// ---- the run -----------------------------------------------------------------------------------------

void print_device(cudaStream_t stream) {
  int device = 0, sms = 0, clock_khz = 0, memory_khz = 0, bus_bits = 0, l2 = 0;
  CUDA_OR_DIE(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  CUDA_OR_DIE(cudaGetDeviceProperties(&properties, device));
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
  // The clock the SMs run at under load: a spin of known cycles, timed with events.
  constexpr long long kCycles = 200'000'000;
  cudaEvent_t start, stop;
  CUDA_OR_DIE(cudaEventCreate(&start));
  CUDA_OR_DIE(cudaEventCreate(&stop));
  spin<<<1, 1, 0, stream>>>(kCycles / 4);  // ramps the clock up
  CUDA_OR_DIE(cudaEventRecord(start, stream));
  spin<<<1, 1, 0, stream>>>(kCycles);
  CUDA_OR_DIE(cudaEventRecord(stop, stream));
  CUDA_OR_DIE(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_OR_DIE(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::printf("GPU %d: %s, %d SMs, L2 %d MiB, %zu GiB; SM clock %d MHz peak, %.0f MHz measured under load; "
              "memory clock %d MHz, bus %d bits\n",
              device, properties.name, sms, l2 >> 20, properties.totalGlobalMem >> 30, clock_khz / 1000,
              kCycles / (ms * 1e3), memory_khz / 1000, bus_bits);
}

std::vector<Case> build_cases(const Options& o) {
  std::vector<Case> cases;
  for (std::int64_t packed : packed_sizes(o)) {
    if (wanted(o, "vector")) {
      for (std::int64_t block = 4; block <= (64 << 10) && block <= packed; block *= 4) cases.push_back(vector_case(block, packed));
    }
    if (wanted(o, "face")) {
      for (int depth : {1, 4}) {
        for (int axis = 0; axis < 3; ++axis) cases.push_back(face_case(axis, depth, packed));
      }
    }
    if (wanted(o, "indexed")) {
      cases.push_back(indexed_case(packed, "indexed", MPI_INT, 4, 1, 32));  // blocks of 4 B .. 128 B
      cases.push_back(indexed_case(packed, "indexed >=64B", MPI_DOUBLE, 8, 8, 32));  // 64 B .. 256 B
    }
    if (wanted(o, "struct")) cases.push_back(struct_case(packed));
  }
  return cases;
}

int run(const Options& o) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("gddt-bench-pack: no usable CUDA device\n");
    return 77;
  }
  cudaStream_t stream;
  CUDA_OR_DIE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  print_device(stream);
  Timer timer;
  timer.stream = stream;
  timer.runs = o.runs;
  timer.warmup = o.warmup;
  CUDA_OR_DIE(cudaEventCreate(&timer.start));
  CUDA_OR_DIE(cudaEventCreate(&timer.stop));
  if (o.flush_l2) {
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
    timer.scratch_bytes = 2 * static_cast<std::size_t>(l2);
    CUDA_OR_DIE(cudaMalloc(&timer.scratch, timer.scratch_bytes));
  }
  Report report;
  if (!o.csv.empty()) {
    report.csv = std::fopen(o.csv.c_str(), "w");
    if (report.csv == nullptr) {
      std::perror(o.csv.c_str());
      return 1;
    }
    std::fprintf(report.csv, "family,case,block_bytes,packed_bytes,method,time_us,gbps\n");
  }
  std::printf("median of %d event-timed runs after %d warm-up runs, %s; GB/s = packed bytes / time\n", o.runs,
              o.warmup, o.flush_l2 ? "L2 flushed before each run" : "L2 left warm");

  std::vector<Case> cases = build_cases(o);
  struct Small {
    std::string label;
    std::int64_t block, packed;
    double mpi_pack_us, launch_us, call_us, launch_call_us, to_pinned_us, from_pinned_us;
    int tries;
  };
  constexpr double kDisturbed = 1.5;
  constexpr int kMostTries = 3;
  double quiet_launch_us = 1e9;  // the quickest empty launch + synchronize of a row so far
  // Staged messages pack into and unpack from pinned host memory: their small-message path.
  char* pinned = nullptr;
  CUDA_OR_DIE(cudaMallocHost(&pinned, 64 << 10));
  std::vector<Small> small;
  bool all_correct = true;
  print_header();
  const Buffers b(cases);
  for (Case& c : cases) {
    const auto packed = static_cast<std::size_t>(c.packed_bytes);
    if (!c.naive_table.empty()) {
      CUDA_OR_DIE(cudaMemcpy(b.table, c.naive_table.data(), c.naive_table.size() * sizeof(std::int64_t),
                             cudaMemcpyHostToDevice));
      c.naive.table = b.table;
    }
    const bool correct = check(c, b, stream);
    all_correct = all_correct && correct;
    const std::int64_t n = c.packed_bytes;
    const double pack_us = timer.median_us([&] { return gddt_pack_window(c.type, c.count, b.typed, b.packed, 0, n, stream) == GDDT_OK; });
    const double unpack_us =
        timer.median_us([&] { return gddt_unpack_window(c.type, c.count, b.unpacked, b.packed, 0, n, stream) == GDDT_OK; });
    const double cpy2d_us = !c.cpy2d.possible ? -1 : timer.median_us([&] {
      return cudaMemcpy2DAsync(b.copy, c.cpy2d.width, b.typed + c.cpy2d.offset, c.cpy2d.pitch, c.cpy2d.width,
                               c.cpy2d.height, cudaMemcpyDeviceToDevice, stream) == cudaSuccess;
    });
    const double naive_us = timer.median_us([&] {
      launch_naive(c, b.typed, b.copy, stream);
      return cudaGetLastError() == cudaSuccess;
    });
    const double d2d_us = timer.median_us([&] {
      return cudaMemcpyAsync(b.copy, b.packed, packed, cudaMemcpyDeviceToDevice, stream) == cudaSuccess;
    });

    std::printf("%-13s %9s %10s |", c.label.c_str(), human_bytes(c.block_bytes).c_str(), human_bytes(n).c_str());
    for (double us : {pack_us, unpack_us, cpy2d_us, naive_us, d2d_us}) print_time(us, n);
    print_ratios(pack_us, d2d_us, cpy2d_us);
    std::printf("%s\n", correct ? "" : "  WRONG");
    std::fflush(stdout);
    report.csv_row(c, "gddt_pack", pack_us);
    report.csv_row(c, "gddt_unpack", unpack_us);
    report.csv_row(c, "cpy2d", cpy2d_us);
    report.csv_row(c, "naive", naive_us);
    report.csv_row(c, "d2d", d2d_us);

    if (n <= (64 << 10)) {
      const int runs = std::max(o.runs, 200);
      int position = 0;
      // A row whose empty launch took far longer than the quickest row's was measured while
      // something else held the machine (the launch alone took 2-3x as long for a few ms at a
      // time on the H100 machine): it is measured again, up to kMostTries in all, and the
      // attempt with the quickest launch is kept.
      double mpi_us = 0, launch_us = 0;
      int tries = 0;
      while (tries == 0 || (launch_us > kDisturbed * quiet_launch_us && tries < kMostTries)) {
        const auto [pack_attempt, launch_attempt] = paired_median_wall_us(
            runs,
            [&] {
              position = 0;
              MPI_Pack(b.typed, c.count, c.type, b.packed, static_cast<int>(n), &position, MPI_COMM_SELF);
            },
            [&] {
              empty_kernel<<<1, 1, 0, stream>>>();
              cudaStreamSynchronize(stream);
            });
        if (tries++ == 0 || launch_attempt < launch_us) {
          mpi_us = pack_attempt;
          launch_us = launch_attempt;
        }
      }
      quiet_launch_us = std::min(quiet_launch_us, launch_us);
      // The host's share: the asynchronous calls alone, each drained before the next.
      const auto drain = [&] { cudaStreamSynchronize(stream); };
      const double call_us = median_wall_us(
          runs, [&] { gddt_pack_window(c.type, c.count, b.typed, b.packed, 0, n, stream); }, drain);
      const double launch_call_us = median_wall_us(runs, [&] { empty_kernel<<<1, 1, 0, stream>>>(); }, drain);
      const double to_pinned_us = median_wall_us(runs, [&] {
        position = 0;
        MPI_Pack(b.typed, c.count, c.type, pinned, static_cast<int>(n), &position, MPI_COMM_SELF);
      });
      if (to_host(b.packed, n) != std::vector<char>(pinned, pinned + n)) {
        std::printf("%s %s: MPI_Pack into pinned memory differs from the device pack  WRONG\n", c.label.c_str(),
                    human_bytes(n).c_str());
        all_correct = false;
      }
      const double from_pinned_us = median_wall_us(runs, [&] {
        position = 0;
        MPI_Unpack(pinned, static_cast<int>(n), &position, b.unpacked, c.count, c.type, MPI_COMM_SELF);
      });
      small.push_back({c.label, c.block_bytes, n, mpi_us, launch_us, call_us, launch_call_us, to_pinned_us,
                       from_pinned_us, tries});
      report.csv_row(c, "mpi_pack_to_pinned", to_pinned_us);
      report.csv_row(c, "mpi_unpack_from_pinned", from_pinned_us);
      report.csv_row(c, "mpi_pack_sync", mpi_us);
      report.csv_row(c, "launch_sync", launch_us);
      report.csv_row(c, "pack_call_host", call_us);
      report.csv_row(c, "launch_call_host", launch_call_us);
    }
    MPI_Type_free(&c.type);
  }

  if (!small.empty()) {
    std::printf("\nsmall messages: synchronous MPI_Pack of device memory through gddt vs an empty kernel launch + "
                "cudaStreamSynchronize (host wall clock, medians, the two timed in turns)\n");
    std::printf("(host share: the wall time of the asynchronous gddt_pack_window call alone, and of the empty launch "
                "alone)\n");
    std::printf("(pinned: MPI_Pack into and MPI_Unpack out of pinned host memory, as staged messages do)\n");
    std::printf("(tries: rows whose launch + synchronize took over %.1fx the quickest row's were measured again, the\n"
                " attempt with the quickest launch kept)\n",
                kDisturbed);
    std::printf("%-13s %9s %10s | %12s %14s %10s | %12s %12s %10s | %10s %10s | %5s\n", "case", "block", "packed",
                "MPI_Pack us", "launch+sync us", "extra us", "host: pack", "host: launch", "host extra", "to pinned",
                "from pinned", "tries");
    for (const Small& s : small) {
      std::printf("%-13s %9s %10s | %12.1f %14.1f %10.1f | %12.1f %12.1f %10.1f | %10.1f %10.1f | %5d\n",
                  s.label.c_str(), human_bytes(s.block).c_str(), human_bytes(s.packed).c_str(), s.mpi_pack_us,
                  s.launch_us, s.mpi_pack_us - s.launch_us, s.call_us, s.launch_call_us, s.call_us - s.launch_call_us,
                  s.to_pinned_us, s.from_pinned_us, s.tries);
    }
  }
  cudaFreeHost(pinned);
  if (report.csv != nullptr) std::fclose(report.csv);
  cudaFree(timer.scratch);
  std::printf("\n%s\n", all_correct ? "all results match MPI_Pack/MPI_Unpack" : "SOME RESULTS ARE WRONG (see WRONG lines)");
  return all_correct ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Options options;
  int status = 0;
  if (!parse_options(argc, argv, &options)) {
    status = 2;
  } else if (rank == 0) {
    status = run(options);
  }
  MPI_Finalize();
  return status;
}
