// Known departures of the MPI library underneath from the standard, measured at run time by
// calling it directly through PMPI_* (so gddt, when loaded, is bypassed). A check that the
// library itself cannot pass is reported as a note instead of a failure, or a random test stays
// clear of it, when, and only when, the library is measured to fail it too: gddt must be no
// worse than the MPI below it.
#pragma once

#include <mpi.h>

namespace gddt_test::p2p {

struct MpiQuirks {
  // MPI_Irecv from MPI_PROC_NULL completes with a wrong status source and tag
  // (MPICH before 4.2, pmodels/mpich#6805).
  bool proc_null_irecv_status = false;
  // A persistent receive from MPI_PROC_NULL completes with a wrong status source.
  bool proc_null_persistent_status = false;
  // An error found by MPI_Wait/MPI_Waitall is raised on MPI_COMM_WORLD's error handler rather
  // than on the handler of the request's communicator.
  bool request_errors_on_world = false;
  // A large message of MPI_PACKED data cannot be received into a struct of different basic
  // types: it fails with MPI_ERR_TRUNCATE, so the library's own MPI_Bsend of such data fails
  // (MPICH 4.0 beyond about 8 KiB).
  bool packed_into_mixed_struct = false;
  // A large message truncated into a contiguous receive buffer is written past the buffer's
  // end (Open MPI 4.1's shared-memory single-copy path). Reported with the other quirks: the
  // truncation case must pass all the same, since gddt's staged receives are not contiguous
  // receives there.
  bool truncation_overruns_contiguous = false;
  // A receive posted before a longer message from the process itself completes as a success
  // (Open MPI 4.1).
  bool self_truncation_unreported = false;
};

// Whether the library itself, given the truncation check's sequence on host memory (three
// truncated receives of `strided_sent` elements of `strided` into `gapped_posted` elements of
// `gapped`, by MPI_Recv, MPI_Wait and MPI_Waitall, then three receives in one MPI_Waitall with
// the middle one truncated; `gapped` messages fit), marks a receive beside the truncated one
// MPI_ERR_PENDING yet frees its request (Open MPI 5 + UCX with 1 MiB messages). Collective over MPI_COMM_WORLD,
// ranks in a ring; asked only where gddt was seen doing so, since truncated large messages
// upset some libraries under MPI_THREAD_MULTIPLE.
bool waitall_frees_pending_receives(MPI_Datatype strided, int strided_sent, MPI_Datatype gapped, int gapped_posted);

// Measures the quirks (collective over MPI_COMM_WORLD; the Suite calls it once at start).
void measure_mpi_quirks();

// The quirks measured.
const MpiQuirks& mpi_quirks();

// While alive, MPI_COMM_WORLD's error handler only counts its calls (one instance at a time).
class WorldErrorCounter {
 public:
  WorldErrorCounter();
  ~WorldErrorCounter();
  WorldErrorCounter(const WorldErrorCounter&) = delete;
  WorldErrorCounter& operator=(const WorldErrorCounter&) = delete;
  int calls() const;

 private:
  MPI_Errhandler previous_;
  MPI_Errhandler counting_;
};

}  // namespace gddt_test::p2p
