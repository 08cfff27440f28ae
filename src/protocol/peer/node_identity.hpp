// Which processes share this process's node, as the peer protocol sees it: those that register in
// one node table (node_table.cpp), between which messages may leave the MPI library for gddt's own
// planes and CUDA IPC. By default that is the launcher's node. GDDT_NODE_SPLIT=N cuts it into runs
// of N consecutive world ranks, so that a job on one machine behaves as one spread over nodes:
// ranks of other runs are then remote to gddt, and their messages take the library's path between
// nodes (issue 46; usage.md, "Testing a multi-node job on one machine").
#pragma once

#include <string>

namespace gddt::protocol::node_identity {

struct Identity {
  // Processes expected in the node's table; 0 where gddt cannot tell (the launcher does not say),
  // and then the peer protocol stays off.
  int local_size = 0;
  // Appended to the name of the launcher's node table: tells apart the nodes GDDT_NODE_SPLIT draws
  // on one machine ("" without it).
  std::string table_suffix;
};

// Decided before MPI_Init, from what the launcher put in the environment (MPI cannot be asked yet).
Identity identity();

}  // namespace gddt::protocol::node_identity
