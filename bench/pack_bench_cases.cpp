// gddt-bench-pack's command line and its cases (pack_bench_cases.hpp).
#include "pack_bench_cases.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace gddt_bench::pack {
namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace gddt_bench::pack
