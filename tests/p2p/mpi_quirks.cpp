#include "mpi_quirks.hpp"

#include <mpi.h>

#include <vector>

namespace gddt_test::p2p {
namespace {

bool is_proc_null_status(const MPI_Status& status) {
  return status.MPI_SOURCE == MPI_PROC_NULL && status.MPI_TAG == MPI_ANY_TAG;
}

int world_handler_calls = 0;

void count_world_error(MPI_Comm*, int*, ...) { ++world_handler_calls; }

// Truncates a message to this process on a communicator that returns errors.
bool wait_errors_reach_world() {
  WorldErrorCounter counter;
  MPI_Comm self;
  PMPI_Comm_dup(MPI_COMM_SELF, &self);
  PMPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);

  int sent[2] = {1, 2};
  int received = 0;
  MPI_Request requests[2];
  // Sent before the receive is posted: MPICH 4.0 goes wrong on this path only.
  PMPI_Isend(sent, 2, MPI_INT, 0, 0, self, &requests[1]);
  PMPI_Irecv(&received, 1, MPI_INT, 0, 0, self, &requests[0]);
  PMPI_Wait(&requests[1], MPI_STATUS_IGNORE);
  PMPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  PMPI_Comm_free(&self);
  return counter.calls() > 0;
}

// Runs a two-rank probe on a private communicator that returns errors: `probe(comm, rank)`
// answers on rank 1 whether the library misbehaved, and every rank learns the answer.
template <typename Probe>
bool rank_1_observes(Probe&& probe) {
  MPI_Comm comm;
  PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
  PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  int observed = probe(comm, rank) ? 1 : 0;
  PMPI_Bcast(&observed, 1, MPI_INT, 1, comm);
  PMPI_Comm_free(&comm);
  return observed != 0;
}

// Rank 0 sends 1 MiB of bytes, rank 1 receives them into a 1,000,000-byte contiguous buffer
// that has a guard area behind it: was the guard written?
bool truncation_overruns() {
  return rank_1_observes([](MPI_Comm comm, int rank) {
    const int sent = 1 << 20, posted = 1000000;
    if (rank == 0) {
      std::vector<char> data(sent, 1);
      PMPI_Send(data.data(), sent, MPI_BYTE, 1, 0, comm);
    } else if (rank == 1) {
      std::vector<char> buffer(2 * sent, 0);
      PMPI_Recv(buffer.data(), posted, MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
      for (std::size_t i = posted; i < buffer.size(); ++i)
        if (buffer[i] != 0) return true;
    }
    return false;
  });
}

// Rank 0 sends 16 KiB of MPI_PACKED data to rank 1, which receives it as (int, double)
// structs: did that fail?
bool packed_into_mixed_struct_fails() {
  return rank_1_observes([](MPI_Comm comm, int rank) {
    const int structs = 1400;
    const int packed_bytes = structs * 12;
    bool failed = false;
    if (rank == 0) {
      std::vector<char> packed(packed_bytes);
      PMPI_Send(packed.data(), packed_bytes, MPI_PACKED, 1, 0, comm);
    } else if (rank == 1) {
      const int blocks[] = {1, 1};
      const MPI_Aint displacements[] = {0, 4};
      const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};
      MPI_Datatype pair, packed_pair;
      PMPI_Type_create_struct(2, blocks, displacements, types, &pair);
      PMPI_Type_create_resized(pair, 0, 12, &packed_pair);
      PMPI_Type_commit(&packed_pair);
      std::vector<char> received(packed_bytes);
      failed = PMPI_Recv(received.data(), structs, packed_pair, 0, 0, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS;
      PMPI_Type_free(&packed_pair);
      PMPI_Type_free(&pair);
    }
    return failed;
  });
}

// A message to this process itself, longer than the wildcard receive posted for it: did the
// wait report success?
bool self_truncation_unreported() {
  MPI_Comm self;
  PMPI_Comm_dup(MPI_COMM_SELF, &self);
  PMPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
  MPI_Datatype gapped;
  PMPI_Type_vector(2, 1, 2, MPI_INT, &gapped);
  PMPI_Type_commit(&gapped);
  int sent[8] = {}, received[4] = {};
  MPI_Request requests[2];
  PMPI_Irecv(received, 1, gapped, MPI_ANY_SOURCE, MPI_ANY_TAG, self, &requests[0]);
  PMPI_Isend(sent, 8, MPI_INT, 0, 0, self, &requests[1]);
  const int rc = PMPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  PMPI_Wait(&requests[1], MPI_STATUS_IGNORE);
  PMPI_Type_free(&gapped);
  PMPI_Comm_free(&self);
  return rc == MPI_SUCCESS;
}

MpiQuirks& quirks() {
  static MpiQuirks measured;
  return measured;
}

}  // namespace

void measure_mpi_quirks() {
  MpiQuirks& measured = quirks();
  int buffer = 0;
  MPI_Request request;
  MPI_Status status;

  PMPI_Irecv(&buffer, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &request);
  PMPI_Wait(&request, &status);
  measured.proc_null_irecv_status = !is_proc_null_status(status);

  PMPI_Recv_init(&buffer, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_SELF, &request);
  PMPI_Start(&request);
  PMPI_Wait(&request, &status);
  PMPI_Request_free(&request);
  measured.proc_null_persistent_status = !is_proc_null_status(status);

  measured.request_errors_on_world = wait_errors_reach_world();
  measured.packed_into_mixed_struct = packed_into_mixed_struct_fails();
  measured.truncation_overruns_contiguous = truncation_overruns();
  measured.self_truncation_unreported = self_truncation_unreported();
}

bool waitall_frees_pending_receives(MPI_Datatype strided, int strided_sent, MPI_Datatype gapped, int gapped_posted) {
  MPI_Comm comm;
  PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
  PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  // Both types start at their lower bound 0, as the check's do.
  MPI_Aint lb = 0, strided_extent = 0, gapped_extent = 0;
  PMPI_Type_get_extent(strided, &lb, &strided_extent);
  PMPI_Type_get_extent(gapped, &lb, &gapped_extent);
  // Messages 0-2 and 4 are truncated; 3 and 5 fit.
  const bool fits[] = {false, false, false, true, false, true};
  const std::size_t gapped_bytes = static_cast<std::size_t>(gapped_posted) * static_cast<std::size_t>(gapped_extent);
  const std::size_t strided_bytes = static_cast<std::size_t>(strided_sent) * static_cast<std::size_t>(strided_extent);
  std::vector<std::vector<char>> sent, received;
  std::vector<MPI_Request> sends(6);
  for (int tag = 0; tag < 6; ++tag) {
    sent.emplace_back(fits[tag] ? gapped_bytes : strided_bytes, 1);
    received.emplace_back(gapped_bytes, 0);
    PMPI_Isend(sent.back().data(), fits[tag] ? gapped_posted : strided_sent, fits[tag] ? gapped : strided, next, tag,
               comm, &sends[tag]);
  }
  PMPI_Recv(received[0].data(), gapped_posted, gapped, prev, 0, comm, MPI_STATUS_IGNORE);
  MPI_Request request;
  PMPI_Irecv(received[1].data(), gapped_posted, gapped, prev, 1, comm, &request);
  PMPI_Wait(&request, MPI_STATUS_IGNORE);
  PMPI_Irecv(received[2].data(), gapped_posted, gapped, prev, 2, comm, &request);
  PMPI_Waitall(1, &request, MPI_STATUSES_IGNORE);
  MPI_Request together[3];
  MPI_Status statuses[3];
  for (int k = 0; k < 3; ++k) {
    PMPI_Irecv(received[3 + k].data(), gapped_posted, gapped, prev, 3 + k, comm, &together[k]);
  }
  int freed_pending = 0;
  if (PMPI_Waitall(3, together, statuses) == MPI_ERR_IN_STATUS) {
    for (int k : {0, 2}) {
      if (statuses[k].MPI_ERROR != MPI_ERR_PENDING) continue;
      if (together[k] == MPI_REQUEST_NULL) {
        freed_pending = 1;
      } else {
        PMPI_Wait(&together[k], MPI_STATUS_IGNORE);
      }
    }
  }
  PMPI_Waitall(6, sends.data(), MPI_STATUSES_IGNORE);
  PMPI_Allreduce(MPI_IN_PLACE, &freed_pending, 1, MPI_INT, MPI_MAX, comm);
  PMPI_Comm_free(&comm);
  return freed_pending != 0;
}

WorldErrorCounter::WorldErrorCounter() {
  world_handler_calls = 0;
  PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &previous_);
  PMPI_Comm_create_errhandler(count_world_error, &counting_);
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, counting_);
}

WorldErrorCounter::~WorldErrorCounter() {
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, previous_);
  PMPI_Errhandler_free(&counting_);
  PMPI_Errhandler_free(&previous_);
}

int WorldErrorCounter::calls() const { return world_handler_calls; }

const MpiQuirks& mpi_quirks() { return quirks(); }

}  // namespace gddt_test::p2p
