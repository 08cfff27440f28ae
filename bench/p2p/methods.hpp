// The ways of moving one message that the benchmark compares. Each moves the case's data from
// this rank's send buffer to the peer's receive buffer; a send or receive is complete when it
// returns (the data is in place in the receive buffer, wherever that lives).
#pragma once

#include <memory>
#include <string>

#include <mpi.h>

#include "cases.hpp"
#include "options.hpp"
#include "workspace.hpp"

namespace gddt::bench {

// The point-to-point calls a method makes: the plain MPI_* ones, which gddt takes over when
// it is linked or preloaded, or the PMPI_* ones, which always reach the MPI library itself.
struct PointToPointCalls {
  int (*send)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
  int (*recv)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status*);
  int (*isend)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  int (*irecv)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  int (*waitall)(int, MPI_Request*, MPI_Status*);
};
const PointToPointCalls& user_calls();     // MPI_*
const PointToPointCalls& library_calls();  // PMPI_*

struct Link {
  MPI_Comm comm = MPI_COMM_WORLD;
  int peer = 0;
  std::size_t chunk = 0;  // pipeline chunk bytes; 0 = picked per message
  bool cuda_aware = false;  // the library takes device pointers (hand-packed sends device bytes)
};

class TransferMethod {
 public:
  virtual ~TransferMethod() = default;
  // True when the method moves the packed byte count as plain contiguous bytes (the ceiling
  // methods) instead of the datatype.
  virtual bool moves_contiguous_bytes() const { return false; }
  // True when the datatype is sent and received as MPI_PACKED into the contiguous receive buffer.
  virtual bool receives_packed() const { return false; }
  virtual void send(const Case& message, Workspace& workspace) = 0;
  virtual void recv(const Case& message, Workspace& workspace) = 0;
  // `messages` back-to-back messages (a bandwidth window); by default one after the other.
  virtual void send_window(const Case& message, Workspace& workspace, int messages);
  virtual void recv_window(const Case& message, Workspace& workspace, int messages);
};

std::unique_ptr<TransferMethod> make_method(Method method, const Link& link);

// Why `method` cannot run with this memory pair, or "" when it can.
std::string unavailable_reason(Method method, const MemoryPair& memory, bool cuda_aware, bool gddt_usable);

}  // namespace gddt::bench
