#include "protocol/peer/node_identity.hpp"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>

#include "core/config.hpp"
#include "core/log.hpp"

namespace gddt::protocol::node_identity {

namespace {

// The first of `variables` the launcher set to a number of at least `least`; -1 where none is.
long launcher_number(std::initializer_list<const char*> variables, long least) {
  for (const char* variable : variables) {
    const char* text = std::getenv(variable);
    if (text == nullptr || *text == '\0') continue;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (*end == '\0' && value >= least) return value;
  }
  return -1;
}

}  // namespace

Identity identity() {
  Identity self;
  // Open MPI, MPICH's Hydra, PMI-1/2 launchers, Slurm.
  const long machine =
      launcher_number({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"}, 1);
  const auto split = static_cast<long>(std::min<std::uint64_t>(config::settings().node_split, 1L << 30));
  if (split == 0) {
    self.local_size = static_cast<int>(std::max(machine, 0L));
    return self;
  }
  const long rank = launcher_number({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}, 0);
  if (rank < 0) {
    // Without its rank a process cannot tell its run; leaving GDDT_NODE_SPLIT out instead would
    // pair processes the user asked to keep apart.
    GDDT_LOG(kWarn,
             "GDDT_NODE_SPLIT=%ld: the launcher does not say this process's world rank (OMPI_COMM_WORLD_RANK, "
             "PMI_RANK, PMIX_RANK, SLURM_PROCID), so the peer protocol is off",
             split);
    return self;
  }
  const long node = rank / split;
  long members = split;
  // The last run may be short; unknown sizes leave it expecting `split` (it then stays off the
  // protocol). A run crossing into another machine registers fewer processes in each machine's table:
  // those tables are sealed as the others are, and agree only communicators all of whose members
  // registered in them.
  if (const long size = launcher_number({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}, 1); size > 0)
    members = std::min(members, size - node * split);
  if (machine > 0) members = std::min(members, machine);
  self.local_size = static_cast<int>(std::max(members, 0L));
  self.table_suffix = "-split" + std::to_string(split) + "-" + std::to_string(node);
  GDDT_LOG(kInfo, "GDDT_NODE_SPLIT=%ld: world ranks %ld..%ld form this process's node", split, node * split,
           node * split + members - 1);
  return self;
}

}  // namespace gddt::protocol::node_identity
