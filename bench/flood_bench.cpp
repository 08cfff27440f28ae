// gddt-bench-flood: issue 44's fifth target. Rank 0 floods rank 1 with blocking sends of small
// nested datatypes, the way MPICH's pingping test does: batches, each on a communicator of its
// own with its datatypes made anew, counts 1 to 512, a barrier between batches. Each count's time
// per message is set against a contiguous message of the same packed bytes through the library
// alone: MPI_BYTE from the same memory kind where the library takes it (device memory through a
// CUDA-aware library), else copied to pinned memory first and sent from there (what a user without
// gddt does). Prints a table, the ratios and a PASS/MISS line (target <= 1.5x); with GDDT_STATS=1
// gddt's stage counters say where the time goes. Below the table, the fixed costs apart: a batch's
// MPI_Comm_dup through gddt against the library's own; the first message of each new datatype
// (count 1, its layout decoded) against the messages after it; and, on types made anew after the
// flood, what makes a first message cost more, one cause at a time: a new datatype on a buffer
// already used, a known datatype on a new buffer, a known datatype on a known buffer after both
// ranks idled 300 us (gddt's resident kernel idles out after 50).
//   mpiexec -n 2 gddt-bench-flood [--memory device|host|pinned|managed] [--batches N] [--messages N]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "median.hpp"
#include "memory_buffer.hpp"
#include "p2p/mpi_env.hpp"

namespace {

using gddt_test::Buffer;
using gddt_test::MemoryKind;

struct Options {
  MemoryKind memory = MemoryKind::kDevice;
  int batches = 5;
  int messages = 20;  // per count and batch
};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The batch's nested types, made anew: a vector of a gapped (int, double) struct, a 3-D face of
// floats, an indexed type of a 2-int contiguous.
std::vector<MPI_Datatype> make_types() {
  MPI_Datatype pair, gapped, vector_of_pairs, face, two_ints, indexed;
  const int lengths[] = {1, 1};
  const MPI_Aint displacements[] = {0, 8};
  const MPI_Datatype members[] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, lengths, displacements, members, &pair);
  MPI_Type_create_resized(pair, 0, 24, &gapped);
  MPI_Type_vector(3, 2, 3, gapped, &vector_of_pairs);
  const int sizes[] = {8, 12, 16}, subsizes[] = {8, 12, 1}, starts[] = {0, 0, 15};
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &face);
  MPI_Type_contiguous(2, MPI_INT, &two_ints);
  const int block_lengths[] = {3, 1, 2}, block_displacements[] = {0, 5, 9};
  MPI_Type_indexed(3, block_lengths, block_displacements, two_ints, &indexed);
  std::vector<MPI_Datatype> types = {vector_of_pairs, face, indexed};
  for (MPI_Datatype& type : types) MPI_Type_commit(&type);
  for (MPI_Datatype* inner : {&pair, &gapped, &two_ints}) MPI_Type_free(inner);
  return types;
}

bool cuda_aware() {
  std::string how;
  int aware = gddt::bench::mpi_reports_cuda_aware(&how) ? 1 : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &aware, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return aware == 1;
}

// Per count, the seconds per message of each way, one sample per batch.
struct Samples {
  std::vector<double> nested, contiguous;
};

// Per batch: the first message of a new datatype and each message after it (count 1), and the
// batch's communicator made through gddt and by the library alone.
struct FixedCosts {
  std::vector<std::vector<double>> first, next;  // [type][batch]
  std::vector<double> dup, library_dup;
};

// The receiver's seconds for one message of `type` on `buffer` (count 1), both ranks starting
// together.
double one_message(const Buffer& buffer, MPI_Datatype type, int rank, MPI_Comm comm) {
  MPI_Barrier(comm);
  const double start = now();
  if (rank == 0)
    MPI_Send(buffer.data(), 1, type, 1, 7, comm);
  else
    MPI_Recv(buffer.data(), 1, type, 0, 7, comm, MPI_STATUS_IGNORE);
  return now() - start;
}

// What a first message pays for, one cause at a time (seconds, per type and batch).
struct FirstCauses {
  std::vector<std::vector<double>> new_type, known, new_buffer, after_idle;  // [type][batch]
};

// On types made anew and a buffer that already carried a message of the library's own: a new
// type's first message, a known one's, a known type's on a new buffer, and after both ranks idled.
void measure_first_causes(const Options& options, int rank, MPI_Comm comm, FirstCauses* causes) {
  std::vector<MPI_Datatype> types = make_types();
  causes->new_type.resize(types.size());
  causes->known.resize(types.size());
  causes->new_buffer.resize(types.size());
  causes->after_idle.resize(types.size());
  for (std::size_t t = 0; t < types.size(); ++t) {
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(types[t], &lb, &extent);
    Buffer used(options.memory, static_cast<std::size_t>(extent)), fresh(options.memory, static_cast<std::size_t>(extent));
    one_message(used, MPI_BYTE, rank, comm);  // the buffer's memory kind known to gddt and the library
    causes->new_type[t].push_back(one_message(used, types[t], rank, comm));
    double known = 0;
    for (int m = 0; m < 5; ++m) known += one_message(used, types[t], rank, comm) / 5;
    causes->known[t].push_back(known);
    causes->new_buffer[t].push_back(one_message(fresh, types[t], rank, comm));
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    causes->after_idle[t].push_back(one_message(used, types[t], rank, comm));
  }
  for (MPI_Datatype& type : types) MPI_Type_free(&type);
}

// Seconds `make` takes, both ranks starting together.
template <typename Make>
double timed(Make&& make) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = now();
  make();
  return now() - start;
}

int run(const Options& options) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "gddt-bench-flood needs 2 ranks\n");
    return 2;
  }
  const std::string why = gddt_test::prepare_memory_kind(options.memory, rank);
  if (!why.empty()) {
    if (rank == 0) std::printf("gddt-bench-flood: skipped: %s\n", why.c_str());
    return 0;
  }
  const bool device = options.memory == MemoryKind::kDevice || options.memory == MemoryKind::kManaged;
  const bool device_bytes_to_library = device && cuda_aware();
  const std::vector<int> counts = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  std::vector<std::vector<Samples>> samples;  // [type][count]
  std::vector<std::size_t> packed_bytes;      // per type and count
  std::vector<std::string> names = {"vector of (int,double)", "3-D face of floats", "indexed of 2 ints"};
  FixedCosts fixed;
  FirstCauses causes;
  fixed.first.resize(names.size());
  fixed.next.resize(names.size());
  for (int batch = 0; batch < options.batches; ++batch) {
    MPI_Comm comm, library_comm;
    fixed.dup.push_back(timed([&] { MPI_Comm_dup(MPI_COMM_WORLD, &comm); }));
    fixed.library_dup.push_back(timed([&] { PMPI_Comm_dup(MPI_COMM_WORLD, &library_comm); }));
    PMPI_Comm_free(&library_comm);
    std::vector<MPI_Datatype> types = make_types();
    samples.resize(types.size(), std::vector<Samples>(counts.size()));
    packed_bytes.resize(types.size() * counts.size());
    for (std::size_t t = 0; t < types.size(); ++t) {
      MPI_Aint lb = 0, extent = 0;
      MPI_Type_get_extent(types[t], &lb, &extent);
      int type_size = 0;
      MPI_Type_size(types[t], &type_size);
      for (std::size_t c = 0; c < counts.size(); ++c) {
        const int count = counts[c];
        const std::size_t bytes = static_cast<std::size_t>(type_size) * count;
        packed_bytes[t * counts.size() + c] = bytes;
        Buffer typed(options.memory, static_cast<std::size_t>(extent) * count);
        Buffer contiguous(device_bytes_to_library || !device ? options.memory : MemoryKind::kPinned, bytes);
        Buffer staged(options.memory, bytes);  // where the contiguous bytes start out without a CUDA-aware library
        MPI_Barrier(comm);
        double start = now(), first_done = start;
        for (int m = 0; m < options.messages; ++m) {
          if (rank == 0)
            MPI_Send(typed.data(), count, types[t], 1, 5, comm);
          else
            MPI_Recv(typed.data(), count, types[t], 0, 5, comm, MPI_STATUS_IGNORE);
          if (m == 0) first_done = now();
        }
        samples[t][c].nested.push_back((now() - start) / options.messages);
        if (c == 0 && options.messages > 1) {
          fixed.first[t].push_back(first_done - start);
          fixed.next[t].push_back((now() - first_done) / (options.messages - 1));
        }
        MPI_Barrier(comm);
        start = now();
        for (int m = 0; m < options.messages; ++m) {
          if (!device_bytes_to_library && device && rank == 0) staged.download(contiguous.data(), bytes);
          if (rank == 0)
            PMPI_Send(contiguous.data(), static_cast<int>(bytes), MPI_BYTE, 1, 6, comm);
          else
            PMPI_Recv(contiguous.data(), static_cast<int>(bytes), MPI_BYTE, 0, 6, comm, MPI_STATUS_IGNORE);
          if (!device_bytes_to_library && device && rank == 1) staged.upload(contiguous.data(), bytes);
        }
        samples[t][c].contiguous.push_back((now() - start) / options.messages);
      }
    }
    for (MPI_Datatype& type : types) MPI_Type_free(&type);
    measure_first_causes(options, rank, comm, &causes);
    MPI_Comm_free(&comm);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank != 1) return 0;  // the receiver's times: a message is done when it has landed
  std::printf("gddt-bench-flood: %d batches x %d messages per count, memory %s, contiguous reference %s\n",
              options.batches, options.messages, gddt_test::memory_kind_name(options.memory),
              device_bytes_to_library ? "device bytes through the CUDA-aware library"
              : device                ? "copied to pinned memory and sent from there"
                                      : "host bytes");
  std::printf("  %-24s %6s %8s %12s %12s %7s\n", "type", "count", "bytes", "gddt us/msg", "contig us/msg", "ratio");
  double worst = 0;
  std::string worst_at;
  for (std::size_t t = 0; t < samples.size(); ++t) {
    for (std::size_t c = 0; c < counts.size(); ++c) {
      const double nested = median(samples[t][c].nested) * 1e6;
      const double contiguous = median(samples[t][c].contiguous) * 1e6;
      const double ratio = nested / contiguous;
      std::printf("  %-24s %6d %8zu %12.2f %12.2f %6.2fx\n", names[t].c_str(), counts[c],
                  packed_bytes[t * counts.size() + c], nested, contiguous, ratio);
      if (ratio > worst) {
        worst = ratio;
        worst_at = names[t] + " x" + std::to_string(counts[c]);
      }
    }
  }
  std::printf("  fixed costs (medians over batches): MPI_Comm_dup %.1f us through gddt, %.1f us the library's own\n",
              median(fixed.dup) * 1e6, median(fixed.library_dup) * 1e6);
  for (std::size_t t = 0; t < fixed.first.size() && !fixed.first[t].empty(); ++t)
    std::printf("    %-24s first message of the new datatype %.2f us, each after it %.2f us\n", names[t].c_str(),
                median(fixed.first[t]) * 1e6, median(fixed.next[t]) * 1e6);
  std::printf("  a first message's causes apart (count 1, medians over batches, us): new datatype on a used buffer /\n"
              "  known datatype / known datatype on a new buffer / known datatype after 300 us idle\n");
  for (std::size_t t = 0; t < causes.new_type.size(); ++t)
    std::printf("    %-24s %8.2f %8.2f %8.2f %8.2f\n", names[t].c_str(), median(causes.new_type[t]) * 1e6,
                median(causes.known[t]) * 1e6, median(causes.new_buffer[t]) * 1e6, median(causes.after_idle[t]) * 1e6);
  std::printf("  [%s] 5. flood: worst %.2fx a contiguous message of the same bytes, at %s (target <= 1.5x)\n",
              worst <= 1.5 ? "PASS" : "MISS", worst, worst_at.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--memory") {
      gddt_test::parse_memory_kind(argv[i + 1], &options.memory);
    } else if (flag == "--batches") {
      options.batches = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--messages") {
      options.messages = std::max(1, std::atoi(argv[i + 1]));
    }
  }
  const int rc = run(options);
  MPI_Finalize();
  return rc;
}
