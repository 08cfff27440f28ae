#include "harness.hpp"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>

#include "mpi_quirks.hpp"

namespace gddt_test::p2p {
namespace {

// At most this many failure messages per rank and case; the count goes on.
constexpr int kPrintedFailuresPerCase = 10;
// Notes come from rank 0 only, a few per case.
constexpr int kPrintedNotesPerCase = 4;

// The case being run. Checks may come from several threads (the MPI_THREAD_MULTIPLE test).
struct CurrentCase {
  std::mutex mutex;
  std::string name;
  int rank = 0;
  std::uint64_t run_seed = 0;
  std::atomic<int> failures{0};
  int printed = 0;
  int notes = 0;
};

CurrentCase& current_case() {
  static CurrentCase state;
  return state;
}

std::uint64_t hash_name(const std::string& name) {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

[[noreturn]] void usage_error(int rank, const std::string& program, const std::string& problem) {
  if (rank == 0) {
    std::fprintf(stderr,
                 "%s: %s\nusage: %s [--memory host|device|managed|pinned|mixed] [--seed N]"
                 " [--messages N] [--only TEXT] [--require-gddt]\n",
                 program.c_str(), problem.c_str(), program.c_str());
  }
  MPI_Finalize();
  std::exit(2);
}

bool parse_memory(const std::string& text, std::array<MemoryKind, 4>* by_rank) {
  if (text == "mixed") {
    // Neighbouring ranks differ, and with two ranks device memory meets host memory both ways.
    *by_rank = {MemoryKind::kDevice, MemoryKind::kHost, MemoryKind::kPinned, MemoryKind::kManaged};
    return true;
  }
  MemoryKind kind = MemoryKind::kHost;
  if (!parse_memory_kind(text, &kind)) return false;
  by_rank->fill(kind);
  return true;
}

const char* loaded_gddt_version() {
  using VersionFunction = const char* (*)();
  auto version = reinterpret_cast<VersionFunction>(dlsym(RTLD_DEFAULT, "gddt_version_string"));
  return version != nullptr ? version() : nullptr;
}

std::string describe_quirks(const MpiQuirks& quirks) {
  std::string text;
  if (quirks.proc_null_irecv_status) text += " MPI_Irecv(MPI_PROC_NULL) status;";
  if (quirks.proc_null_persistent_status) text += " MPI_Recv_init(MPI_PROC_NULL) status;";
  if (quirks.request_errors_on_world) text += " request errors raised on MPI_COMM_WORLD;";
  if (quirks.packed_into_mixed_struct) text += " large MPI_PACKED data into mixed structs;";
  if (quirks.truncation_overruns_contiguous) text += " truncated contiguous receives written past their end;";
  if (quirks.self_truncation_unreported) text += " truncated messages to self completed as successes;";
  return text;
}

bool all_ranks(bool local) {
  int value = local ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return value != 0;
}

}  // namespace

std::string provider_of(const char* symbol_name) {
  void* symbol = dlsym(RTLD_DEFAULT, symbol_name);
  Dl_info info{};
  if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return "?";
  const char* slash = std::strrchr(info.dli_fname, '/');
  return slash != nullptr ? slash + 1 : info.dli_fname;
}

long long counter_value(const char* name) {
  using CounterFunction = int (*)(const char*, long long*);
  static const auto counter = reinterpret_cast<CounterFunction>(dlsym(RTLD_DEFAULT, "gddt_counter"));
  long long value = 0;
  return counter != nullptr && counter(name, &value) == 0 ? value : -1;
}

void expect_library_class(const std::string& what, const std::function<int(bool library)>& call,
                          bool library_may_take) {
  int library = 0, through_gddt = 0;
  MPI_Error_class(call(true), &library);
  MPI_Error_class(call(false), &through_gddt);
  expect((library != MPI_SUCCESS || library_may_take) && through_gddt == library,
         what + ": the library says class " + std::to_string(library) + ", through gddt " +
             std::to_string(through_gddt));
}

std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a + 0x9e3779b97f4a7c15ull * (b + 1);  // splitmix64 finalizer
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void fail(const std::string& what) {
  CurrentCase& state = current_case();
  state.failures.fetch_add(1);
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.printed++ < kPrintedFailuresPerCase) {
    std::fprintf(stderr, "FAIL rank %d, case %s, seed %llu: %s\n", state.rank, state.name.c_str(),
                 static_cast<unsigned long long>(state.run_seed), what.c_str());
  }
}

void note(const std::string& what) {
  CurrentCase& state = current_case();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.rank == 0 && state.notes++ < kPrintedNotesPerCase) {
    std::fprintf(stderr, "NOTE rank %d, case %s: %s\n", state.rank, state.name.c_str(),
                 what.c_str());
  }
}

void expect(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

void expect_success(int mpi_result, const char* call_text) {
  if (mpi_result == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(mpi_result, message, &length);
  fail(std::string(call_text) + " returned " + std::to_string(mpi_result) + " (" + message + ")");
}

void poll_until(const std::function<bool()>& done, const std::string& what, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      fail(what + ": no completion after " + std::to_string(seconds) + " s; aborting");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
}

Suite::Suite(int* argc, char*** argv, const char* program, int thread_level, int fewest_ranks) : program_(program) {
  MPI_Init_thread(argc, argv, thread_level, &base_.thread_level);
  MPI_Comm_rank(MPI_COMM_WORLD, &base_.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &base_.size);
  base_.next = (base_.rank + 1) % base_.size;
  base_.prev = (base_.rank + base_.size - 1) % base_.size;

  std::string memory_text = "host";
  std::uint64_t run_seed = 20240611;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = (*argv)[i];
    const bool has_value = i + 1 < *argc;
    if (arg == "--memory" && has_value) {
      memory_text = (*argv)[++i];
    } else if (arg == "--seed" && has_value) {
      run_seed = std::strtoull((*argv)[++i], nullptr, 0);
    } else if (arg == "--messages" && has_value) {
      base_.messages = std::strtol((*argv)[++i], nullptr, 0);
    } else if (arg == "--only" && has_value) {
      only_ = (*argv)[++i];
    } else if (arg == "--require-gddt") {
      require_gddt_ = true;
    } else {
      usage_error(base_.rank, program_, "unknown or incomplete argument '" + arg + "'");
    }
  }
  if (!parse_memory(memory_text, &base_.memory_by_rank)) {
    usage_error(base_.rank, program_, "unknown memory kind '" + memory_text + "'");
  }
  if (base_.size < fewest_ranks)
    usage_error(base_.rank, program_, "needs at least " + std::to_string(fewest_ranks) + " ranks");
  base_.memory = base_.memory_of(base_.rank);
  current_case().rank = base_.rank;
  current_case().run_seed = run_seed;
  base_.seed = run_seed;

  MPI_Comm node;
  int local_rank = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  const std::string unavailable = prepare_memory_kind(base_.memory, local_rank);
  if (!all_ranks(unavailable.empty())) {
    skip(unavailable.empty() ? "another rank's memory kind is unavailable" : unavailable);
  }

  measure_mpi_quirks();
  const char* gddt_version = loaded_gddt_version();
  if (base_.rank == 0) {
    std::printf("%s: %d ranks, memory %s, seed %llu, gddt %s, MPI_Send from %s\n", program_.c_str(),
                base_.size, memory_text.c_str(), static_cast<unsigned long long>(run_seed),
                gddt_version != nullptr ? gddt_version : "not loaded",
                provider_of("MPI_Send").c_str());
    const std::string quirks = describe_quirks(mpi_quirks());
    if (!quirks.empty())
      std::printf("MPI library quirks measured through PMPI:%s\n", quirks.c_str());
    std::fflush(stdout);
  }
  if (require_gddt_) {
    run("gddt_is_loaded", [gddt_version](const Context&) {
      expect(gddt_version != nullptr,
             "--require-gddt, but gddt is not loaded (not linked, dropped by the linker, or not"
             " preloaded)");
    });
  }
}

Suite::~Suite() {
  if (!finalized_) MPI_Finalize();
}

void Suite::run(const char* name, const std::function<void(const Context&)>& body) {
  if (!only_.empty() && std::strstr(name, only_.c_str()) == nullptr) return;
  CurrentCase& state = current_case();
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.name = name;
    state.printed = 0;
    state.notes = 0;
  }
  state.failures.store(0);
  Context context = base_;
  context.seed = mix_seed(base_.seed, hash_name(name));

  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  try {
    body(context);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "FAIL rank %d, case %s, seed %llu: exception: %s\n", base_.rank, name,
                 static_cast<unsigned long long>(state.run_seed), error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  int failed_checks = state.failures.load();
  int failed_ranks = failed_checks > 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &failed_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &failed_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (failed_checks == 0) {
    ++passed_;
  } else {
    ++failed_;
  }
  if (base_.rank == 0) {
    if (failed_checks == 0) {
      std::printf("[PASS] %s (%.2f s)\n", name, seconds);
    } else {
      std::printf("[FAIL] %s: %d failed checks on %d ranks (%.2f s)\n", name, failed_checks,
                  failed_ranks, seconds);
    }
    std::fflush(stdout);
  }
}

void Suite::skip(const std::string& reason) {
  if (base_.rank == 0) {
    std::printf("%s: skipped: %s\n", program_.c_str(), reason.c_str());
    std::fflush(stdout);
  }
  finalized_ = true;
  MPI_Finalize();
  // Not a non-zero code: Open MPI 4.1's mpiexec aborts a job whose rank exits non-zero, and that
  // path was seen to crash mpiexec itself (PMIx_Finalize), failing a skipped test.
  std::exit(0);
}

int Suite::finish() const {
  MPI_Barrier(MPI_COMM_WORLD);
  if (base_.rank == 0) {
    std::printf("%d passed, %d failed\n", passed_, failed_);
    std::fflush(stdout);
  }
  return failed_ == 0 ? 0 : 1;
}

}  // namespace gddt_test::p2p
