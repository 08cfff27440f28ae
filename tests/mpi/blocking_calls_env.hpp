// What the cases of test_blocking_calls share: the world, the held send, the form of a case; and
// the groups of cases, each declared by the file that holds it.
#pragma once

#include <mpi.h>

#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gddt_test::blocking_calls {

constexpr int kHeldTag = 7001;

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// What the cases share: the world, a periodic ring topology, a file name, and the held send.
struct Env {
  int rank = world_rank();
  int size = world_size();
  MPI_Comm ring = MPI_COMM_NULL;
  std::string path;
  MPI_Request held = MPI_REQUEST_NULL;
  int held_value = 0;
  int failures = 0;

  Env() {
    const int periodic = 1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periodic, 0, &ring);
    char name[64] = {};
    if (rank == 0) std::snprintf(name, sizeof name, "/tmp/gddt-blocking-calls-%d.dat", static_cast<int>(getpid()));
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    path = name;
  }
  ~Env() { MPI_Comm_free(&ring); }

  // Right before the call under test: `holder` posts the send that gddt holds back and
  // `waiter` waits for it, then both go on into the call.
  void hold(int holder = 0, int waiter = 1) {
    if (rank == holder) {
      held_value = 42;
      MPI_Isend(&held_value, 1, MPI_INT, waiter, kHeldTag, MPI_COMM_WORLD, &held);
    } else if (rank == waiter) {
      int value = 0;
      MPI_Recv(&value, 1, MPI_INT, holder, kHeldTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (value != 42) {
        std::fprintf(stderr, "rank %d: the held message carried %d\n", rank, value);
        ++failures;
      }
    }
  }
  void finish_held() { MPI_Wait(&held, MPI_STATUS_IGNORE); }

  std::vector<int> ones() const { return std::vector<int>(static_cast<std::size_t>(size), 1); }
  std::vector<int> steps() const {
    std::vector<int> displacements(static_cast<std::size_t>(size));
    for (int i = 0; i < size; ++i) displacements[static_cast<std::size_t>(i)] = i;
    return displacements;
  }
  MPI_Group world_group() const {
    MPI_Group group;
    MPI_Comm_group(MPI_COMM_WORLD, &group);
    return group;
  }
};

using Case = std::function<void(Env&)>;

// Calls of one collective: the hold comes right before it.
template <typename Call>
Case held(Call call) {
  return [call](Env& e) {
    e.hold();
    call(e);
  };
}

// blocking_calls_cases.cpp
std::map<std::string, Case> cases();
// blocking_calls_file.cpp
void add_file_cases(std::map<std::string, Case>& c);
// blocking_calls_large_count.cpp
void add_large_count_cases(std::map<std::string, Case>& c);

}  // namespace gddt_test::blocking_calls
