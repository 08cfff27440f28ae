// The device API's ring protocol and host proxy without a GPU: host threads
// play the kernel's part through the same protocol code kernels run
// (gddt/gddt_device_core.h), the proxy runs on its own thread or inside this
// program's MPI calls (GDDT_DEVICE_PROXY), and every byte received is checked
// against the MPI library's own MPI_Pack/MPI_Unpack.
//
//   device_api_test [--funneled] [all|timeout]
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "own_staging_cases.hpp"

using namespace device_api_test;

namespace {

void ping_pong(const gddt_device_comm_t &comm, const TypeCase &c, int count) {
  if (nranks < 2 || rank > 1) return;
  std::vector<unsigned char> buf = buffer_for(c.type, count, rank == 0 ? 5 : -1);
  const int64_t bytes = static_cast<int64_t>(count) * type_size(c.type);
  on_device([&] {
    gddt_device_request_t r;
    gddt_device_status_t st;
    if (rank == 0) {
      CHECK_RC(gddt::device::start_p2p(kThread, false, buf.data(), count, c.device, 1, 3, comm, &r), MPI_SUCCESS);
      CHECK_RC(gddt::device::wait(kThread, comm, &r, &st), MPI_SUCCESS);
      std::memset(buf.data(), 0xEE, buf.size());
      CHECK_RC(gddt::device::start_p2p(kThread, true, buf.data(), count, c.device, 1, 4, comm, &r), MPI_SUCCESS);
      CHECK_RC(gddt::device::wait(kThread, comm, &r, &st), MPI_SUCCESS);
      CHECK(st.source == 1 && st.tag == 4 && st.bytes == bytes);
      CHECK(r.ticket == GDDT_DEVICE_REQUEST_NULL_TICKET);
    } else {
      CHECK_RC(gddt::device::start_p2p(kThread, true, buf.data(), count, c.device, 0, 3, comm, &r), MPI_SUCCESS);
      CHECK_RC(gddt::device::wait(kThread, comm, &r, &st), MPI_SUCCESS);
      CHECK_RC(gddt::device::start_p2p(kThread, false, buf.data(), count, c.device, 0, 4, comm, &r), MPI_SUCCESS);
      CHECK_RC(gddt::device::wait(kThread, comm, &r, &st), MPI_SUCCESS);
    }
  });
  if (rank == 0) CHECK(buf == expected_for(c.type, count, 5));
}

void ring_exchange(const gddt_device_comm_t &comm, const TypeCase &c, int count) {
  const int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
  std::vector<unsigned char> out = buffer_for(c.type, count, rank), in = buffer_for(c.type, count, -1);
  on_device([&] {
    gddt_device_request_t r[2];
    gddt_device_status_t st[2];
    CHECK_RC(gddt::device::start_p2p(kThread, true, in.data(), count, c.device, left, 9, comm, &r[0]), MPI_SUCCESS);
    CHECK_RC(gddt::device::start_p2p(kThread, false, out.data(), count, c.device, right, 9, comm, &r[1]), MPI_SUCCESS);
    CHECK_RC(gddt::device::waitall(kThread, comm, 2, r, st), MPI_SUCCESS);
    CHECK(st[0].source == left);
  });
  CHECK(in == expected_for(c.type, count, left));
}

// A host rank receives a kernel's message with plain MPI_Recv, and the other
// way round.
void host_interop(const gddt_device_comm_t &comm, const TypeCase &c) {
  if (nranks < 2 || rank > 1) return;
  const int count = 3;
  std::vector<unsigned char> buf = buffer_for(c.type, count, rank == 0 ? 11 : -1);
  if (rank == 0) {
    on_device([&] {
      gddt_device_request_t r;
      CHECK_RC(gddt::device::start_p2p(kThread, false, buf.data(), count, c.device, 1, 21, comm, &r), MPI_SUCCESS);
      CHECK_RC(gddt::device::wait(kThread, comm, &r, nullptr), MPI_SUCCESS);
      std::memset(buf.data(), 0xEE, buf.size());
      CHECK_RC(gddt::device::start_p2p(kThread, true, buf.data(), count, c.device, 1, 22, comm, &r), MPI_SUCCESS);
      CHECK_RC(gddt::device::wait(kThread, comm, &r, nullptr), MPI_SUCCESS);
    });
    CHECK(buf == expected_for(c.type, count, 12));
  } else {
    MPI_Recv(buf.data(), count, c.type, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(buf == expected_for(c.type, count, 11));
    std::vector<unsigned char> out = buffer_for(c.type, count, 12);
    MPI_Send(out.data(), count, c.type, 0, 22, MPI_COMM_WORLD);
  }
}

void any_source(const gddt_device_comm_t &comm, const TypeCase &c) {
  const int count = 2;
  if (rank != 0) {
    std::vector<unsigned char> out = buffer_for(c.type, count, 40 + rank);
    on_device([&] {
      gddt_device_request_t r;
      CHECK_RC(gddt::device::start_p2p(kThread, false, out.data(), count, c.device, 0, 50 + rank, comm, &r),
               MPI_SUCCESS);
      CHECK_RC(gddt::device::wait(kThread, comm, &r, nullptr), MPI_SUCCESS);
    });
    return;
  }
  const int64_t bytes = count * type_size(c.type);
  for (int i = 1; i < nranks; ++i) {
    std::vector<unsigned char> in = buffer_for(c.type, count, -1);
    gddt_device_status_t st{};
    on_device([&] {
      gddt_device_request_t r;
      CHECK_RC(
          gddt::device::start_p2p(kThread, true, in.data(), count, c.device, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r),
          MPI_SUCCESS);
      CHECK_RC(gddt::device::wait(kThread, comm, &r, &st), MPI_SUCCESS);
    });
    CHECK(st.tag == 50 + st.source && st.bytes == bytes);
    CHECK(in == expected_for(c.type, count, 40 + st.source));
  }
}

// The ring full: rank 0 fills every slot with sends, a second thread's send
// waits for a slot until the first thread waits for its own.
void ring_full(const gddt_device_comm_t &comm, const TypeCase &c) {
  if (nranks < 2 || rank > 1) return;
  const int n = static_cast<int>(comm.ring.nslots);
  std::vector<std::vector<unsigned char>> bufs(n + 1);
  for (int i = 0; i <= n; ++i) bufs[i] = buffer_for(c.type, 1, rank == 0 ? 60 + i : -1);
  if (rank == 0) {
    std::atomic<bool> filled{false}, extra_done{false};
    on_device(2, [&](int who) {
      if (who == 0) {
        std::vector<gddt_device_request_t> r(n);
        for (int i = 0; i < n; ++i)
          CHECK_RC(gddt::device::start_p2p(kThread, false, bufs[i].data(), 1, c.device, 1, 100 + i, comm, &r[i]),
                   MPI_SUCCESS);
        filled = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        CHECK(!extra_done.load());  // flow control: no slot until these are waited for
        CHECK_RC(gddt::device::waitall(kThread, comm, n, r.data(), nullptr), MPI_SUCCESS);
      } else {
        while (!filled.load()) std::this_thread::yield();
        gddt_device_request_t r;
        CHECK_RC(gddt::device::start_p2p(kThread, false, bufs[n].data(), 1, c.device, 1, 100 + n, comm, &r),
                 MPI_SUCCESS);
        extra_done = true;
        CHECK_RC(gddt::device::wait(kThread, comm, &r, nullptr), MPI_SUCCESS);
      }
    });
    return;
  }
  on_device([&] {
    // In two halves: this rank's ring has no more slots than the sender's.
    for (int half = 0; half < 2; ++half) {
      std::vector<gddt_device_request_t> r;
      for (int i = half * (n / 2 + 1); i < (half + 1) * (n / 2 + 1) && i <= n; ++i) {
        r.emplace_back();
        CHECK_RC(gddt::device::start_p2p(kThread, true, bufs[i].data(), 1, c.device, 0, 100 + i, comm, &r.back()),
                 MPI_SUCCESS);
      }
      CHECK_RC(gddt::device::waitall(kThread, comm, static_cast<int>(r.size()), r.data(), nullptr), MPI_SUCCESS);
    }
  });
  for (int i = 0; i <= n; ++i) CHECK(bufs[i] == expected_for(c.type, 1, 60 + i));
}

// Several producer threads at once against several consumers, more of them than
// ring slots.
void producers(const gddt_device_comm_t &comm, const TypeCase &c) {
  if (nranks < 2 || rank > 1) return;
  const int threads = 6, messages = 20;
  // Buffers made here: the threads standing in for kernels make no MPI call.
  std::vector<std::vector<unsigned char>> bufs;
  for (int i = 0; i < threads * messages; ++i) bufs.push_back(buffer_for(c.type, 2, rank == 0 ? i : -1));
  on_device(threads, [&](int who) {
    for (int m = 0; m < messages; ++m) {
      gddt_device_request_t r;
      unsigned char *buf = bufs[who * messages + m].data();
      if (rank == 0) {
        CHECK_RC(gddt::device::start_p2p(kThread, false, buf, 2, c.device, 1, 200 + who, comm, &r), MPI_SUCCESS);
        CHECK_RC(gddt::device::wait(kThread, comm, &r, nullptr), MPI_SUCCESS);
      } else {
        CHECK_RC(gddt::device::start_p2p(kThread, true, buf, 2, c.device, 0, 200 + who, comm, &r), MPI_SUCCESS);
        int flag = 0;
        while (flag == 0) CHECK_RC(gddt::device::test(kThread, comm, &r, &flag, nullptr), MPI_SUCCESS);
      }
    }
  });
  if (rank == 1)
    for (int i = 0; i < threads * messages; ++i) CHECK(bufs[i] == expected_for(c.type, 2, i));
}

void truncation(const TypeCase &c) {
  if (nranks < 2) return;
  MPI_Comm returning;
  MPI_Comm_dup(MPI_COMM_WORLD, &returning);
  MPI_Comm_set_errhandler(returning, MPI_ERRORS_RETURN);
  // MPICH raises errors of MPI_Test on MPI_COMM_WORLD's handler, not the request's communicator's.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  gddt_device_comm_t comm;
  CHECK_RC(gddt_device_comm_create(returning, &comm), MPI_SUCCESS);
  std::vector<unsigned char> buf = buffer_for(c.type, 4, rank == 0 ? 70 : -1);
  const std::vector<unsigned char> poisoned = buf;
  if (rank <= 1)
    on_device([&] {
      gddt_device_request_t r;
      gddt_device_status_t st{};
      const bool receive = rank == 1;
      CHECK_RC(gddt::device::start_p2p(kThread, receive, buf.data(), receive ? 2 : 4, c.device, 1 - rank, 80, comm, &r),
               MPI_SUCCESS);
      CHECK_RC(gddt::device::wait(kThread, comm, &r, &st), receive ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    });
  if (rank == 1) CHECK(buf == poisoned);  // nothing unpacked
  CHECK_RC(gddt_device_comm_free(&comm), MPI_SUCCESS);
  MPI_Comm_free(&returning);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int self_errors = 0;
void count_self_error(MPI_Comm *, int *, ...) { ++self_errors; }

void argument_errors(const gddt_device_comm_t &comm, const TypeCase &c) {
  std::vector<unsigned char> buf = buffer_for(c.type, 1, 1);
  const int64_t big = comm.ring.nslots * static_cast<int64_t>(comm.ring.slot_bytes) / type_size(c.type) + 1;
  std::vector<unsigned char> huge = buffer_for(c.type, static_cast<int>(big), 1);
  on_device([&] {
    gddt_device_request_t r;
    gddt_device_status_t st;
    auto isend = [&](int64_t count, gddt_device_type_t type, int dest, int tag, const gddt_device_comm_t &on) {
      return gddt::device::start_p2p(kThread, false, buf.data(), count, type, dest, tag, on, &r);
    };
    CHECK_RC(isend(1, c.device, nranks, 0, comm), MPI_ERR_RANK);
    CHECK_RC(isend(1, c.device, -7, 0, comm), MPI_ERR_RANK);
    CHECK_RC(isend(1, c.device, MPI_ANY_SOURCE, 0, comm), MPI_ERR_RANK);
    CHECK_RC(isend(1, c.device, 0, -3, comm), MPI_ERR_TAG);
    CHECK_RC(isend(1, c.device, 0, MPI_ANY_TAG, comm), MPI_ERR_TAG);
    if (comm.tag_ub < 0x7fffffff) CHECK_RC(isend(1, c.device, 0, comm.tag_ub + 1, comm), MPI_ERR_TAG);
    CHECK_RC(isend(-1, c.device, 0, 0, comm), MPI_ERR_COUNT);
    CHECK_RC(isend(1, gddt_device_type_t{}, 0, 0, comm), MPI_ERR_TYPE);
    CHECK_RC(isend(1, c.device, 0, 0, gddt_device_comm_t{}), MPI_ERR_COMM);
    CHECK_RC(gddt::device::start_p2p(kThread, true, buf.data(), 1, c.device, nranks + 3, 0, comm, &r), MPI_ERR_RANK);
    CHECK_RC(gddt::device::allreduce(kThread, buf.data(), buf.data(), 1, 99, GDDT_DEVICE_SUM, comm), MPI_ERR_TYPE);
    CHECK_RC(gddt::device::allreduce(kThread, buf.data(), buf.data(), 1, GDDT_DEVICE_INT, 42, comm), MPI_ERR_OP);
    // MPI_PROC_NULL completes at once with MPI's status for it.
    CHECK_RC(isend(1, c.device, MPI_PROC_NULL, 0, comm), MPI_SUCCESS);
    CHECK_RC(gddt::device::wait(kThread, comm, &r, &st), MPI_SUCCESS);
    CHECK(st.source == MPI_PROC_NULL && st.tag == MPI_ANY_TAG && st.bytes == 0);
    // A handle whose entry the proxy does not know: the error comes back in the
    // completion.
    gddt_device_comm_t stale = comm;
    stale.index = 999;
    CHECK_RC(isend(1, c.device, 0, 0, stale), MPI_SUCCESS);
    CHECK_RC(gddt::device::wait(kThread, comm, &r, nullptr), MPI_ERR_COMM);
    gddt_device_type_t stale_type = c.device;
    stale_type.index = 999;
    CHECK_RC(gddt::device::start_p2p(kThread, false, huge.data(), big, stale_type, 0, 0, comm, &r), MPI_SUCCESS);
    CHECK_RC(gddt::device::wait(kThread, comm, &r, nullptr), MPI_ERR_TYPE);
  });
  // The host API's checks, each raised on MPI_COMM_SELF's error handler first, as MPI does for
  // calls without a valid communicator.
  MPI_Errhandler counting;
  MPI_Comm_create_errhandler(count_self_error, &counting);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, counting);
  gddt_device_comm_t dc;
  gddt_device_type_t dt;
  gddt_device_comm_t bogus{};
  bogus.index = 12345;
  gddt_device_type_t bogus_type{};
  bogus_type.index = 12345;
  const int raised_before = self_errors;
  CHECK_RC(gddt_device_comm_create(MPI_COMM_NULL, &dc), MPI_ERR_COMM);
  CHECK_RC(gddt_device_type_create(MPI_DATATYPE_NULL, &dt), MPI_ERR_TYPE);
  CHECK_RC(gddt_device_comm_free(&bogus), MPI_ERR_COMM);
  CHECK_RC(gddt_device_type_free(&bogus_type), MPI_ERR_TYPE);
  CHECK_RC(gddt_device_type_create(c.type, nullptr), MPI_ERR_ARG);
  CHECK_RC(self_errors - raised_before, 5);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&counting);
}

// Messages beyond the staging's capacity go direct: the proxy hands the user's
// buffer and datatype to gddt's point-to-point.
void direct(const gddt_device_comm_t &comm, const TypeCase &c) {
  if (nranks < 2 || rank > 1) return;
  const int count =
      static_cast<int>(comm.ring.nslots * static_cast<int64_t>(comm.ring.slot_bytes) / type_size(c.type) + 5);
  const long long before = counter("device.direct");
  std::vector<unsigned char> buf = buffer_for(c.type, count, rank == 0 ? 90 : -1);
  const int64_t bytes = static_cast<int64_t>(count) * type_size(c.type);
  on_device([&] {
    gddt_device_request_t r;
    gddt_device_status_t st{};
    CHECK_RC(gddt::device::start_p2p(kThread, rank == 1, buf.data(), count, c.device, 1 - rank, 91, comm, &r),
             MPI_SUCCESS);
    CHECK_RC(gddt::device::wait(kThread, comm, &r, &st), MPI_SUCCESS);
    if (rank == 1) CHECK(st.bytes == bytes && st.source == 0);
  });
  CHECK(counter("device.direct") == before + 1);
  if (rank == 1) CHECK(buf == expected_for(c.type, count, 90));
}


// Collectives on one communicator are issued in the same order on every rank
// (MPI's rule), so the two threads calling them at once use a communicator
// each.
void collectives(const gddt_device_comm_t &comm) {
  gddt_device_comm_t other;
  CHECK_RC(gddt_device_comm_create(MPI_COMM_WORLD, &other), MPI_SUCCESS);
  int ints[4] = {rank, 1, 2 * rank, -rank};
  double doubles[3] = {1.0 * rank, -1.0 * rank, 0.5};
  long long big[2] = {1LL << 40, rank};
  on_device(2, [&](int who) {
    if (who == 0) {
      CHECK_RC(gddt::device::barrier(kThread, comm), MPI_SUCCESS);
      CHECK_RC(gddt::device::allreduce(kThread, ints, ints, 4, GDDT_DEVICE_INT, GDDT_DEVICE_SUM, comm), MPI_SUCCESS);
      CHECK_RC(gddt::device::allreduce(kThread, nullptr, big, 2, GDDT_DEVICE_LONG_LONG, GDDT_DEVICE_MAX, comm),
               MPI_SUCCESS);
    } else {
      double out[3];
      CHECK_RC(gddt::device::allreduce(kThread, doubles, out, 3, GDDT_DEVICE_DOUBLE, GDDT_DEVICE_MAX, other),
               MPI_SUCCESS);
      CHECK(out[0] == nranks - 1 && out[1] == 0.0 && out[2] == 0.5);
    }
  });
  const int sum = nranks * (nranks - 1) / 2;
  CHECK(ints[0] == sum && ints[1] == nranks && ints[2] == 2 * sum && ints[3] == -sum);
  CHECK(big[0] == (1LL << 40) && big[1] == nranks - 1);
  CHECK_RC(gddt_device_comm_free(&other), MPI_SUCCESS);
}

// A receive that never matches: the kernel's wait gives up after
// GDDT_DEVICE_TIMEOUT with MPI_ERR_OTHER, and MPI_Finalize reports and cancels
// it.
void timeout(const gddt_device_comm_t &comm, const TypeCase &c) {
  if (rank != 0 || nranks < 2) return;
  std::vector<unsigned char> buf = buffer_for(c.type, 1, -1);
  on_device([&] {
    gddt_device_request_t r;
    CHECK_RC(gddt::device::start_p2p(kThread, true, buf.data(), 1, c.device, 1, 777, comm, &r), MPI_SUCCESS);
    CHECK_RC(gddt::device::wait(kThread, comm, &r, nullptr), MPI_ERR_OTHER);
  });
}

void step(const char *what) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::printf("ok %s\n", what);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
  bool funneled = false;
  std::string mode = "all";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--funneled") == 0) {
      funneled = true;
    } else {
      mode = argv[i];
    }
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  gddt_device_comm_t comm;
  // Every case below would wait on a communicator that does not exist.
  const int created = gddt_device_comm_create(MPI_COMM_WORLD, &comm);
  if (created != MPI_SUCCESS) {
    std::fprintf(stderr, "rank %d: gddt_device_comm_create returned %d: nothing can be tested\n", rank, created);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::vector<TypeCase> types = make_types();
  if (mode == "timeout") {
    timeout(comm, types[0]);
    step("timeout");
  } else {
    for (const TypeCase &c : types) {
      for (int count : {1, 3}) ping_pong(comm, c, count);
      ring_exchange(comm, c, 2);
      host_interop(comm, c);
      any_source(comm, c);
      step(c.name);
    }
    ring_full(comm, types[0]);
    step("ring full");
    producers(comm, types[3]);
    step("producers");
    truncation(types[1]);
    step("truncation");
    argument_errors(comm, types[2]);
    step("argument errors");
    direct(comm, types[0]);
    step("direct");
    for (const TypeCase &c : types) own_staging(comm, c);
    own_staging_beyond_ring(comm, types[0]);
    own_staging_truncated(types[1]);
    step("own staging");
    collectives(comm);
    step("barrier, allreduce");
  }
  for (TypeCase &c : types) {
    CHECK_RC(gddt_device_type_free(&c.device), MPI_SUCCESS);
    MPI_Type_free(&c.type);
  }
  CHECK_RC(gddt_device_comm_free(&comm), MPI_SUCCESS);
  int any = failures, total = 0;
  MPI_Allreduce(&any, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d failure(s)\n", total == 0 ? "PASS" : "FAIL", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
