// Every MPI function that the entry-point table marks as one that may block, called while a
// send gddt holds back waits to start: before each call, one rank posts an MPI_Isend (held by
// gddt until its next MPI call: GDDT_P2P_HOST=gddt stages host buffers, and staged nonblocking
// sends start late) and its partner blocks in MPI_Recv for that message before it joins the
// same call. Were the call not to start held sends first, the first rank would wait in it for
// a partner that waits for the held message: a hang, which a watchdog thread reports by name.
// The list of functions comes from the table (entry_point_names.inc, generated for this
// build's mpi.h): a function it marks blocking that has no case here and no reason to be left
// out fails the test.
#include <mpi.h>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mpi/entry_points.hpp"

namespace {

constexpr int kHeldTag = 7001;
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

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
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

void free_comm(MPI_Comm* comm) {
  if (*comm != MPI_COMM_NULL) MPI_Comm_free(comm);
}

// A window of `bytes` over MPI_COMM_WORLD with an open passive or active epoch as cases need.
struct Window {
  std::vector<int> memory = std::vector<int>(64, 0);
  MPI_Win win = MPI_WIN_NULL;
  Window() { MPI_Win_create(memory.data(), 64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win); }
  ~Window() {
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
  }
};

// Active target between rank 0 (origin) and rank 1 (target). A hold before an origin step
// is the origin's send, waited for by the target; one before a target step the reverse.
void active_target(Env& e, const std::string& at) {
  Window w;
  MPI_Group world = e.world_group(), peer;
  const int other = e.rank == 0 ? 1 : 0;
  MPI_Group_incl(world, 1, &other, &peer);
  const bool origin_holds = at == "start" || at == "complete";
  const int holder = origin_holds ? 0 : 1, waiter = origin_holds ? 1 : 0;
  auto hold_before = [&](const char* step) {
    if (at == step) e.hold(holder, waiter);
  };
  // MPI_Win_start may wait for the target's post, so a target that waits for a message held
  // only as late as MPI_Win_complete posts first.
  if (e.rank == waiter && at != "complete") e.hold(holder, waiter);
  if (e.rank == 1) {
    hold_before("post");
    MPI_Win_post(peer, 0, w.win);
    if (at == "complete") e.hold(holder, waiter);
    hold_before("wait");
    hold_before("test");
    if (at == "test") {
      int done = 0;
      while (!done) MPI_Win_test(w.win, &done);
    } else {
      MPI_Win_wait(w.win);
    }
  } else if (e.rank == 0) {
    hold_before("start");
    MPI_Win_start(peer, 0, w.win);
    const int value = 5;
    MPI_Put(&value, 1, MPI_INT, 1, 0, 1, MPI_INT, w.win);
    hold_before("complete");
    MPI_Win_complete(w.win);
  }
  MPI_Group_free(&peer);
  MPI_Group_free(&world);
}

// Passive target on rank 1's window, the hold before the named call.
void passive_target(Env& e, const std::string& at) {
  Window w;
  const int value = 9;
  auto step = [&](const char* name) {
    if (at == name) e.hold();
  };
  if (e.rank == 1) e.hold();
  if (e.rank == 0) {
    const bool all = at.find("all") != std::string::npos && at != "flush_all" && at != "flush_local_all";
    if (all) {
      step("lock_all");
      MPI_Win_lock_all(0, w.win);
      MPI_Put(&value, 1, MPI_INT, 1, 0, 1, MPI_INT, w.win);
      step("unlock_all");
      MPI_Win_unlock_all(w.win);
    } else {
      step("lock");
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, w.win);
      MPI_Put(&value, 1, MPI_INT, 1, 0, 1, MPI_INT, w.win);
      step("flush");
      if (at == "flush") MPI_Win_flush(1, w.win);
      step("flush_all");
      if (at == "flush_all") MPI_Win_flush_all(w.win);
      step("flush_local");
      if (at == "flush_local") MPI_Win_flush_local(1, w.win);
      step("flush_local_all");
      if (at == "flush_local_all") MPI_Win_flush_local_all(w.win);
      step("unlock");
      MPI_Win_unlock(1, w.win);
    }
  }
}

// A file of every rank's 16 ints, opened collectively; `at` is the hold point.
struct File {
  MPI_File fh = MPI_FILE_NULL;
  explicit File(const Env& e) {
    MPI_File_open(MPI_COMM_WORLD, e.path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    std::vector<int> data(16, e.rank);
    MPI_File_write_at_all(fh, e.rank * 16 * static_cast<MPI_Offset>(sizeof(int)), data.data(), 16, MPI_INT,
                          MPI_STATUS_IGNORE);
    MPI_File_seek(fh, e.rank * 16 * static_cast<MPI_Offset>(sizeof(int)), MPI_SEEK_SET);
  }
  ~File() {
    if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
  }
  MPI_Offset mine(const Env& e) const { return e.rank * 16 * static_cast<MPI_Offset>(sizeof(int)); }
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

std::map<std::string, Case> cases() {
  std::map<std::string, Case> c;
  // Collectives.
  c["MPI_Barrier"] = held([](Env&) { MPI_Barrier(MPI_COMM_WORLD); });
  c["MPI_Bcast"] = held([](Env&) {
    int v = 1;
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
  });
  c["MPI_Gather"] = held([](Env& e) {
    std::vector<int> r(static_cast<std::size_t>(e.size));
    MPI_Gather(&e.rank, 1, MPI_INT, r.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  });
  c["MPI_Gatherv"] = held([](Env& e) {
    std::vector<int> r(static_cast<std::size_t>(e.size));
    MPI_Gatherv(&e.rank, 1, MPI_INT, r.data(), e.ones().data(), e.steps().data(), MPI_INT, 0, MPI_COMM_WORLD);
  });
  c["MPI_Scatter"] = held([](Env& e) {
    std::vector<int> s(static_cast<std::size_t>(e.size));
    int r = 0;
    MPI_Scatter(s.data(), 1, MPI_INT, &r, 1, MPI_INT, 0, MPI_COMM_WORLD);
  });
  c["MPI_Scatterv"] = held([](Env& e) {
    std::vector<int> s(static_cast<std::size_t>(e.size));
    int r = 0;
    MPI_Scatterv(s.data(), e.ones().data(), e.steps().data(), MPI_INT, &r, 1, MPI_INT, 0, MPI_COMM_WORLD);
  });
  c["MPI_Allgather"] = held([](Env& e) {
    std::vector<int> r(static_cast<std::size_t>(e.size));
    MPI_Allgather(&e.rank, 1, MPI_INT, r.data(), 1, MPI_INT, MPI_COMM_WORLD);
  });
  c["MPI_Allgatherv"] = held([](Env& e) {
    std::vector<int> r(static_cast<std::size_t>(e.size));
    MPI_Allgatherv(&e.rank, 1, MPI_INT, r.data(), e.ones().data(), e.steps().data(), MPI_INT, MPI_COMM_WORLD);
  });
  c["MPI_Alltoall"] = held([](Env& e) {
    std::vector<int> s(static_cast<std::size_t>(e.size)), r(s.size());
    MPI_Alltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, MPI_COMM_WORLD);
  });
  c["MPI_Alltoallv"] = held([](Env& e) {
    std::vector<int> s(static_cast<std::size_t>(e.size)), r(s.size());
    MPI_Alltoallv(s.data(), e.ones().data(), e.steps().data(), MPI_INT, r.data(), e.ones().data(),
                  e.steps().data(), MPI_INT, MPI_COMM_WORLD);
  });
  c["MPI_Alltoallw"] = held([](Env& e) {
    std::vector<int> s(static_cast<std::size_t>(e.size)), r(s.size()), bytes(s.size());
    std::vector<MPI_Datatype> types(s.size(), MPI_INT);
    for (int i = 0; i < e.size; ++i) bytes[static_cast<std::size_t>(i)] = i * static_cast<int>(sizeof(int));
    MPI_Alltoallw(s.data(), e.ones().data(), bytes.data(), types.data(), r.data(), e.ones().data(), bytes.data(),
                  types.data(), MPI_COMM_WORLD);
  });
  c["MPI_Reduce"] = held([](Env& e) {
    int r = 0;
    MPI_Reduce(&e.rank, &r, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  });
  c["MPI_Allreduce"] = held([](Env& e) {
    int r = 0;
    MPI_Allreduce(&e.rank, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  c["MPI_Reduce_scatter"] = held([](Env& e) {
    std::vector<int> s(static_cast<std::size_t>(e.size));
    int r = 0;
    MPI_Reduce_scatter(s.data(), &r, e.ones().data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  c["MPI_Reduce_scatter_block"] = held([](Env& e) {
    std::vector<int> s(static_cast<std::size_t>(e.size));
    int r = 0;
    MPI_Reduce_scatter_block(s.data(), &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  c["MPI_Scan"] = held([](Env& e) {
    int r = 0;
    MPI_Scan(&e.rank, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  c["MPI_Exscan"] = held([](Env& e) {
    int r = 0;
    MPI_Exscan(&e.rank, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  // Neighbourhood collectives on the ring: two neighbours each way.
  const int two[] = {1, 1}, at[] = {0, 1};
  const MPI_Aint at_bytes[] = {0, sizeof(int)};
  const MPI_Datatype ints[] = {MPI_INT, MPI_INT};
  c["MPI_Neighbor_allgather"] = held([](Env& e) {
    int r[2];
    MPI_Neighbor_allgather(&e.rank, 1, MPI_INT, r, 1, MPI_INT, e.ring);
  });
  c["MPI_Neighbor_allgatherv"] = held([=](Env& e) {
    int r[2];
    MPI_Neighbor_allgatherv(&e.rank, 1, MPI_INT, r, two, at, MPI_INT, e.ring);
  });
  c["MPI_Neighbor_alltoall"] = held([](Env& e) {
    int s[2] = {e.rank, e.rank}, r[2];
    MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, e.ring);
  });
  c["MPI_Neighbor_alltoallv"] = held([=](Env& e) {
    int s[2] = {e.rank, e.rank}, r[2];
    MPI_Neighbor_alltoallv(s, two, at, MPI_INT, r, two, at, MPI_INT, e.ring);
  });
  c["MPI_Neighbor_alltoallw"] = held([=](Env& e) {
    int s[2] = {e.rank, e.rank}, r[2];
    MPI_Neighbor_alltoallw(s, two, at_bytes, ints, r, two, at_bytes, ints, e.ring);
  });
  // The buffered send leaves once the partner receives it, after the held message.
  c["MPI_Buffer_detach"] = [](Env& e) {
    const int ints_sent = 1 << 18;
    std::vector<int> data(static_cast<std::size_t>(ints_sent), 3);
    std::vector<char> attached(ints_sent * sizeof(int) + 4 * MPI_BSEND_OVERHEAD);
    if (e.rank == 0) {
      MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
      MPI_Bsend(data.data(), ints_sent, MPI_INT, 1, 1, MPI_COMM_WORLD);
    }
    e.hold();
    if (e.rank == 0) {
      void* address = nullptr;
      int size = 0;
      MPI_Buffer_detach(&address, &size);
    } else if (e.rank == 1) {
      MPI_Recv(data.data(), ints_sent, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  };
  // Communicators and topologies.
  c["MPI_Comm_create"] = [](Env& e) {
    MPI_Group group = e.world_group();
    MPI_Comm comm;
    e.hold();
    MPI_Comm_create(MPI_COMM_WORLD, group, &comm);
    free_comm(&comm);
    MPI_Group_free(&group);
  };
  c["MPI_Comm_create_group"] = [](Env& e) {
    MPI_Group group = e.world_group();
    MPI_Comm comm;
    e.hold();
    MPI_Comm_create_group(MPI_COMM_WORLD, group, 5, &comm);
    free_comm(&comm);
    MPI_Group_free(&group);
  };
  c["MPI_Comm_dup"] = held([](Env&) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    free_comm(&comm);
  });
  c["MPI_Comm_dup_with_info"] = held([](Env&) {
    MPI_Comm comm;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &comm);
    free_comm(&comm);
  });
  c["MPI_Comm_split"] = held([](Env& e) {
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, 0, e.rank, &comm);
    free_comm(&comm);
  });
  c["MPI_Comm_split_type"] = held([](Env& e) {
    MPI_Comm comm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, e.rank, MPI_INFO_NULL, &comm);
    free_comm(&comm);
  });
  c["MPI_Comm_free"] = [](Env& e) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    e.hold();
    MPI_Comm_free(&comm);
  };
  c["MPI_Comm_disconnect"] = [](Env& e) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    e.hold();
    MPI_Comm_disconnect(&comm);
  };
  // Two intercommunicator groups: the even and the odd ranks, led by world ranks 0 and 1.
  auto halves = [](Env& e, MPI_Comm* local) { MPI_Comm_split(MPI_COMM_WORLD, e.rank % 2, e.rank, local); };
  c["MPI_Intercomm_create"] = [=](Env& e) {
    MPI_Comm local, inter;
    halves(e, &local);
    e.hold();
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, e.rank % 2 == 0 ? 1 : 0, 9, &inter);
    free_comm(&inter);
    free_comm(&local);
  };
  c["MPI_Intercomm_merge"] = [=](Env& e) {
    MPI_Comm local, inter, merged;
    halves(e, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, e.rank % 2 == 0 ? 1 : 0, 9, &inter);
    e.hold();
    MPI_Intercomm_merge(inter, e.rank % 2, &merged);
    free_comm(&merged);
    free_comm(&inter);
    free_comm(&local);
  };
  c["MPI_Cart_create"] = held([](Env& e) {
    MPI_Comm cart;
    const int periodic = 0;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &e.size, &periodic, 0, &cart);
    free_comm(&cart);
  });
  c["MPI_Cart_sub"] = held([](Env& e) {
    MPI_Comm sub;
    const int keep = 1;
    MPI_Cart_sub(e.ring, &keep, &sub);
    free_comm(&sub);
  });
  c["MPI_Graph_create"] = held([](Env& e) {
    std::vector<int> index(static_cast<std::size_t>(e.size)), edges(static_cast<std::size_t>(e.size));
    for (int i = 0; i < e.size; ++i) {
      index[static_cast<std::size_t>(i)] = i + 1;
      edges[static_cast<std::size_t>(i)] = (i + 1) % e.size;
    }
    MPI_Comm graph;
    MPI_Graph_create(MPI_COMM_WORLD, e.size, index.data(), edges.data(), 0, &graph);
    free_comm(&graph);
  });
  c["MPI_Dist_graph_create"] = held([](Env& e) {
    const int degree = 1, next = (e.rank + 1) % e.size;
    MPI_Comm graph;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &e.rank, &degree, &next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
    free_comm(&graph);
  });
  c["MPI_Dist_graph_create_adjacent"] = held([](Env& e) {
    const int prev = (e.rank + e.size - 1) % e.size, next = (e.rank + 1) % e.size;
    MPI_Comm graph;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, MPI_UNWEIGHTED, 1, &next, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &graph);
    free_comm(&graph);
  });
#if GDDT_HAVE_MPI_Comm_create_from_group
  c["MPI_Comm_create_from_group"] = [](Env& e) {
    MPI_Group group = e.world_group();
    MPI_Comm comm;
    e.hold();
    MPI_Comm_create_from_group(group, "gddt.blocking_calls", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    free_comm(&comm);
    MPI_Group_free(&group);
  };
#endif
#if GDDT_HAVE_MPI_Intercomm_create_from_groups
  c["MPI_Intercomm_create_from_groups"] = [](Env& e) {
    MPI_Group world = e.world_group(), even, odd;
    const int range_even[1][3] = {{0, e.size - 1, 2}}, range_odd[1][3] = {{1, e.size - 1, 2}};
    MPI_Group_range_incl(world, 1, const_cast<int(*)[3]>(range_even), &even);
    MPI_Group_range_incl(world, 1, const_cast<int(*)[3]>(range_odd), &odd);
    const bool is_even = e.rank % 2 == 0;
    MPI_Comm inter;
    e.hold();
    MPI_Intercomm_create_from_groups(is_even ? even : odd, 0, is_even ? odd : even, 0, "gddt.blocking_calls",
                                     MPI_INFO_NULL, MPI_ERRORS_RETURN, &inter);
    free_comm(&inter);
    MPI_Group_free(&even);
    MPI_Group_free(&odd);
    MPI_Group_free(&world);
  };
#endif
#if GDDT_HAVE_MPI_Session_init
  c["MPI_Session_init"] = held([](Env&) {
    MPI_Session session;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
    MPI_Session_finalize(&session);
  });
  c["MPI_Session_finalize"] = [](Env& e) {
    MPI_Session session;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
    e.hold();
    MPI_Session_finalize(&session);
  };
#endif
  // Windows.
  c["MPI_Win_create"] = held([](Env&) {
    int memory[4];
    MPI_Win win;
    MPI_Win_create(memory, sizeof memory, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_free(&win);
  });
  c["MPI_Win_allocate"] = held([](Env&) {
    int* memory = nullptr;
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &memory, &win);
    MPI_Win_free(&win);
  });
  c["MPI_Win_allocate_shared"] = held([](Env&) {
    int* memory = nullptr;
    MPI_Win win;
    MPI_Win_allocate_shared(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &memory, &win);
    MPI_Win_free(&win);
  });
  c["MPI_Win_create_dynamic"] = held([](Env&) {
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_free(&win);
  });
  c["MPI_Win_free"] = [](Env& e) {
    Window w;
    e.hold();
    MPI_Win_free(&w.win);
  };
  c["MPI_Win_fence"] = [](Env& e) {
    Window w;
    MPI_Win_fence(0, w.win);
    e.hold();
    MPI_Win_fence(0, w.win);
  };
  for (const char* step : {"start", "complete", "post", "wait", "test"})
    c[std::string("MPI_Win_") + step] = [step](Env& e) { active_target(e, step); };
  for (const char* step : {"lock", "unlock", "lock_all", "unlock_all", "flush", "flush_all", "flush_local",
                           "flush_local_all"})
    c[std::string("MPI_Win_") + step] = [step](Env& e) { passive_target(e, step); };
  return c;
}

// The file calls: each opens the file, holds before the named call, and closes it.
void add_file_cases(std::map<std::string, Case>& c) {
  auto with_file = [](std::function<void(Env&, File&)> call) {
    return Case([call](Env& e) {
      File f(e);
      call(e, f);
    });
  };
  c["MPI_File_open"] = held([](Env& e) {
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, e.path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_close(&fh);
  });
  c["MPI_File_close"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_close(&f.fh);
  });
  c["MPI_File_set_size"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_set_size(f.fh, 4096);
  });
  c["MPI_File_preallocate"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_preallocate(f.fh, 4096);
  });
  c["MPI_File_set_view"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_set_view(f.fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
  });
  c["MPI_File_set_info"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_set_info(f.fh, MPI_INFO_NULL);
  });
  c["MPI_File_sync"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_sync(f.fh);
  });
  c["MPI_File_set_atomicity"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_set_atomicity(f.fh, 0);
  });
  c["MPI_File_seek_shared"] = with_file([](Env& e, File& f) {
    e.hold();
    MPI_File_seek_shared(f.fh, 0, MPI_SEEK_SET);
  });
  // Reads and writes.
  auto io = [&](const std::string& name, std::function<void(Env&, File&, int*)> call) {
    c[name] = with_file([call](Env& e, File& f) {
      int buffer[16] = {};
      e.hold();
      call(e, f, buffer);
    });
  };
  io("MPI_File_read", [](Env&, File& f, int* b) { MPI_File_read(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write", [](Env&, File& f, int* b) { MPI_File_write(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_all", [](Env&, File& f, int* b) { MPI_File_read_all(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_all",
     [](Env&, File& f, int* b) { MPI_File_write_all(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_at",
     [](Env& e, File& f, int* b) { MPI_File_read_at(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_at",
     [](Env& e, File& f, int* b) { MPI_File_write_at(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_at_all",
     [](Env& e, File& f, int* b) { MPI_File_read_at_all(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_at_all",
     [](Env& e, File& f, int* b) { MPI_File_write_at_all(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_shared",
     [](Env&, File& f, int* b) { MPI_File_read_shared(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_shared",
     [](Env&, File& f, int* b) { MPI_File_write_shared(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_ordered",
     [](Env&, File& f, int* b) { MPI_File_read_ordered(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_ordered",
     [](Env&, File& f, int* b) { MPI_File_write_ordered(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  // Split collectives: the hold before the begin, or before the end.
  auto split = [&](const std::string& base, std::function<void(Env&, File&, int*)> begin,
                   std::function<void(File&, int*)> end) {
    c[base + "_begin"] = with_file([=](Env& e, File& f) {
      int buffer[16] = {};
      e.hold();
      begin(e, f, buffer);
      end(f, buffer);
    });
    c[base + "_end"] = with_file([=](Env& e, File& f) {
      int buffer[16] = {};
      begin(e, f, buffer);
      e.hold();
      end(f, buffer);
    });
  };
  split("MPI_File_read_all", [](Env&, File& f, int* b) { MPI_File_read_all_begin(f.fh, b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_read_all_end(f.fh, b, MPI_STATUS_IGNORE); });
  split("MPI_File_write_all", [](Env&, File& f, int* b) { MPI_File_write_all_begin(f.fh, b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_write_all_end(f.fh, b, MPI_STATUS_IGNORE); });
  split("MPI_File_read_at_all",
        [](Env& e, File& f, int* b) { MPI_File_read_at_all_begin(f.fh, f.mine(e), b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_read_at_all_end(f.fh, b, MPI_STATUS_IGNORE); });
  split("MPI_File_write_at_all",
        [](Env& e, File& f, int* b) { MPI_File_write_at_all_begin(f.fh, f.mine(e), b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_write_at_all_end(f.fh, b, MPI_STATUS_IGNORE); });
  split("MPI_File_read_ordered", [](Env&, File& f, int* b) { MPI_File_read_ordered_begin(f.fh, b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_read_ordered_end(f.fh, b, MPI_STATUS_IGNORE); });
  split("MPI_File_write_ordered", [](Env&, File& f, int* b) { MPI_File_write_ordered_begin(f.fh, b, 16, MPI_INT); },
        [](File& f, int* b) { MPI_File_write_ordered_end(f.fh, b, MPI_STATUS_IGNORE); });
#if GDDT_HAVE_MPI_File_read_c
  io("MPI_File_read_c", [](Env&, File& f, int* b) { MPI_File_read_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_c", [](Env&, File& f, int* b) { MPI_File_write_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_all_c",
     [](Env&, File& f, int* b) { MPI_File_read_all_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_all_c",
     [](Env&, File& f, int* b) { MPI_File_write_all_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_at_c",
     [](Env& e, File& f, int* b) { MPI_File_read_at_c(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_at_c",
     [](Env& e, File& f, int* b) { MPI_File_write_at_c(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_at_all_c",
     [](Env& e, File& f, int* b) { MPI_File_read_at_all_c(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_at_all_c",
     [](Env& e, File& f, int* b) { MPI_File_write_at_all_c(f.fh, f.mine(e), b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_shared_c",
     [](Env&, File& f, int* b) { MPI_File_read_shared_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_shared_c",
     [](Env&, File& f, int* b) { MPI_File_write_shared_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_ordered_c",
     [](Env&, File& f, int* b) { MPI_File_read_ordered_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_write_ordered_c",
     [](Env&, File& f, int* b) { MPI_File_write_ordered_c(f.fh, b, 16, MPI_INT, MPI_STATUS_IGNORE); });
  io("MPI_File_read_all_begin_c", [](Env&, File& f, int* b) {
    MPI_File_read_all_begin_c(f.fh, b, 16, MPI_INT);
    MPI_File_read_all_end(f.fh, b, MPI_STATUS_IGNORE);
  });
  io("MPI_File_write_all_begin_c", [](Env&, File& f, int* b) {
    MPI_File_write_all_begin_c(f.fh, b, 16, MPI_INT);
    MPI_File_write_all_end(f.fh, b, MPI_STATUS_IGNORE);
  });
  io("MPI_File_read_at_all_begin_c", [](Env& e, File& f, int* b) {
    MPI_File_read_at_all_begin_c(f.fh, f.mine(e), b, 16, MPI_INT);
    MPI_File_read_at_all_end(f.fh, b, MPI_STATUS_IGNORE);
  });
  io("MPI_File_write_at_all_begin_c", [](Env& e, File& f, int* b) {
    MPI_File_write_at_all_begin_c(f.fh, f.mine(e), b, 16, MPI_INT);
    MPI_File_write_at_all_end(f.fh, b, MPI_STATUS_IGNORE);
  });
  io("MPI_File_read_ordered_begin_c", [](Env&, File& f, int* b) {
    MPI_File_read_ordered_begin_c(f.fh, b, 16, MPI_INT);
    MPI_File_read_ordered_end(f.fh, b, MPI_STATUS_IGNORE);
  });
  io("MPI_File_write_ordered_begin_c", [](Env&, File& f, int* b) {
    MPI_File_write_ordered_begin_c(f.fh, b, 16, MPI_INT);
    MPI_File_write_ordered_end(f.fh, b, MPI_STATUS_IGNORE);
  });
#endif
}

// MPI-4's large-count forms, where the library has them: the same calls with MPI_Count counts
// and MPI_Aint displacements.
void add_large_count_cases(std::map<std::string, Case>& c) {
#if GDDT_HAVE_MPI_Bcast_c
  struct Counts {
    std::vector<MPI_Count> ones;
    std::vector<MPI_Aint> steps, bytes;
    std::vector<MPI_Datatype> types;
    explicit Counts(const Env& e)
        : ones(static_cast<std::size_t>(e.size), 1), steps(ones.size()), bytes(ones.size()), types(ones.size(), MPI_INT) {
      for (int i = 0; i < e.size; ++i) {
        steps[static_cast<std::size_t>(i)] = i;
        bytes[static_cast<std::size_t>(i)] = i * static_cast<MPI_Aint>(sizeof(int));
      }
    }
  };
  c["MPI_Bcast_c"] = held([](Env&) {
    int v = 1;
    MPI_Bcast_c(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
  });
  c["MPI_Gather_c"] = held([](Env& e) {
    std::vector<int> r(static_cast<std::size_t>(e.size));
    MPI_Gather_c(&e.rank, 1, MPI_INT, r.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  });
  c["MPI_Gatherv_c"] = held([](Env& e) {
    Counts n(e);
    std::vector<int> r(static_cast<std::size_t>(e.size));
    MPI_Gatherv_c(&e.rank, 1, MPI_INT, r.data(), n.ones.data(), n.steps.data(), MPI_INT, 0, MPI_COMM_WORLD);
  });
  c["MPI_Scatter_c"] = held([](Env& e) {
    std::vector<int> s(static_cast<std::size_t>(e.size));
    int r = 0;
    MPI_Scatter_c(s.data(), 1, MPI_INT, &r, 1, MPI_INT, 0, MPI_COMM_WORLD);
  });
  c["MPI_Scatterv_c"] = held([](Env& e) {
    Counts n(e);
    std::vector<int> s(static_cast<std::size_t>(e.size));
    int r = 0;
    MPI_Scatterv_c(s.data(), n.ones.data(), n.steps.data(), MPI_INT, &r, 1, MPI_INT, 0, MPI_COMM_WORLD);
  });
  c["MPI_Allgather_c"] = held([](Env& e) {
    std::vector<int> r(static_cast<std::size_t>(e.size));
    MPI_Allgather_c(&e.rank, 1, MPI_INT, r.data(), 1, MPI_INT, MPI_COMM_WORLD);
  });
  c["MPI_Allgatherv_c"] = held([](Env& e) {
    Counts n(e);
    std::vector<int> r(static_cast<std::size_t>(e.size));
    MPI_Allgatherv_c(&e.rank, 1, MPI_INT, r.data(), n.ones.data(), n.steps.data(), MPI_INT, MPI_COMM_WORLD);
  });
  c["MPI_Alltoall_c"] = held([](Env& e) {
    std::vector<int> s(static_cast<std::size_t>(e.size)), r(s.size());
    MPI_Alltoall_c(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, MPI_COMM_WORLD);
  });
  c["MPI_Alltoallv_c"] = held([](Env& e) {
    Counts n(e);
    std::vector<int> s(static_cast<std::size_t>(e.size)), r(s.size());
    MPI_Alltoallv_c(s.data(), n.ones.data(), n.steps.data(), MPI_INT, r.data(), n.ones.data(), n.steps.data(),
                    MPI_INT, MPI_COMM_WORLD);
  });
  c["MPI_Alltoallw_c"] = held([](Env& e) {
    Counts n(e);
    std::vector<int> s(static_cast<std::size_t>(e.size)), r(s.size());
    MPI_Alltoallw_c(s.data(), n.ones.data(), n.bytes.data(), n.types.data(), r.data(), n.ones.data(),
                    n.bytes.data(), n.types.data(), MPI_COMM_WORLD);
  });
  c["MPI_Reduce_c"] = held([](Env& e) {
    int r = 0;
    MPI_Reduce_c(&e.rank, &r, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  });
  c["MPI_Allreduce_c"] = held([](Env& e) {
    int r = 0;
    MPI_Allreduce_c(&e.rank, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  c["MPI_Reduce_scatter_c"] = held([](Env& e) {
    Counts n(e);
    std::vector<int> s(static_cast<std::size_t>(e.size));
    int r = 0;
    MPI_Reduce_scatter_c(s.data(), &r, n.ones.data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  c["MPI_Reduce_scatter_block_c"] = held([](Env& e) {
    std::vector<int> s(static_cast<std::size_t>(e.size));
    int r = 0;
    MPI_Reduce_scatter_block_c(s.data(), &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  c["MPI_Scan_c"] = held([](Env& e) {
    int r = 0;
    MPI_Scan_c(&e.rank, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  c["MPI_Exscan_c"] = held([](Env& e) {
    int r = 0;
    MPI_Exscan_c(&e.rank, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  });
  const MPI_Count two[] = {1, 1};
  const MPI_Aint at[] = {0, 1}, at_bytes[] = {0, sizeof(int)};
  const MPI_Datatype ints[] = {MPI_INT, MPI_INT};
  c["MPI_Neighbor_allgather_c"] = held([](Env& e) {
    int r[2];
    MPI_Neighbor_allgather_c(&e.rank, 1, MPI_INT, r, 1, MPI_INT, e.ring);
  });
  c["MPI_Neighbor_allgatherv_c"] = held([=](Env& e) {
    int r[2];
    MPI_Neighbor_allgatherv_c(&e.rank, 1, MPI_INT, r, two, at, MPI_INT, e.ring);
  });
  c["MPI_Neighbor_alltoall_c"] = held([](Env& e) {
    int s[2] = {e.rank, e.rank}, r[2];
    MPI_Neighbor_alltoall_c(s, 1, MPI_INT, r, 1, MPI_INT, e.ring);
  });
  c["MPI_Neighbor_alltoallv_c"] = held([=](Env& e) {
    int s[2] = {e.rank, e.rank}, r[2];
    MPI_Neighbor_alltoallv_c(s, two, at, MPI_INT, r, two, at, MPI_INT, e.ring);
  });
  c["MPI_Neighbor_alltoallw_c"] = held([=](Env& e) {
    int s[2] = {e.rank, e.rank}, r[2];
    MPI_Neighbor_alltoallw_c(s, two, at_bytes, ints, r, two, at_bytes, ints, e.ring);
  });
  c["MPI_Buffer_detach_c"] = [](Env& e) {
    const int ints_sent = 1 << 18;
    std::vector<int> data(static_cast<std::size_t>(ints_sent), 3);
    std::vector<char> attached(ints_sent * sizeof(int) + 4 * MPI_BSEND_OVERHEAD);
    if (e.rank == 0) {
      MPI_Buffer_attach_c(attached.data(), static_cast<MPI_Count>(attached.size()));
      MPI_Bsend(data.data(), ints_sent, MPI_INT, 1, 1, MPI_COMM_WORLD);
    }
    e.hold();
    if (e.rank == 0) {
      void* address = nullptr;
      MPI_Count size = 0;
      MPI_Buffer_detach_c(&address, &size);
    } else if (e.rank == 1) {
      MPI_Recv(data.data(), ints_sent, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  };
  c["MPI_Win_create_c"] = held([](Env&) {
    int memory[4];
    MPI_Win win;
    MPI_Win_create_c(memory, sizeof memory, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_free(&win);
  });
  c["MPI_Win_allocate_c"] = held([](Env&) {
    int* memory = nullptr;
    MPI_Win win;
    MPI_Win_allocate_c(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &memory, &win);
    MPI_Win_free(&win);
  });
  c["MPI_Win_allocate_shared_c"] = held([](Env&) {
    int* memory = nullptr;
    MPI_Win win;
    MPI_Win_allocate_shared_c(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &memory, &win);
    MPI_Win_free(&win);
  });
#else
  (void)c;
#endif
}

}  // namespace

int main(int argc, char** argv) {
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
