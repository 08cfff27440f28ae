// The tests the shims of `fast` rows (entry_points.txt) ask before anything else: true when
// the call can go to the MPI library as it is, which ordinary host traffic does. Each reads a
// few globals and calls nothing, so the shim stays a leaf whose both ways out are tail calls
// (no frame, no saved registers), and a true answer is right whatever else holds: whether gddt
// is disabled or MPI finalized, the call would reach the library unchanged too. A false
// answer only means the shim takes the slow way, which decides everything else. Every generated
// caller of these rows' implementations (the large-count and Fortran shims too) asks first, so the
// implementations do not repeat it.
#pragma once

#include <mpi.h>

#include "mpi/passage.hpp"
#include "protocol/requests.hpp"

namespace gddt::mpi::fast {

// Plain sends and receives: nothing held back, and a buffer and datatype the library can take
// (p2p::passes_through). The mode of the send does not matter to the test.
inline bool Send(const void* buf, int count, MPI_Datatype datatype, int, int, MPI_Comm) {
  return p2p::passes_through(buf, count, datatype);
}
inline bool Ssend(const void* buf, int count, MPI_Datatype datatype, int, int, MPI_Comm) {
  return p2p::passes_through(buf, count, datatype);
}
inline bool Rsend(const void* buf, int count, MPI_Datatype datatype, int, int, MPI_Comm) {
  return p2p::passes_through(buf, count, datatype);
}
inline bool Isend(const void* buf, int count, MPI_Datatype datatype, int, int, MPI_Comm, MPI_Request*) {
  return p2p::passes_through(buf, count, datatype);
}
inline bool Issend(const void* buf, int count, MPI_Datatype datatype, int, int, MPI_Comm, MPI_Request*) {
  return p2p::passes_through(buf, count, datatype);
}
inline bool Irsend(const void* buf, int count, MPI_Datatype datatype, int, int, MPI_Comm, MPI_Request*) {
  return p2p::passes_through(buf, count, datatype);
}
inline bool Recv(void* buf, int count, MPI_Datatype datatype, int, int, MPI_Comm, MPI_Status*) {
  return p2p::passes_through(buf, count, datatype, true);
}
inline bool Irecv(void* buf, int count, MPI_Datatype datatype, int, int, MPI_Comm, MPI_Request*) {
  return p2p::passes_through(buf, count, datatype, true);
}

// Completion calls: no gddt operation is alive, so every request is the library's own.
inline bool no_operation_alive() { return !protocol::requests::any(); }
inline bool Wait(MPI_Request*, MPI_Status*) { return no_operation_alive(); }
inline bool Test(MPI_Request*, int*, MPI_Status*) { return no_operation_alive(); }
inline bool Waitany(int, MPI_Request[], int*, MPI_Status*) { return no_operation_alive(); }
inline bool Testany(int, MPI_Request[], int*, int*, MPI_Status*) { return no_operation_alive(); }
inline bool Waitall(int, MPI_Request[], MPI_Status[]) { return no_operation_alive(); }
inline bool Testall(int, MPI_Request[], int*, MPI_Status[]) { return no_operation_alive(); }
inline bool Waitsome(int, MPI_Request[], int*, int[], MPI_Status[]) { return no_operation_alive(); }
inline bool Testsome(int, MPI_Request[], int*, int*, MPI_Status[]) { return no_operation_alive(); }

}  // namespace gddt::mpi::fast
