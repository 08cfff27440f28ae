// gddt-bench-first-use: what a datatype's first use on device memory costs, one process, through
// MPI_Pack (gddt's engine, no network): a new type's first call (its layout decoded, a block
// list's piece table built and uploaded), its second, two elements, MPI_Pack_size of a new type
// (the decode alone), and a known type's call after 300 us idle (the resident kernel started
// again). A 3-D face (strided, no table) and an indexed type of pairs (a block list), medians
// of 40 rounds; with GDDT_STATS=1 the counters type.decode.ns and pack.piece-table.ns split it.
//   mpiexec -n 1 gddt-bench-first-use [--memory device|managed|pinned|host]
// (host memory goes through gddt's engine with GDDT_PACK_HOST=gddt only)
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "median.hpp"
#include "memory_buffer.hpp"

namespace {

using gddt_test::Buffer;
using gddt_test::MemoryKind;

MPI_Datatype make_type(bool indexed) {
  MPI_Datatype type;
  if (!indexed) {
    const int sizes[] = {8, 12, 16}, subsizes[] = {8, 12, 1}, starts[] = {0, 0, 15};
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &type);
  } else {
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    const int lengths[] = {3, 1, 2}, displacements[] = {0, 5, 9};
    MPI_Type_indexed(3, lengths, displacements, pair, &type);
    MPI_Type_free(&pair);
  }
  MPI_Type_commit(&type);
  return type;
}

template <typename F>
double timed_us(F f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MemoryKind kind = MemoryKind::kDevice;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--memory") == 0) gddt_test::parse_memory_kind(argv[i + 1], &kind);
  const std::string why = gddt_test::prepare_memory_kind(kind);
  if (!why.empty()) {
    std::printf("gddt-bench-first-use: skipped: %s\n", why.c_str());
    MPI_Finalize();
    return 0;
  }
  constexpr int kBytes = 1 << 20, kRounds = 40;
  Buffer typed(kind, kBytes), packed(kind, kBytes);
  typed.fill(1);
  std::printf("gddt-bench-first-use: %d rounds, memory %s, median us\n", kRounds, gddt_test::memory_kind_name(kind));
  std::printf("  %-10s %14s %12s %8s %8s %18s\n", "type", "known, idle", "new: first", "second", "count 2",
              "Pack_size of new");
  for (bool indexed : {false, true}) {
    std::vector<double> known_after_idle, first, second, two, size_only;
    int position = 0;
    const auto pack = [&](MPI_Datatype type, int count) {
      position = 0;
      MPI_Pack(typed.data(), count, type, packed.data(), kBytes, &position, MPI_COMM_WORLD);
    };
    MPI_Datatype known = make_type(indexed);
    pack(known, 1);
    for (int round = 0; round < kRounds; ++round) {
      usleep(300);
      known_after_idle.push_back(timed_us([&] { pack(known, 1); }));
      MPI_Datatype type = make_type(indexed);
      usleep(300);
      first.push_back(timed_us([&] { pack(type, 1); }));
      second.push_back(timed_us([&] { pack(type, 1); }));
      two.push_back(timed_us([&] { pack(type, 2); }));
      MPI_Type_free(&type);
      type = make_type(indexed);
      int bytes = 0;
      size_only.push_back(timed_us([&] { MPI_Pack_size(1, type, MPI_COMM_WORLD, &bytes); }));
      MPI_Type_free(&type);
    }
    MPI_Type_free(&known);
    std::printf("  %-10s %14.1f %12.1f %8.1f %8.1f %18.1f\n", indexed ? "indexed" : "3-D face", median(known_after_idle),
                median(first), median(second), median(two), median(size_only));
  }
  MPI_Finalize();
  return 0;
}
