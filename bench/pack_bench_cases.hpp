// gddt-bench-pack's command line and its cases: the datatypes it times, with what the naive
// kernel and cudaMemcpy2DAsync need to move the same bytes.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gddt_bench::pack {

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

bool parse_options(int argc, char** argv, Options* o);

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

std::vector<Case> build_cases(const Options& o);

}  // namespace gddt_bench::pack
