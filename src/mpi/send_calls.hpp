// The library's send functions a point-to-point call of gddt takes for its mode (MPI_Send,
// MPI_Bsend, ...; MPI_Isend, MPI_Send_init, ...).
#pragma once

#include <mpi.h>

namespace gddt::mpi::p2p {

using BlockingSend = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
using RequestSend = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);

}  // namespace gddt::mpi::p2p
