// test_blocking_calls: MPI-4's large-count forms.
#include <mpi.h>

#include <map>
#include <string>
#include <vector>

#include "blocking_calls_env.hpp"
#include "mpi/entry_points.hpp"

namespace gddt_test::blocking_calls {

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

}  // namespace gddt_test::blocking_calls
