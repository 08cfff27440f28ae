// gddt-bench-host: what gddt costs host-only traffic. Two ranks exchange 8-byte messages on
// host memory with plain MPI_BYTE, two ways in turns within one run: through the program's own
// MPI_* calls (gddt's, when it is linked or preloaded) and through PMPI_* (the library itself):
//   - blocking ping-pong: MPI_Send/MPI_Recv, median one-way latency;
//   - windowed bandwidth: a window of MPI_Isend/MPI_Irecv and MPI_Waitall, then a 4-byte
//     acknowledgement, median messages per second.
// It links MPI only (gddt-bench-host-linked is the same program linked with gddt), so one
// binary runs without gddt and with it preloaded; bench/host_overhead.sh runs the three
// launches in turns and prints their ratios, and its --callgrind mode counts the instructions
// each call costs (docs/performance.md, "Host-only overhead").
//   mpiexec -n 2 gddt-bench-host [--rounds N] [--round-trips N] [--window N] [--windows N]
#include <dlfcn.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "median.hpp"

namespace {

constexpr int kDataTag = 7;
constexpr int kAckTag = 8;

struct Calls {
  int (*send)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
  int (*recv)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status*);
  int (*isend)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  int (*irecv)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  int (*waitall)(int, MPI_Request*, MPI_Status*);
};
const Calls kUserCalls = {MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv, MPI_Waitall};
const Calls kLibraryCalls = {PMPI_Send, PMPI_Recv, PMPI_Isend, PMPI_Irecv, PMPI_Waitall};

struct Settings {
  int rounds = 21;         // alternating rounds of each path
  int round_trips = 5000;  // per ping-pong round
  int window = 64;         // messages per window
  int windows = 300;       // windows per bandwidth round
};

void check(int error, const char* call) {
  if (error == MPI_SUCCESS) return;
  std::fprintf(stderr, "gddt-bench-host: %s failed (error %d)\n", call, error);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// The two loops are inline bodies of out-of-line functions of their own, one pair for warm-up
// rounds and one for measured rounds, so that callgrind can be told to count inside measured
// rounds alone (host_overhead.py --callgrind: --toggle-collect=*measured_pingpong_round* ...),
// leaving out the first calls, which settle gddt's state.
__attribute__((always_inline)) inline double pingpong_round(const Calls& calls, int rank, int round_trips) {
  std::uint64_t word = 0;
  check(PMPI_Barrier(MPI_COMM_WORLD), "PMPI_Barrier");
  const double start = PMPI_Wtime();
  for (int i = 0; i < round_trips; ++i) {
    if (rank == 0) {
      check(calls.send(&word, 8, MPI_BYTE, 1, kDataTag, MPI_COMM_WORLD), "send");
      check(calls.recv(&word, 8, MPI_BYTE, 1, kDataTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "recv");
    } else {
      check(calls.recv(&word, 8, MPI_BYTE, 0, kDataTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "recv");
      check(calls.send(&word, 8, MPI_BYTE, 0, kDataTag, MPI_COMM_WORLD), "send");
    }
  }
  return (PMPI_Wtime() - start) / (2.0 * round_trips) * 1e6;  // one-way us
}

__attribute__((always_inline)) inline double window_round(const Calls& calls, int rank, int window, int windows) {
  std::vector<std::uint64_t> words(static_cast<std::size_t>(window));
  std::vector<MPI_Request> requests(static_cast<std::size_t>(window), MPI_REQUEST_NULL);
  int ack = 0;
  check(PMPI_Barrier(MPI_COMM_WORLD), "PMPI_Barrier");
  const double start = PMPI_Wtime();
  for (int w = 0; w < windows; ++w) {
    for (int i = 0; i < window; ++i) {
      std::uint64_t* word = &words[static_cast<std::size_t>(i)];
      check(rank == 0 ? calls.isend(word, 8, MPI_BYTE, 1, kDataTag, MPI_COMM_WORLD, &requests[i])
                      : calls.irecv(word, 8, MPI_BYTE, 0, kDataTag, MPI_COMM_WORLD, &requests[i]),
            rank == 0 ? "isend" : "irecv");
    }
    check(calls.waitall(window, requests.data(), MPI_STATUSES_IGNORE), "waitall");
    if (rank == 0) {
      check(PMPI_Recv(&ack, 1, MPI_INT, 1, kAckTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "PMPI_Recv");
    } else {
      check(PMPI_Send(&ack, 1, MPI_INT, 0, kAckTag, MPI_COMM_WORLD), "PMPI_Send");
    }
  }
  return static_cast<double>(window) * windows / (PMPI_Wtime() - start) / 1e6;  // million messages/s
}

// Distinct functions even to an optimiser that folds identical code (GCC's -fipa-icf would
// make the two one symbol, and callgrind could not tell them apart).
#if defined(__GNUC__) && !defined(__clang__)
#define GDDT_BENCH_OWN_FUNCTION __attribute__((noipa))
#else
#define GDDT_BENCH_OWN_FUNCTION __attribute__((noinline))
#endif

GDDT_BENCH_OWN_FUNCTION double warmup_pingpong_round(const Calls& calls, int rank, int round_trips) {
  return pingpong_round(calls, rank, round_trips);
}
GDDT_BENCH_OWN_FUNCTION double measured_pingpong_round(const Calls& calls, int rank, int round_trips) {
  return pingpong_round(calls, rank, round_trips);
}
GDDT_BENCH_OWN_FUNCTION double warmup_window_round(const Calls& calls, int rank, int window, int windows) {
  return window_round(calls, rank, window, windows);
}
GDDT_BENCH_OWN_FUNCTION double measured_window_round(const Calls& calls, int rank, int window, int windows) {
  return window_round(calls, rank, window, windows);
}

// Runs both paths `rounds` times, alternating which goes first so that neither always follows
// the barrier; each path's first round is a warm-up.
template <typename WarmUp, typename Round>
void alternate(int rounds, WarmUp warm_up, Round round, double* user, double* library) {
  warm_up(kUserCalls);
  warm_up(kLibraryCalls);
  std::vector<double> user_values, library_values;
  for (int i = 0; i < rounds; ++i) {
    if (i % 2 == 0) {
      user_values.push_back(round(kUserCalls));
      library_values.push_back(round(kLibraryCalls));
    } else {
      library_values.push_back(round(kLibraryCalls));
      user_values.push_back(round(kUserCalls));
    }
  }
  *user = median(user_values);
  *library = median(library_values);
}

std::string gddt_state() {
  using VersionFunction = const char* (*)();
  const auto version = reinterpret_cast<VersionFunction>(dlsym(RTLD_DEFAULT, "gddt_version_string"));
  if (version == nullptr) return "none";
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "gddt") != nullptr ? "preloaded" : "linked";
}

bool parse(int argc, char** argv, Settings* settings) {
  for (int i = 1; i < argc; ++i) {
    int* target = nullptr;
    if (std::strcmp(argv[i], "--rounds") == 0) target = &settings->rounds;
    if (std::strcmp(argv[i], "--round-trips") == 0) target = &settings->round_trips;
    if (std::strcmp(argv[i], "--window") == 0) target = &settings->window;
    if (std::strcmp(argv[i], "--windows") == 0) target = &settings->windows;
    if (target == nullptr || i + 1 == argc) return false;
    *target = std::atoi(argv[++i]);
    if (*target <= 0) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  check(MPI_Init(&argc, &argv), "MPI_Init");
  int rank = 0, size = 0;
  check(PMPI_Comm_rank(MPI_COMM_WORLD, &rank), "PMPI_Comm_rank");
  check(PMPI_Comm_size(MPI_COMM_WORLD, &size), "PMPI_Comm_size");
  Settings settings;
  if (size != 2 || !parse(argc, argv, &settings)) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "usage: mpiexec -n 2 gddt-bench-host [--rounds N] [--round-trips N] [--window N] [--windows N]\n");
    }
    MPI_Finalize();
    return 2;
  }
  double pingpong_user = 0, pingpong_library = 0, window_user = 0, window_library = 0;
  alternate(
      settings.rounds, [&](const Calls& calls) { return warmup_pingpong_round(calls, rank, settings.round_trips); },
      [&](const Calls& calls) { return measured_pingpong_round(calls, rank, settings.round_trips); }, &pingpong_user,
      &pingpong_library);
  alternate(
      settings.rounds,
      [&](const Calls& calls) { return warmup_window_round(calls, rank, settings.window, settings.windows); },
      [&](const Calls& calls) { return measured_window_round(calls, rank, settings.window, settings.windows); },
      &window_user, &window_library);
  if (rank == 0) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    PMPI_Get_library_version(version, &length);
    if (char* newline = std::strchr(version, '\n')) *newline = '\0';
    const std::string gddt = gddt_state();
    std::printf("gddt-bench-host: 8-byte host messages of MPI_BYTE, the program's MPI_* calls against PMPI_*\n");
    std::printf("  MPI:  %s\n  gddt: %s\n", version, gddt.c_str());
    std::printf("  %d alternating rounds each; ping-pong %d round trips a round; %d windows of %d messages a round\n",
                settings.rounds, settings.round_trips, settings.windows, settings.window);
    std::printf("  %-44s %10s %10s %10s\n", "test (medians)", "MPI_*", "PMPI_*", "MPI/PMPI");
    std::printf("  %-44s %10.3f %10.3f %+9.1f%%\n", "blocking ping-pong, one-way latency, us", pingpong_user,
                pingpong_library, (pingpong_user / pingpong_library - 1) * 100);
    std::printf("  %-44s %10.3f %10.3f %+9.1f%%\n", "Isend/Irecv window, million messages/s", window_user,
                window_library, (window_user / window_library - 1) * 100);
    // One line for host_overhead.sh to collect.
    std::printf(
        "RESULT gddt=%s pingpong_user_us=%.4f pingpong_library_us=%.4f window_user_mmps=%.4f "
        "window_library_mmps=%.4f\n",
        gddt.c_str(), pingpong_user, pingpong_library, window_user, window_library);
  }
  check(MPI_Finalize(), "MPI_Finalize");
  return 0;
}
