#include "type_catalog.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace gddt_test::p2p {
namespace {

constexpr std::int64_t kInt = sizeof(int);

const SignatureUnit kIntUnit{"int", 4, 1};
const SignatureUnit kIntDoubleUnit{"int,double", 12, 2};
const SignatureUnit kMixedUnit{"char,double,int,short", 15, 4};

void append_run(std::vector<ByteRun>* runs, std::int64_t offset, std::int64_t length) {
  if (!runs->empty() && runs->back().offset + runs->back().length == offset) {
    runs->back().length += length;
  } else {
    runs->push_back({offset, length});
  }
}

// Fills in the size and, unless already set by a resize, the bounds implied by the runs.
TypeCase finish(TypeCase type, bool bounds_from_runs) {
  type.size = 0;
  std::int64_t low = INT64_MAX;
  std::int64_t high = INT64_MIN;
  for (const ByteRun& run : type.runs) {
    type.size += run.length;
    low = std::min(low, run.offset);
    high = std::max(high, run.offset + run.length);
  }
  if (bounds_from_runs) {
    type.lb = low;
    type.extent = high - low;
  }
  MPI_Type_commit(&type.type);
  return type;
}

// Replaces `type` by a resized copy with the given bounds.
void resize(TypeCase* type, std::int64_t lb, std::int64_t extent) {
  MPI_Datatype resized;
  MPI_Type_create_resized(type->type, lb, extent, &resized);
  MPI_Type_free(&type->type);
  type->type = resized;
  type->lb = lb;
  type->extent = extent;
}

TypeCase int_type() {
  TypeCase type{"int", MPI_INT, {{0, kInt}}, 0, kInt, kInt, kIntUnit, 0};
  type.size = kInt;
  return type;  // predefined: neither committed nor freed
}

TypeCase contiguous_ints(const std::string& name, int count) {
  TypeCase type{name, MPI_DATATYPE_NULL, {{0, count * kInt}}, 0, 0, 0, kIntUnit, 0};
  MPI_Type_contiguous(count, MPI_INT, &type.type);
  return finish(type, true);
}

TypeCase vector_ints(const std::string& name, int count, int block, int stride) {
  TypeCase type{name, MPI_DATATYPE_NULL, {}, 0, 0, 0, kIntUnit, 0};
  for (int i = 0; i < count; ++i) append_run(&type.runs, i * stride * kInt, block * kInt);
  MPI_Type_vector(count, block, stride, MPI_INT, &type.type);
  return finish(type, true);
}

// Blocks of ints at byte strides that need not be multiples of the int size. The extent is set
// explicitly to the span of the data: whether MPI pads it for alignment is up to the library.
TypeCase hvector_ints(const std::string& name, int count, int block, std::int64_t stride_bytes) {
  TypeCase type{name, MPI_DATATYPE_NULL, {}, 0, 0, 0, kIntUnit, 0};
  for (int i = 0; i < count; ++i) append_run(&type.runs, i * stride_bytes, block * kInt);
  MPI_Type_create_hvector(count, block, stride_bytes, MPI_INT, &type.type);
  resize(&type, 0, (count - 1) * stride_bytes + block * kInt);
  return finish(type, false);
}

TypeCase indexed_ints(const std::string& name, const std::vector<int>& blocks,
                      const std::vector<int>& displacements) {
  TypeCase type{name, MPI_DATATYPE_NULL, {}, 0, 0, 0, kIntUnit, 0};
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    append_run(&type.runs, displacements[i] * kInt, blocks[i] * kInt);
  }
  MPI_Type_indexed(static_cast<int>(blocks.size()), blocks.data(), displacements.data(), MPI_INT,
                   &type.type);
  return finish(type, true);
}

TypeCase indexed_block_ints(const std::string& name, int block,
                            const std::vector<int>& displacements) {
  TypeCase type{name, MPI_DATATYPE_NULL, {}, 0, 0, 0, kIntUnit, 0};
  for (int displacement : displacements) {
    append_run(&type.runs, displacement * kInt, block * kInt);
  }
  MPI_Type_create_indexed_block(static_cast<int>(displacements.size()), block, displacements.data(),
                                MPI_INT, &type.type);
  return finish(type, true);
}

// A face of an array of ints; the extent is the whole array's.
TypeCase subarray_ints(const std::string& name, const std::vector<int>& sizes,
                       const std::vector<int>& subsizes, const std::vector<int>& starts,
                       int order) {
  TypeCase type{name, MPI_DATATYPE_NULL, {}, 0, 0, 0, kIntUnit, 0};
  const int dims = static_cast<int>(sizes.size());
  // Dimension d in C order: the last one varies fastest.
  auto c_dim = [&](int d) { return order == MPI_ORDER_C ? d : dims - 1 - d; };
  std::vector<std::int64_t> strides(dims);
  std::int64_t stride = kInt;
  for (int d = dims - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= sizes[c_dim(d)];
  }
  std::vector<int> index(dims, 0);
  const int fastest = c_dim(dims - 1);
  for (;;) {
    std::int64_t offset = 0;
    for (int d = 0; d < dims; ++d) offset += (starts[c_dim(d)] + index[d]) * strides[d];
    append_run(&type.runs, offset, subsizes[fastest] * kInt);
    int d = dims - 2;
    while (d >= 0 && ++index[d] == subsizes[c_dim(d)]) index[d--] = 0;
    if (d < 0) break;
  }
  MPI_Type_create_subarray(dims, sizes.data(), subsizes.data(), starts.data(), order, MPI_INT,
                           &type.type);
  TypeCase done = finish(type, false);
  done.lb = 0;
  done.extent = stride;
  return done;
}

// A struct of ints with holes between the members and after the last one.
TypeCase struct_ints_with_gaps() {
  TypeCase type{
      "struct_ints_gaps", MPI_DATATYPE_NULL, {{0, 4}, {8, 12}, {28, 4}}, 0, 0, 0, kIntUnit, 0};
  const int blocks[] = {1, 3, 1};
  const MPI_Aint displacements[] = {0, 8, 28};
  const MPI_Datatype types[] = {MPI_INT, MPI_INT, MPI_INT};
  MPI_Type_create_struct(3, blocks, displacements, types, &type.type);
  resize(&type, 0, 40);
  return finish(type, false);
}

// (char, double, int, short) at `displacements`, resized to `extent`.
TypeCase struct_mixed(const std::string& name, const MPI_Aint (&displacements)[4],
                      std::int64_t extent) {
  TypeCase type{name, MPI_DATATYPE_NULL, {}, 0, 0, 0, kMixedUnit, 0};
  const std::int64_t lengths[] = {1, 8, 4, 2};
  for (int i = 0; i < 4; ++i) append_run(&type.runs, displacements[i], lengths[i]);
  const int blocks[] = {1, 1, 1, 1};
  const MPI_Datatype types[] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT};
  MPI_Type_create_struct(4, blocks, displacements, types, &type.type);
  resize(&type, 0, extent);
  return finish(type, false);
}

// (int, double) at `double_offset`, resized to `extent`.
TypeCase struct_int_double(const std::string& name, std::int64_t double_offset,
                           std::int64_t extent) {
  TypeCase type{name, MPI_DATATYPE_NULL, {}, 0, 0, 0, kIntDoubleUnit, 0};
  append_run(&type.runs, 0, 4);
  append_run(&type.runs, double_offset, 8);
  const int blocks[] = {1, 1};
  const MPI_Aint displacements[] = {0, double_offset};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, blocks, displacements, types, &type.type);
  resize(&type, 0, extent);
  return finish(type, false);
}

// A vector of a struct with gaps: blocks of two structs, one struct skipped between blocks.
TypeCase vector_of_struct(const TypeCase& element) {
  TypeCase type{"vector_of_struct", MPI_DATATYPE_NULL, {}, 0, 0, 0, element.unit, 0};
  const int count = 3, block = 2, stride = 3;
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < block; ++j) {
      for (const ByteRun& run : element.runs) {
        append_run(&type.runs, (i * stride + j) * element.extent + run.offset, run.length);
      }
    }
  }
  MPI_Type_vector(count, block, stride, element.type, &type.type);
  TypeCase done = finish(type, false);
  done.lb = 0;
  done.extent = ((count - 1) * stride + block) * element.extent;
  return done;
}

// One column of a rows x columns matrix of ints, resized so that consecutive elements are
// consecutive columns (the transpose idiom): elements interleave without overlapping.
TypeCase column_resized(int rows, int columns) {
  TypeCase type{"column_resized", MPI_DATATYPE_NULL, {}, 0, 0, 0, kIntUnit, columns};
  for (int r = 0; r < rows; ++r) append_run(&type.runs, r * columns * kInt, kInt);
  MPI_Type_vector(rows, 1, columns, MPI_INT, &type.type);
  resize(&type, 0, kInt);
  return finish(type, false);
}

// Data at a negative displacement, so the address given to MPI is not the lowest byte touched.
TypeCase negative_displacement() {
  TypeCase type{"negative_lb", MPI_DATATYPE_NULL, {{-16, 8}, {8, 4}}, 0, 0, 0, kIntUnit, 0};
  const int blocks[] = {2, 1};
  const MPI_Aint displacements[] = {-16, 8};
  MPI_Type_create_hindexed(2, blocks, displacements, MPI_INT, &type.type);
  resize(&type, -16, 32);
  return finish(type, false);
}

}  // namespace

TypeCatalog::TypeCatalog() {
  types_.push_back(int_type());
  types_.push_back(contiguous_ints("contiguous", 37));
  types_.push_back(vector_ints("vector_block4", 64, 1, 2));
  types_.push_back(vector_ints("vector_block64", 16, 16, 24));
  types_.push_back(vector_ints("vector_block4k", 4, 1024, 1536));
  types_.push_back(hvector_ints("hvector_unaligned", 8, 3, 13));
  types_.push_back(subarray_ints("subarray2d_row", {64, 48}, {1, 48}, {63, 0}, MPI_ORDER_C));
  types_.push_back(subarray_ints("subarray2d_column", {64, 48}, {64, 1}, {0, 0}, MPI_ORDER_C));
  types_.push_back(
      subarray_ints("subarray2d_interior_f", {40, 30}, {38, 28}, {1, 1}, MPI_ORDER_FORTRAN));
  types_.push_back(
      subarray_ints("subarray3d_face_x", {8, 12, 16}, {8, 12, 1}, {0, 0, 15}, MPI_ORDER_C));
  types_.push_back(
      subarray_ints("subarray3d_face_y", {8, 12, 16}, {8, 1, 16}, {0, 5, 0}, MPI_ORDER_C));
  types_.push_back(
      subarray_ints("subarray3d_face_z", {8, 12, 16}, {1, 12, 16}, {7, 0, 0}, MPI_ORDER_C));
  types_.push_back(indexed_ints("indexed", {3, 1, 5, 2}, {20, 0, 9, 30}));
  types_.push_back(indexed_block_ints("indexed_block", 2, {6, 1, 10}));
  types_.push_back(struct_ints_with_gaps());
  types_.push_back(column_resized(3, 256));
  types_.push_back(negative_displacement());
  types_.push_back(struct_mixed("struct_mixed", {0, 8, 16, 20}, 24));
  types_.push_back(struct_mixed("struct_mixed_packed", {0, 1, 9, 13}, 15));
  types_.push_back(struct_int_double("struct_int_double", 8, 16));
  types_.push_back(struct_int_double("struct_int_double_packed", 4, 12));
  TypeCase vector_of_gapped_struct = vector_of_struct(named("struct_int_double"));
  types_.push_back(std::move(vector_of_gapped_struct));
}

TypeCatalog::~TypeCatalog() {
  for (TypeCase& type : types_) {
    if (type.name != "int") MPI_Type_free(&type.type);
  }
}

const TypeCase& TypeCatalog::named(const std::string& name) const {
  for (const TypeCase& type : types_) {
    if (type.name == name) return type;
  }
  throw std::invalid_argument("no type named " + name + " in the catalog");
}

const TypeCase& TypeCatalog::contiguous_of(const SignatureUnit& unit) const {
  if (unit.name == kIntUnit.name) return named("int");
  if (unit.name == kIntDoubleUnit.name) return named("struct_int_double_packed");
  return named("struct_mixed_packed");
}

}  // namespace gddt_test::p2p
