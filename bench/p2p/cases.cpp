#include "cases.hpp"

#include <algorithm>
#include <cmath>

#include "checks.hpp"

namespace gddt::bench {
namespace {

constexpr std::size_t kWord = 4;

std::size_t face_row_count(std::size_t packed, std::size_t plane_words, std::size_t minimum, std::size_t maximum) {
  const std::size_t budget = std::max(kFaceArrayBytes, 4 * packed) / (kWord * plane_words);
  return std::clamp(budget, minimum, std::max(minimum, maximum));
}

void commit(MPI_Datatype* type) { BENCH_MPI_CHECK(MPI_Type_commit(type)); }

// Deterministic block lengths and gaps of the indexed type, so that every rank and every run
// builds the same one.
class SplitMix64 {
 public:
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_ = 2024;
};

}  // namespace

std::string TableSpec::name() const {
  return family == "vector" ? "vector " + std::to_string(vector_block) + "B" : family;
}

std::string TableSpec::description() const {
  if (family == "vector") {
    return "MPI_Type_vector of floats: blocks of " + std::to_string(vector_block) + " B, stride " +
           std::to_string(2 * vector_block) + " B";
  }
  if (family == "subarray2d") {
    return "MPI_Type_create_subarray: the last column of a 2-D float array [packed/4][nx], nx <= 64 MiB/row";
  }
  if (family == "subarray3d") {
    return "MPI_Type_create_subarray: the x face (inside one ghost layer) of a 3-D float array [fz+2][fy+2][nx]";
  }
  if (family == "indexed") {
    return "MPI_Type_indexed of floats: pseudo-random blocks of 1..32 floats, gaps of 1..32 floats";
  }
  return "MPI_Type_create_struct {double x; double y, z; float m; int id}, sending x, m, id (16 of 32 B)";
}

Case::Case(Case&& other) noexcept
    : type(other.type),
      count(other.count),
      packed(other.packed),
      extent(other.extent),
      min_block(other.min_block),
      pieces(std::move(other.pieces)),
      pieces_span_gaps(other.pieces_span_gaps),
      walk(std::move(other.walk)),
      serial(other.serial) {
  other.type = MPI_DATATYPE_NULL;
}

Case::~Case() {
  if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
}

std::optional<Case> Case::make(const TableSpec& spec, std::size_t packed) {
  static std::uint64_t last_serial = 0;
  Case result;
  result.packed = packed;
  TypeWalk& walk = result.walk;
  if (spec.family == "vector") {
    const std::size_t block = spec.vector_block;
    if (packed < block || packed % block != 0) return std::nullopt;
    const std::size_t blocks = packed / block;
    BENCH_MPI_CHECK(MPI_Type_vector(static_cast<int>(blocks), static_cast<int>(block / kWord),
                                    static_cast<int>(2 * block / kWord), MPI_FLOAT, &result.type));
    result.extent = (2 * blocks - 1) * block;
    result.min_block = block;
    result.pieces = {{0, block, blocks, 2 * block}};
    walk.block_words = block / kWord;
    walk.count[0] = blocks;
    walk.stride[0] = 2 * block;
  } else if (spec.family == "subarray2d") {
    if (packed % kWord != 0) return std::nullopt;
    const std::size_t rows = packed / kWord;
    const std::size_t columns = face_row_count(packed, rows, 2, rows);
    const int sizes[2] = {static_cast<int>(rows), static_cast<int>(columns)};
    const int subsizes[2] = {static_cast<int>(rows), 1};
    const int starts[2] = {0, static_cast<int>(columns - 1)};
    BENCH_MPI_CHECK(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &result.type));
    result.extent = rows * columns * kWord;
    result.min_block = kWord;
    result.pieces = {{(columns - 1) * kWord, kWord, rows, columns * kWord}};
    walk.base = (columns - 1) * kWord;
    walk.block_words = 1;
    walk.count[0] = rows;
    walk.stride[0] = columns * kWord;
  } else if (spec.family == "subarray3d") {
    if (packed % kWord != 0) return std::nullopt;
    const std::size_t words = packed / kWord;
    std::size_t face_y = static_cast<std::size_t>(std::sqrt(static_cast<double>(words)));
    while (face_y > 1 && words % face_y != 0) --face_y;  // the squarest fz x fy face
    const std::size_t face_z = words / face_y;
    const std::size_t ny = face_y + 2;
    const std::size_t nz = face_z + 2;
    const std::size_t nx = face_row_count(packed, ny * nz, 3, ny);
    const int sizes[3] = {static_cast<int>(nz), static_cast<int>(ny), static_cast<int>(nx)};
    const int subsizes[3] = {static_cast<int>(face_z), static_cast<int>(face_y), 1};
    const int starts[3] = {1, 1, static_cast<int>(nx - 2)};
    BENCH_MPI_CHECK(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &result.type));
    result.extent = nz * ny * nx * kWord;
    result.min_block = kWord;
    walk.base = ((ny + 1) * nx + nx - 2) * kWord;
    walk.block_words = 1;
    walk.count[0] = face_y;
    walk.count[1] = face_z;
    walk.stride[0] = nx * kWord;
    walk.stride[1] = ny * nx * kWord;
    for (std::size_t z = 0; z < face_z; ++z) {
      result.pieces.push_back({walk.base + z * walk.stride[1], kWord, face_y, nx * kWord});
    }
  } else if (spec.family == "indexed") {
    if (packed % kWord != 0) return std::nullopt;
    const std::size_t words = packed / kWord;
    std::vector<int> lengths;
    std::vector<int> displacements;
    SplitMix64 random;
    std::size_t placed = 0;
    std::size_t cursor = 0;
    while (placed < words) {
      const std::uint64_t draw = random.next();
      const std::size_t length = std::min<std::size_t>(1 + draw % 32, words - placed);
      walk.block_first_word.push_back(placed);
      walk.block_offset.push_back(cursor * kWord);
      lengths.push_back(static_cast<int>(length));
      displacements.push_back(static_cast<int>(cursor));
      placed += length;
      cursor += length + 1 + (draw >> 32) % 32;
    }
    walk.block_first_word.push_back(words);
    BENCH_MPI_CHECK(MPI_Type_indexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(),
                                     MPI_FLOAT, &result.type));
    result.extent = (static_cast<std::size_t>(displacements.back()) + lengths.back()) * kWord;
    result.min_block = kWord;
    result.pieces = {{0, result.extent, 1, result.extent}};  // no 2-D shape: the whole span
    result.pieces_span_gaps = true;
  } else {  // struct
    constexpr std::size_t kElementBytes = 32;
    constexpr std::size_t kSentBytes = 16;
    if (packed < kSentBytes || packed % kSentBytes != 0) return std::nullopt;
    const std::size_t elements = packed / kSentBytes;
    const int lengths[3] = {1, 1, 1};
    const MPI_Aint displacements[3] = {0, 24, 28};
    const MPI_Datatype types[3] = {MPI_DOUBLE, MPI_FLOAT, MPI_INT};
    MPI_Datatype fields = MPI_DATATYPE_NULL;
    BENCH_MPI_CHECK(MPI_Type_create_struct(3, lengths, displacements, types, &fields));
    BENCH_MPI_CHECK(MPI_Type_create_resized(fields, 0, kElementBytes, &result.type));
    BENCH_MPI_CHECK(MPI_Type_free(&fields));
    result.count = static_cast<int>(elements);
    result.extent = elements * kElementBytes;
    result.min_block = 8;
    result.pieces = {{0, 8, elements, kElementBytes}, {24, 8, elements, kElementBytes}};
    walk.block_words = 2;
    walk.count[0] = 2;
    walk.count[1] = elements;
    walk.stride[0] = 24;
    walk.stride[1] = kElementBytes;
  }
  commit(&result.type);
  result.serial = ++last_serial;
  return result;
}

}  // namespace gddt::bench
