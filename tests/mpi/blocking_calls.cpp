// Every MPI function that the entry-point table marks as one that may block, called while a
// send gddt holds back waits to start: before each call, one rank posts an MPI_Isend (held by
// gddt until its next MPI call: GDDT_P2P_HOST=gddt stages host buffers, and staged nonblocking
// sends start late) and its partner blocks in MPI_Recv for that message before it joins the
// same call. Were the call not to start held sends first, the first rank would wait in it for
// a partner that waits for the held message: a hang, which a watchdog thread reports by name.
// The list of functions comes from the table (entry_point_names.inc, generated for this
// build's mpi.h): a function it marks blocking that has no case here and no reason to be left
// out fails the test.
// The cases, a group to a file, are declared in blocking_calls_env.hpp.
#include <mpi.h>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "blocking_calls_env.hpp"

namespace gddt_test::blocking_calls {
namespace {

constexpr int kWatchdogSeconds = 30;

struct Row {
  const char* name;
  bool may_block;  // blocking rows, and staged collectives that return no request
};
#define GDDT_ENTRY_POINT(kind, name, may_block) {#name, may_block != 0},
const Row kRows[] = {
#include "mpi/entry_point_names.inc"
};
#undef GDDT_ENTRY_POINT

// Functions that need a second MPI job, a port or a socket between jobs.
const std::set<std::string> kLeftOut = {"MPI_Comm_accept", "MPI_Comm_connect", "MPI_Comm_join", "MPI_Comm_spawn",
                                        "MPI_Comm_spawn_multiple"};

// Ends the process, naming the call, when a case does not finish in time.
class Watchdog {
 public:
  Watchdog() : thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  void arm(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    name_ = name;
    armed_ = true;
    changed_.notify_all();
  }
  void disarm() {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
    changed_.notify_all();
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      if (!armed_) {
        changed_.wait(lock);
        continue;
      }
      const std::string name = name_;
      if (!changed_.wait_for(lock, std::chrono::seconds(kWatchdogSeconds), [&] { return stop_ || !armed_; })) {
        std::fprintf(stderr, "HANG: %s did not return within %d s while a held send waited\n", name.c_str(),
                     kWatchdogSeconds);
        std::fflush(stderr);
        _exit(3);
      }
    }
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false, stop_ = false;
  std::string name_;
  std::thread thread_;
};

}  // namespace

}  // namespace gddt_test::blocking_calls

int main(int argc, char** argv) {
  using namespace gddt_test::blocking_calls;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int passed = 0, failed = 0;
  {
    Env e;
    std::map<std::string, Case> all = cases();
    add_file_cases(all);
    add_large_count_cases(all);
    Watchdog watchdog;
    for (const Row& row : kRows) {
      const std::string name = row.name;
      if (!row.may_block || kLeftOut.count(name) != 0) continue;
      auto found = all.find(name);
      if (found == all.end()) {
        if (e.rank == 0) std::fprintf(stderr, "FAIL %s: the table marks it blocking and no case calls it\n", row.name);
        ++failed;
        continue;
      }
      MPI_Barrier(MPI_COMM_WORLD);
      const int before = e.failures;
      watchdog.arm(name);
      found->second(e);
      e.finish_held();
      watchdog.disarm();
      if (e.failures == before) {
        ++passed;
      } else {
        ++failed;
        std::fprintf(stderr, "FAIL %s on rank %d\n", row.name, e.rank);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (e.rank == 0) MPI_File_delete(e.path.c_str(), MPI_INFO_NULL);
  }
  int total_failed = 0;
  MPI_Allreduce(&failed, &total_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (world_rank() == 0) std::printf("%d passed, %d failed\n", passed, total_failed);
  MPI_Finalize();
  return total_failed == 0 ? 0 : 1;
}
