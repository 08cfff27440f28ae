// The harness of the point-to-point suite. Every rank runs every case in the same order; a case
// passes when no rank recorded a failed check. Checks never return early, so ranks stay in step
// after a failure; a call that fails on a communicator without MPI_ERRORS_RETURN aborts the job,
// which is better than a hang. Each executable ends with one line "N passed, M failed" on
// rank 0 and exits non-zero on failure; where it cannot run here, rank 0 prints
// "<program>: skipped: <reason>" and every rank exits 0 (gddt_add_mpi_test's skip line).
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "memory_buffer.hpp"

namespace gddt_test::p2p {

// Where this rank stands and what it works with during one case.
struct Context {
  int rank = 0;
  int size = 0;
  int next = 0;  // ring neighbours
  int prev = 0;
  MemoryKind memory = MemoryKind::kHost;  // kind of every buffer this rank allocates
  // Kind of rank r's buffers is memory_by_rank[r % 4] (all equal unless --memory mixed).
  std::array<MemoryKind, 4> memory_by_rank = {};
  std::uint64_t seed = 0;                // of this case, derived from the run's seed
  long messages = 0;                     // --messages, 0 when not given
  int thread_level = MPI_THREAD_SINGLE;  // what MPI provided

  MemoryKind memory_of(int other_rank) const { return memory_by_rank[other_rank % 4]; }
};

class Suite {
 public:
  // Initializes MPI asking for `thread_level` and reads the command line:
  //   --memory host|device|managed|pinned|mixed  buffer kind; mixed gives neighbouring ranks
  //                                              different kinds
  //   --seed N        run seed (printed; rerun with it to reproduce)
  //   --messages N    work size for tests that take one
  //   --only TEXT     run only the cases whose name contains TEXT
  //   --require-gddt  fail unless gddt is loaded in the process
  // Fewer ranks than `fewest_ranks` is a usage error.
  Suite(int* argc, char*** argv, const char* program, int thread_level = MPI_THREAD_SINGLE, int fewest_ranks = 2);
  ~Suite();  // finalizes MPI: declare objects holding MPI handles after the Suite
  Suite(const Suite&) = delete;
  Suite& operator=(const Suite&) = delete;

  int thread_level() const { return base_.thread_level; }

  // Runs one case on every rank; `body` is called collectively.
  void run(const char* name, const std::function<void(const Context&)>& body);

  // Ends the whole program as skipped (collective).
  [[noreturn]] void skip(const std::string& reason);

  // Prints the summary line and returns the exit code for main.
  int finish() const;

 private:
  Context base_;
  std::string program_;
  std::string only_;
  bool require_gddt_ = false;
  int passed_ = 0;
  int failed_ = 0;
  bool finalized_ = false;
};

// Records a failed check of the current case unless `ok`; `what` says what was expected.
void expect(bool ok, const std::string& what);
void fail(const std::string& what);

// Prints an observation about the current case that is not a failure (rank 0, a few per case).
void note(const std::string& what);

// Records a failure when an MPI call did not return MPI_SUCCESS.
void expect_success(int mpi_result, const char* call_text);
#define P2P_EXPECT_SUCCESS(call) ::gddt_test::p2p::expect_success((call), #call)

// Calls `done` until it returns true. After `seconds` without that, reports `what` as stuck and
// aborts the job (nothing sensible can follow a request that never completes).
void poll_until(const std::function<bool()>& done, const std::string& what, double seconds = 120);

// The file name of the shared object that provides `symbol_name` to this process ("?" when
// none does): shows whether gddt sits in front of an MPI entry point.
std::string provider_of(const char* symbol_name);

// The gddt counter `name` (gddt_counter) of this process; -1 where gddt is not loaded.
long long counter_value(const char* name);

// Records a failure unless the library refuses `call` (given true: the library alone; false:
// through gddt) and gddt gives the same MPI error class. `library_may_take`: for erroneous calls
// the standard does not oblige a library to detect; where the library takes it, so must gddt.
void expect_library_class(const std::string& what, const std::function<int(bool library)>& call,
                          bool library_may_take = false);

// A 64-bit mix of two values, used to derive seeds.
std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b);

}  // namespace gddt_test::p2p
