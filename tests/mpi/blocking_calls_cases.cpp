// test_blocking_calls: the collectives, communicators, topologies and windows.
#include <mpi.h>

#include <map>
#include <string>
#include <vector>

#include "blocking_calls_env.hpp"
#include "mpi/entry_points.hpp"

namespace gddt_test::blocking_calls {
namespace {

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

}  // namespace

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

}  // namespace gddt_test::blocking_calls
