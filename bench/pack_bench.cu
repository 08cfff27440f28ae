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
// The cases are pack_bench_cases.hpp's, the GPU work besides gddt and the checks
// pack_bench_device.cuh's, the timing pack_bench_timing.cuh's.
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "gddt/gddt_mpi.h"
#include "pack_bench_cases.hpp"
#include "pack_bench_device.cuh"
#include "pack_bench_timing.cuh"

namespace gddt_bench::pack {
namespace {

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

__global__ void empty_kernel() {}

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

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

}  // namespace gddt_bench::pack

int main(int argc, char** argv) {
  using namespace gddt_bench::pack;
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
