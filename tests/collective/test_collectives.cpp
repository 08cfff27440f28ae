// Every collective gddt stages, on buffers of the run's memory kind (--memory; mixed gives
// neighbouring ranks different kinds), with random nested datatypes from the fuzzer's generator,
// against the MPI library's own result: each call runs twice, once through gddt (MPI_*) on
// buffers of that kind and once through the library alone (PMPI_*) on host copies of the same
// bytes, and every byte of every buffer (gaps between segments and margins around them included)
// must come out equal. Per-peer segments are spaced with gaps, collectives run on the world and on
// a periodic ring (neighbourhood collectives), rooted ones at every root, and the nonblocking and
// persistent forms complete through MPI_Wait, MPI_Waitall and MPI_Test. Host memory is staged by
// gddt only with GDDT_COLLECTIVE_HOST=gddt (as ctest runs it); gddt's counters prove that it was.
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpi/entry_points.hpp"
#include "trial.hpp"

namespace gddt_test::collective {
namespace {

using p2p::Context;
using p2p::expect;
using trial::Segment;
using trial::Trial;
using trial::Types;

constexpr int kDefaultTypes = 16;

// Segments of `counts[i]` elements per peer, peer i's starting one extent past peer i-1's end (a gap
// of one element between peers); `bytes` gives displacements in bytes, else in extents.
std::vector<Segment> spaced(const std::vector<int>& counts, MPI_Datatype datatype, std::int64_t extent,
                            std::vector<int>* displacements) {
  std::vector<Segment> segments;
  std::int64_t at = 0;
  displacements->clear();
  for (int count : counts) {
    segments.push_back({count, datatype, at * extent});
    displacements->push_back(static_cast<int>(at));
    at += count + 1;
  }
  return segments;
}

// The data-movement collectives with one random type and count.
void move_data(const Context& context, const Types& t, int count, std::uint64_t seed, MPI_Comm ring) {
  const int n = context.size, rank = context.rank;
  const MPI_Datatype T = t.datatype;
  const std::string on = " of " + std::to_string(count) + " x " + t.description;
  std::vector<int> counts(static_cast<std::size_t>(n), count), displs, mine = {count};
  // Senders of v-collectives send count + rank % 2 elements.
  std::vector<int> varying(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) varying[static_cast<std::size_t>(i)] = count + i % 2;
  const int my_varying = count + rank % 2;

  for (int root = 0; root < n; ++root) {
    {
      Trial trial(context, "MPI_Bcast" + on, seed + 1);
      trial.add({{count, T, 0}});
      trial.run([&](bool ref, const std::vector<void*>& b) {
        return CALL(ref, MPI_Bcast, b[0], count, T, root, MPI_COMM_WORLD);
      });
    }
    {
      Trial trial(context, "MPI_Gather" + on, seed + 2);
      trial.add({{count, T, 0}});
      trial.add(spaced(counts, T, t.extent, &displs));
      trial.run([&](bool ref, const std::vector<void*>& b) {
        return CALL(ref, MPI_Gather, b[0], count, T, b[1], count, T, root, MPI_COMM_WORLD);
      });
    }
    {
      Trial trial(context, "MPI_Gatherv" + on, seed + 3);
      trial.add({{my_varying, T, 0}});
      trial.add(spaced(varying, T, t.extent, &displs));
      trial.run([&](bool ref, const std::vector<void*>& b) {
        return CALL(ref, MPI_Gatherv, b[0], my_varying, T, b[1], varying.data(), displs.data(), T, root,
                    MPI_COMM_WORLD);
      });
    }
    {
      Trial trial(context, "MPI_Scatterv" + on, seed + 4);
      trial.add(spaced(varying, T, t.extent, &displs));
      trial.add({{my_varying, T, 0}});
      trial.run([&](bool ref, const std::vector<void*>& b) {
        return CALL(ref, MPI_Scatterv, b[0], varying.data(), displs.data(), T, b[1], my_varying, T, root,
                    MPI_COMM_WORLD);
      });
    }
  }
  {
    Trial trial(context, "MPI_Scatter" + on, seed + 5);
    std::vector<Segment> blocks;
    for (int i = 0; i < n; ++i) blocks.push_back({count, T, i * count * t.extent});
    trial.add(blocks);
    trial.add({{count, T, 0}});
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Scatter, b[0], count, T, b[1], count, T, n - 1, MPI_COMM_WORLD);
    });
  }
  {
    Trial trial(context, "MPI_Allgather" + on, seed + 6);
    std::vector<Segment> blocks;
    for (int i = 0; i < n; ++i) blocks.push_back({count, T, i * count * t.extent});
    trial.add({{count, T, 0}});
    trial.add(blocks);
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Allgather, b[0], count, T, b[1], count, T, MPI_COMM_WORLD);
    });
  }
  {
    Trial trial(context, "MPI_Allgather in place" + on, seed + 7);
    std::vector<Segment> blocks;
    for (int i = 0; i < n; ++i) blocks.push_back({count, T, i * count * t.extent});
    trial.add(blocks);
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Allgather, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b[0], count, T, MPI_COMM_WORLD);
    });
  }
  {
    Trial trial(context, "MPI_Allgatherv" + on, seed + 8);
    trial.add({{my_varying, T, 0}});
    trial.add(spaced(varying, T, t.extent, &displs));
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Allgatherv, b[0], my_varying, T, b[1], varying.data(), displs.data(), T, MPI_COMM_WORLD);
    });
  }
  {
    Trial trial(context, "MPI_Alltoall" + on, seed + 9);
    std::vector<Segment> blocks;
    for (int i = 0; i < n; ++i) blocks.push_back({count, T, i * count * t.extent});
    trial.add(blocks);
    trial.add(blocks);
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Alltoall, b[0], count, T, b[1], count, T, MPI_COMM_WORLD);
    });
  }
  // Rank r sends count + (r + peer) % 2 elements to each peer.
  std::vector<int> pair_counts(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) pair_counts[static_cast<std::size_t>(i)] = count + (rank + i) % 2;
  {
    Trial trial(context, "MPI_Alltoallv" + on, seed + 10);
    std::vector<int> sdispls, rdispls;
    trial.add(spaced(pair_counts, T, t.extent, &sdispls));
    trial.add(spaced(pair_counts, T, t.extent, &rdispls));
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Alltoallv, b[0], pair_counts.data(), sdispls.data(), T, b[1], pair_counts.data(),
                  rdispls.data(), T, MPI_COMM_WORLD);
    });
  }
  {
    // Byte displacements and a type per peer: the random type, or its bytes as MPI_BYTE elements
    // where the signature allows (a peer that sends MPI_BYTE is received as MPI_BYTE).
    Trial trial(context, "MPI_Alltoallw" + on, seed + 11);
    std::vector<int> sdispls, rdispls, unused;
    std::vector<MPI_Datatype> types(static_cast<std::size_t>(n), T);
    const std::vector<Segment> segments = spaced(pair_counts, T, t.extent, &unused);
    for (const Segment& s : segments) {
      sdispls.push_back(static_cast<int>(s.displacement));
      rdispls.push_back(static_cast<int>(s.displacement));
    }
    trial.add(segments);
    trial.add(segments);
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Alltoallw, b[0], pair_counts.data(), sdispls.data(), types.data(), b[1], pair_counts.data(),
                  rdispls.data(), types.data(), MPI_COMM_WORLD);
    });
  }
  {
    // Received as other datatypes of the same signature: one element of a contiguous type of the
    // random type resized to a wider extent (elements spaced 24 bytes further apart), one per
    // peer, where the senders send counts of the random type itself.
    Trial trial(context, "MPI_Alltoallw into signature-equal types" + on, seed + 19);
    MPI_Datatype wider;
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(T, &lb, &extent);
    MPI_Type_create_resized(T, lb, extent + 24, &wider);
    std::vector<MPI_Datatype> send_types(static_cast<std::size_t>(n), T), receive_types;
    std::vector<int> sdispls, rdispls, ones(static_cast<std::size_t>(n), 1), unused;
    const std::vector<Segment> sent = spaced(pair_counts, T, t.extent, &unused);
    std::vector<Segment> received;
    std::int64_t at = 0;
    for (int i = 0; i < n; ++i) {
      MPI_Datatype run;
      MPI_Type_contiguous(pair_counts[static_cast<std::size_t>(i)], wider, &run);
      MPI_Type_commit(&run);
      receive_types.push_back(run);
      received.push_back({1, run, at});
      rdispls.push_back(static_cast<int>(at));
      sdispls.push_back(static_cast<int>(sent[static_cast<std::size_t>(i)].displacement));
      at += (pair_counts[static_cast<std::size_t>(i)] + 1) * (extent + 24);
    }
    trial.add(sent);
    trial.add(received);
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Alltoallw, b[0], pair_counts.data(), sdispls.data(), send_types.data(), b[1], ones.data(),
                  rdispls.data(), receive_types.data(), MPI_COMM_WORLD);
    });
    for (MPI_Datatype& type : receive_types) MPI_Type_free(&type);
    MPI_Type_free(&wider);
  }
#if GDDT_HAVE_MPI_Alltoallw_c && GDDT_HAVE_MPI_Bcast_c
  {
    // MPI-4's large-count forms: MPI_Count counts, MPI_Aint displacements.
    Trial trial(context, "MPI_Alltoallw_c" + on, seed + 17);
    std::vector<int> unused;
    const std::vector<Segment> segments = spaced(pair_counts, T, t.extent, &unused);
    std::vector<MPI_Count> counts_c(pair_counts.begin(), pair_counts.end());
    std::vector<MPI_Aint> displs_c;
    for (const Segment& segment : segments) displs_c.push_back(segment.displacement);
    std::vector<MPI_Datatype> types(static_cast<std::size_t>(n), T);
    trial.add(segments);
    trial.add(segments);
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Alltoallw_c, b[0], counts_c.data(), displs_c.data(), types.data(), b[1], counts_c.data(),
                  displs_c.data(), types.data(), MPI_COMM_WORLD);
    });
  }
  {
    Trial trial(context, "MPI_Bcast_c" + on, seed + 18);
    trial.add({{count, T, 0}});
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Bcast_c, b[0], MPI_Count{count}, T, n - 1, MPI_COMM_WORLD);
    });
  }
#endif
  if (ring != MPI_COMM_NULL) {
    Trial trial(context, "MPI_Neighbor_alltoallw on a ring" + on, seed + 12);
    std::vector<int> two(2, count), unused;
    const std::vector<Segment> segments = spaced(two, T, t.extent, &unused);
    const MPI_Aint displs_bytes[] = {segments[0].displacement, segments[1].displacement};
    const MPI_Datatype types[] = {T, T};
    trial.add(segments);
    trial.add(segments);
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Neighbor_alltoallw, b[0], two.data(), displs_bytes, types, b[1], two.data(), displs_bytes,
                  types, ring);
    });
  }
  if (ring != MPI_COMM_NULL) {
    Trial trial(context, "MPI_Neighbor_allgather on a ring" + on, seed + 13);
    trial.add({{count, T, 0}});
    trial.add({{count, T, 0}, {count, T, count * t.extent}});
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Neighbor_allgather, b[0], count, T, b[1], count, T, ring);
    });
  }
  {
    Trial trial(context, "MPI_Ibcast + MPI_Wait" + on, seed + 14);
    trial.add({{count, T, 0}});
    trial.run([&](bool ref, const std::vector<void*>& b) {
      MPI_Request request;
      int rc = CALL(ref, MPI_Ibcast, b[0], count, T, 0, MPI_COMM_WORLD, &request);
      return rc != MPI_SUCCESS ? rc : CALL(ref, MPI_Wait, &request, MPI_STATUS_IGNORE);
    });
  }
  {
    Trial trial(context, "MPI_Ialltoallv + MPI_Iallgather, MPI_Waitall" + on, seed + 15);
    std::vector<int> sdispls, rdispls;
    trial.add(spaced(pair_counts, T, t.extent, &sdispls));
    trial.add(spaced(pair_counts, T, t.extent, &rdispls));
    std::vector<Segment> blocks;
    for (int i = 0; i < n; ++i) blocks.push_back({count, T, i * count * t.extent});
    trial.add({{count, T, 0}});
    trial.add(blocks);
    trial.run([&](bool ref, const std::vector<void*>& b) {
      MPI_Request requests[2];
      int rc = CALL(ref, MPI_Ialltoallv, b[0], pair_counts.data(), sdispls.data(), T, b[1], pair_counts.data(),
                    rdispls.data(), T, MPI_COMM_WORLD, &requests[0]);
      if (rc == MPI_SUCCESS)
        rc = CALL(ref, MPI_Iallgather, b[2], count, T, b[3], count, T, MPI_COMM_WORLD, &requests[1]);
      return rc != MPI_SUCCESS ? rc : CALL(ref, MPI_Waitall, 2, requests, MPI_STATUSES_IGNORE);
    });
  }
#if GDDT_HAVE_MPI_Bcast_init && GDDT_HAVE_MPI_Alltoallw_init
  {
    // Started twice: the second start must send what the buffer holds then.
    Trial trial(context, "MPI_Bcast_init started twice" + on, seed + 16);
    trial.add({{count, T, 0}});
    trial.add({{count, T, 0}});
    trial.run([&](bool ref, const std::vector<void*>& b) {
      MPI_Request request;
      int rc = CALL(ref, MPI_Bcast_init, b[0], count, T, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
      if (rc == MPI_SUCCESS) rc = CALL(ref, MPI_Start, &request);
      if (rc == MPI_SUCCESS) rc = CALL(ref, MPI_Wait, &request, MPI_STATUS_IGNORE);
      // Rank 0 now broadcasts its second buffer's bytes: copied over with a byte-type Sendrecv.
      if (rc == MPI_SUCCESS && context.rank == 0)
        rc = CALL(ref, MPI_Sendrecv, b[1], count, T, 0, 7, b[0], count, T, 0, 7, MPI_COMM_SELF, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS) rc = CALL(ref, MPI_Start, &request);
      if (rc == MPI_SUCCESS) rc = CALL(ref, MPI_Wait, &request, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS) rc = CALL(ref, MPI_Request_free, &request);
      return rc;
    });
  }
#endif
}

// A user-defined operation: the sum of MPI_INT elements, for any datatype made of them (the
// predefined operations take predefined datatypes only).
void add_ints(void* in, void* inout, int* len, MPI_Datatype* datatype) {
  int size = 0;
  MPI_Type_size(*datatype, &size);
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(*datatype, &lb, &extent);
  // Only the vector(3, 2, 5) of MPI_INT below and MPI_INT reach it.
  const bool vector = size != static_cast<int>(sizeof(int));
  for (int e = 0; e < *len; ++e) {
    for (int k = 0; k < (vector ? 6 : 1); ++k) {
      const std::int64_t at = e * extent + (vector ? (k / 2 * 5 + k % 2) * 4 : 0);
      int a = 0, b = 0;
      std::memcpy(&a, static_cast<char*>(in) + at, 4);
      std::memcpy(&b, static_cast<char*>(inout) + at, 4);
      b += a;
      std::memcpy(static_cast<char*>(inout) + at, &b, 4);
    }
  }
}

// Reductions: predefined operations over MPI_INT, a user-defined one over a vector of MPI_INT
// (gaps between blocks).
void reduce(const Context& context, MPI_Datatype T, const std::string& name, int count, std::uint64_t seed,
            const std::vector<MPI_Op>& ops) {
  const int n = context.size, rank = context.rank;
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(T, &lb, &extent);
  const std::string on = " of " + std::to_string(count) + " x " + name;
  for (const MPI_Op op : ops) {
    for (int root = 0; root < n; ++root) {
      Trial trial(context, "MPI_Reduce" + on, seed + 20);
      trial.add({{count, T, 0}}, true);
      trial.add({{count, T, 0}}, true);
      trial.run([&](bool ref, const std::vector<void*>& b) {
        return CALL(ref, MPI_Reduce, b[0], b[1], count, T, op, root, MPI_COMM_WORLD);
      });
    }
    {
      Trial trial(context, "MPI_Allreduce" + on, seed + 21);
      trial.add({{count, T, 0}}, true);
      trial.add({{count, T, 0}}, true);
      trial.run([&](bool ref, const std::vector<void*>& b) {
        return CALL(ref, MPI_Allreduce, b[0], b[1], count, T, op, MPI_COMM_WORLD);
      });
    }
    {
      Trial trial(context, "MPI_Allreduce in place" + on, seed + 22);
      trial.add({{count, T, 0}}, true);
      trial.run([&](bool ref, const std::vector<void*>& b) {
        return CALL(ref, MPI_Allreduce, MPI_IN_PLACE, b[0], count, T, op, MPI_COMM_WORLD);
      });
    }
    {
      Trial trial(context, "MPI_Iallreduce + MPI_Test" + on, seed + 23);
      trial.add({{count, T, 0}}, true);
      trial.add({{count, T, 0}}, true);
      trial.run([&](bool ref, const std::vector<void*>& b) {
        MPI_Request request;
        int rc = CALL(ref, MPI_Iallreduce, b[0], b[1], count, T, op, MPI_COMM_WORLD, &request);
        for (int done = 0; rc == MPI_SUCCESS && !done;) rc = CALL(ref, MPI_Test, &request, &done, MPI_STATUS_IGNORE);
        return rc;
      });
    }
    {
      Trial trial(context, "MPI_Reduce_scatter_block" + on, seed + 24);
      std::vector<Segment> blocks;
      for (int i = 0; i < n; ++i) blocks.push_back({count, T, i * count * extent});
      trial.add(blocks, true);
      trial.add({{count, T, 0}}, true);
      trial.run([&](bool ref, const std::vector<void*>& b) {
        return CALL(ref, MPI_Reduce_scatter_block, b[0], b[1], count, T, op, MPI_COMM_WORLD);
      });
    }
    {
      Trial trial(context, "MPI_Reduce_scatter" + on, seed + 25);
      std::vector<int> counts(static_cast<std::size_t>(n));
      int total = 0;
      for (int i = 0; i < n; ++i) total += counts[static_cast<std::size_t>(i)] = count + i % 2;
      trial.add({{total, T, 0}}, true);
      trial.add({{counts[static_cast<std::size_t>(rank)], T, 0}}, true);
      trial.run([&](bool ref, const std::vector<void*>& b) {
        return CALL(ref, MPI_Reduce_scatter, b[0], b[1], counts.data(), T, op, MPI_COMM_WORLD);
      });
    }
    for (const bool exclusive : {false, true}) {
      Trial trial(context, (exclusive ? "MPI_Exscan" : "MPI_Scan") + on, seed + 26);
      trial.add({{count, T, 0}}, true);
      trial.add({{count, T, 0}}, true);
      trial.run([&](bool ref, const std::vector<void*>& b) {
        return exclusive ? CALL(ref, MPI_Exscan, b[0], b[1], count, T, op, MPI_COMM_WORLD)
                         : CALL(ref, MPI_Scan, b[0], b[1], count, T, op, MPI_COMM_WORLD);
      });
    }
    {
      Trial trial(context, "MPI_Reduce_local" + on, seed + 27);
      trial.add({{count, T, 0}}, true);
      trial.add({{count, T, 0}}, true);
      trial.run(
          [&](bool ref, const std::vector<void*>& b) { return CALL(ref, MPI_Reduce_local, b[0], b[1], count, T, op); });
    }
  }
}

// Collectives between the two halves of the world (an intercommunicator): a broadcast from rank 0
// of the lower half to every rank of the upper half, and an allgather across the halves, with a
// vector type of gaps.
void intercommunicator(const Context& context) {
  if (context.size < 2) return;
  const bool lower = context.rank < context.size / 2;
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, lower ? 0 : 1, context.rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, lower ? context.size / 2 : 0, 77, &inter);
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  int remote = 0, rank_in_half = 0;
  MPI_Comm_remote_size(inter, &remote);
  MPI_Comm_rank(half, &rank_in_half);
  MPI_Datatype vector;
  MPI_Type_vector(5, 2, 3, MPI_INT, &vector);
  MPI_Type_commit(&vector);
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(vector, &lb, &extent);
  {
    Trial trial(context, "MPI_Bcast on an intercommunicator", context.seed + 40);
    trial.add({{3, vector, 0}});
    const int root = lower ? (rank_in_half == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    trial.run(
        [&](bool ref, const std::vector<void*>& b) { return CALL(ref, MPI_Bcast, b[0], 3, vector, root, inter); });
  }
  {
    Trial trial(context, "MPI_Allgather on an intercommunicator", context.seed + 41);
    std::vector<Segment> blocks;
    for (int i = 0; i < remote; ++i) blocks.push_back({2, vector, i * 2 * extent});
    trial.add({{2, vector, 0}});
    trial.add(blocks);
    trial.run([&](bool ref, const std::vector<void*>& b) {
      return CALL(ref, MPI_Allgather, b[0], 2, vector, b[1], 2, vector, inter);
    });
  }
  MPI_Type_free(&vector);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

// Erroneous calls give the library's error class through gddt too: a root past the group, a
// negative count, a datatype that is not committed, no operation. (A null buffer with elements is
// left out: Open MPI 4.1's own MPI_Allgather crashes on it.)
void bad_arguments(const Context& context) {
  gddt_test::Buffer buffer(context.memory, 64 * sizeof(int));
  int* data = reinterpret_cast<int*>(buffer.data());
  MPI_Datatype uncommitted;
  MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);
  const std::vector<trial::ErroneousCall> calls = {
      {"MPI_Bcast to a root past the group",
       [&](bool ref) { return CALL(ref, MPI_Bcast, data, 4, MPI_INT, context.size, MPI_COMM_WORLD); }},
      {"MPI_Allgather of a negative count",
       [&](bool ref) { return CALL(ref, MPI_Allgather, data, -1, MPI_INT, data + 32, 4, MPI_INT, MPI_COMM_WORLD); }},
      {"MPI_Bcast of a datatype not committed",
       [&](bool ref) { return CALL(ref, MPI_Bcast, data, 1, uncommitted, 0, MPI_COMM_WORLD); }},
      {"MPI_Reduce with MPI_OP_NULL",
       [&](bool ref) { return CALL(ref, MPI_Reduce, data, data + 32, 4, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD); }},
  };
  trial::expect_library_classes(calls);
  MPI_Type_free(&uncommitted);
}

}  // namespace
}  // namespace gddt_test::collective

int main(int argc, char** argv) {
  using namespace gddt_test::collective;
  using gddt_test::p2p::Context;
  using gddt_test::trial::counter_value;
  using gddt_test::trial::random_type;
  gddt_test::p2p::Suite suite(&argc, &argv, "collectives");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm ring = MPI_COMM_NULL;
  {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int periodic = 1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periodic, 0, &ring);
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
  }
  const long long stand_ins_before = gddt_test::p2p::counter_value("collective.stand-ins");
  const long long own_blocks_before = gddt_test::p2p::counter_value("collective.own-blocks");
  suite.run("random_types", [ring](const Context& context) {
    const long types = context.messages > 0 ? context.messages : kDefaultTypes;
    int tested = 0;
    for (int index = 0; index < types; ++index) {
      Types t;
      if (!random_type(context, index, &t)) continue;
      ++tested;
      for (int count : {1, 3})
        move_data(context, t, count, gddt_test::p2p::mix_seed(context.seed, index * 8 + count), ring);
      MPI_Type_free(&t.datatype);
    }
    expect(tested > 0, "some random types were not empty");
    gddt_test::p2p::note(std::to_string(tested) + " random types of " + std::to_string(types) + " tested");
  });
  suite.run("reductions", [](const Context& context) {
    MPI_Datatype vector;
    MPI_Type_vector(3, 2, 5, MPI_INT, &vector);
    MPI_Type_commit(&vector);
    MPI_Op sum;
    MPI_Op_create(add_ints, 1, &sum);
    for (int count : {1, 7, 1000}) {
      reduce(context, vector, "vector(3, 2, 5) of MPI_INT", count, gddt_test::p2p::mix_seed(context.seed, count),
             {sum});
      reduce(context, MPI_INT, "MPI_INT", count, gddt_test::p2p::mix_seed(context.seed, count + 1),
             {MPI_SUM, MPI_MAX, sum});
    }
    MPI_Op_free(&sum);
    MPI_Type_free(&vector);
  });
  suite.run("intercommunicator", intercommunicator);
  suite.run("bad_arguments", bad_arguments);
  suite.run("gddt_staged_the_buffers", [stand_ins_before, own_blocks_before](const Context& context) {
    const bool staged = context.memory == gddt_test::MemoryKind::kDevice || getenv("GDDT_COLLECTIVE_HOST") != nullptr;
    if (!staged) return;
    const long long stand_ins = gddt_test::p2p::counter_value("collective.stand-ins");
    expect(stand_ins > stand_ins_before, "gddt's collective.stand-ins counter grew (" + std::to_string(stand_ins) + ")");
    // The random types' MPI_Alltoallv and MPI_Alltoallw on packed bytes: gddt moved the own blocks.
    // (GDDT_COLLECTIVE_PACKED off, in any of the spellings gddt's settings take, stages without them.)
    if (const char* packed = getenv("GDDT_COLLECTIVE_PACKED")) {
      std::string word(packed);
      for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (word == "0" || word == "false" || word == "no" || word == "off") return;
    }
    const long long own_blocks = gddt_test::p2p::counter_value("collective.own-blocks");
    expect(own_blocks > own_blocks_before,
           "gddt's collective.own-blocks counter grew (" + std::to_string(own_blocks) + ")");
  });
  if (ring != MPI_COMM_NULL) MPI_Comm_free(&ring);
  return suite.finish();
}
