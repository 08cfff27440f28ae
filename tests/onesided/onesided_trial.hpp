// One trial of the one-sided suite: every rank opens a window, accesses every rank's window
// (itself included) with one kind of operation under one synchronization mode while it stores into
// a slice of its own window that no one else touches, then reads every window back with gets. The
// trial runs twice, once through gddt (MPI_* on buffers of the run's memory kind) and once through
// the library alone (PMPI_* on host memory), and every byte both produced must be equal: the
// windows whole, origin, result and read-back buffers whole (margins and gaps included, results
// poisoned beforehand), results once where the epoch's synchronization (or request) completed them
// and again at the end.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../p2p/harness.hpp"
#include "onesided_types.hpp"

namespace gddt_test::onesided {

enum class Op { kPut, kGet, kAccumulate, kGetAccumulate, kFetchAndOp, kCompareAndSwap, kRput, kRget, kRaccumulate,
                kRgetAccumulate };
enum class Sync { kFence, kPscw, kLock, kLockShared, kLockAll, kFlush, kFlushAll, kFlushLocal, kFlushLocalAll,
                  kWinSync };
enum class Flavor { kCreate, kAllocate, kDynamic };

const char* op_name(Op op);
const char* sync_name(Sync sync);
const char* flavor_name(Flavor flavor);
// MPI_R* calls are only valid in passive-target epochs.
bool request_based(Op op);
bool passive(Sync sync);

struct Plan {
  Op op = Op::kPut;
  Sync sync = Sync::kFence;
  Flavor flavor = Flavor::kCreate;
  MPI_Op reduce = MPI_SUM;         // accumulating operations
  MPI_Datatype leaf = MPI_INT;     // MPI_Fetch_and_op, MPI_Compare_and_swap
  int disp_unit = 1;               // 1 for dynamic windows
  const TypeTriple* types = nullptr;
  bool plain_peers = false;  // every rank but 0 calls the library itself, as a process without gddt
  bool large_count = false;  // the _c forms, where the library has them
  std::uint64_t seed = 0;
  std::string describe() const;
};

// Every byte a run produced, named for the report.
using Record = std::vector<std::pair<std::string, std::vector<unsigned char>>>;

// Runs the trial on every rank through gddt or, for the reference, through the library alone.
Record run_trial(const p2p::Context& context, const Plan& plan, bool reference);

// Runs it both ways and records a failure for every difference.
void check_trial(const p2p::Context& context, const Plan& plan);

}  // namespace gddt_test::onesided
