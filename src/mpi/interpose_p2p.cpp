// The interposed point-to-point entry points: one short shim each (see p2p.hpp for what
// gddt does with a message). The plain sends and receives first try the inline hot path, so
// host traffic pays a few loads for gddt. MPI_Test_cancelled, MPI_Get_count and
// MPI_Get_elements need no shim: gddt's messages are ordinary MPI messages of packed bytes,
// whose statuses count bytes, which the library converts to any datatype. MPI_Probe,
// MPI_Iprobe and MPI_Cancel only start queued sends first.
#include <mpi.h>

#include "mpi/interpose.hpp"
#include "mpi/p2p.hpp"
#include "mpi/requests.hpp"

using gddt::mpi::disabled;
namespace p2p = gddt::mpi::p2p;

GDDT_MPI_ENTRY int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  if (p2p::passes_through(buf, count, datatype) || disabled()) return PMPI_Send(buf, count, datatype, dest, tag, comm);
  return p2p::send(PMPI_Send, false, buf, count, datatype, dest, tag, comm);
}
GDDT_MPI_ENTRY int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  if (p2p::passes_through(buf, count, datatype) || disabled()) return PMPI_Ssend(buf, count, datatype, dest, tag, comm);
  return p2p::send(PMPI_Ssend, false, buf, count, datatype, dest, tag, comm);
}
GDDT_MPI_ENTRY int MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  if (p2p::passes_through(buf, count, datatype) || disabled()) return PMPI_Rsend(buf, count, datatype, dest, tag, comm);
  return p2p::send(PMPI_Rsend, false, buf, count, datatype, dest, tag, comm);
}
GDDT_MPI_ENTRY int MPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  if (disabled()) return PMPI_Bsend(buf, count, datatype, dest, tag, comm);
  return p2p::send(PMPI_Bsend, true, buf, count, datatype, dest, tag, comm);
}
GDDT_MPI_ENTRY int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  if (p2p::passes_through(buf, count, datatype) || disabled()) return PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
  return p2p::isend(PMPI_Isend, false, false, buf, count, datatype, dest, tag, comm, request);
}
GDDT_MPI_ENTRY int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  if (p2p::passes_through(buf, count, datatype) || disabled()) return PMPI_Issend(buf, count, datatype, dest, tag, comm, request);
  return p2p::isend(PMPI_Issend, false, false, buf, count, datatype, dest, tag, comm, request);
}
GDDT_MPI_ENTRY int MPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  if (p2p::passes_through(buf, count, datatype) || disabled()) return PMPI_Irsend(buf, count, datatype, dest, tag, comm, request);
  return p2p::isend(PMPI_Irsend, false, false, buf, count, datatype, dest, tag, comm, request);
}
GDDT_MPI_ENTRY int MPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  if (disabled()) return PMPI_Ibsend(buf, count, datatype, dest, tag, comm, request);
  return p2p::isend(PMPI_Ibsend, true, false, buf, count, datatype, dest, tag, comm, request);
}
GDDT_MPI_ENTRY int MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  if (disabled()) return PMPI_Send_init(buf, count, datatype, dest, tag, comm, request);
  return p2p::isend(PMPI_Send_init, false, true, buf, count, datatype, dest, tag, comm, request);
}
GDDT_MPI_ENTRY int MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  if (disabled()) return PMPI_Ssend_init(buf, count, datatype, dest, tag, comm, request);
  return p2p::isend(PMPI_Ssend_init, false, true, buf, count, datatype, dest, tag, comm, request);
}
GDDT_MPI_ENTRY int MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  if (disabled()) return PMPI_Rsend_init(buf, count, datatype, dest, tag, comm, request);
  return p2p::isend(PMPI_Rsend_init, false, true, buf, count, datatype, dest, tag, comm, request);
}
GDDT_MPI_ENTRY int MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  if (disabled()) return PMPI_Bsend_init(buf, count, datatype, dest, tag, comm, request);
  return p2p::isend(PMPI_Bsend_init, true, true, buf, count, datatype, dest, tag, comm, request);
}
GDDT_MPI_ENTRY int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                            MPI_Status* status) {
  if (p2p::passes_through(buf, count, datatype) || disabled()) return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
  return p2p::recv(buf, count, datatype, source, tag, comm, status);
}

GDDT_MPI_ENTRY int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                             MPI_Request* request) {
  if (p2p::passes_through(buf, count, datatype) || disabled()) return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
  return p2p::irecv(false, buf, count, datatype, source, tag, comm, request);
}

GDDT_MPI_ENTRY int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                                 MPI_Request* request) {
  if (disabled()) return PMPI_Recv_init(buf, count, datatype, source, tag, comm, request);
  return p2p::irecv(true, buf, count, datatype, source, tag, comm, request);
}

GDDT_MPI_ENTRY int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                                MPI_Comm comm, MPI_Status* status) {
  if (disabled())
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
  return p2p::sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                       comm, status);
}

GDDT_MPI_ENTRY int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                                        int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (disabled()) return PMPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
  return p2p::sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
}

GDDT_MPI_ENTRY int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (disabled()) return PMPI_Mprobe(source, tag, comm, message, status);
  return p2p::mprobe(source, tag, comm, message, status);
}

GDDT_MPI_ENTRY int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                               MPI_Status* status) {
  if (disabled()) return PMPI_Improbe(source, tag, comm, flag, message, status);
  return p2p::improbe(source, tag, comm, flag, message, status);
}

GDDT_MPI_ENTRY int MPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  if (disabled()) return PMPI_Mrecv(buf, count, datatype, message, status);
  return p2p::mrecv(buf, count, datatype, message, status);
}

GDDT_MPI_ENTRY int MPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                              MPI_Request* request) {
  if (disabled()) return PMPI_Imrecv(buf, count, datatype, message, request);
  return p2p::imrecv(buf, count, datatype, message, request);
}

GDDT_MPI_ENTRY int MPI_Start(MPI_Request* request) {
  if (disabled()) return PMPI_Start(request);
  return p2p::start(request);
}

GDDT_MPI_ENTRY int MPI_Startall(int count, MPI_Request requests[]) {
  if (disabled()) return PMPI_Startall(count, requests);
  return p2p::startall(count, requests);
}

GDDT_MPI_ENTRY int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!gddt::mpi::requests::any() || disabled()) return PMPI_Wait(request, status);
  return p2p::wait(request, status);
}

GDDT_MPI_ENTRY int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!gddt::mpi::requests::any() || disabled()) return PMPI_Test(request, flag, status);
  return p2p::test(request, flag, status);
}

GDDT_MPI_ENTRY int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!gddt::mpi::requests::any() || disabled()) return PMPI_Waitany(count, requests, index, status);
  return p2p::waitany(count, requests, index, status);
}

GDDT_MPI_ENTRY int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (!gddt::mpi::requests::any() || disabled()) return PMPI_Testany(count, requests, index, flag, status);
  return p2p::testany(count, requests, index, flag, status);
}

GDDT_MPI_ENTRY int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!gddt::mpi::requests::any() || disabled()) return PMPI_Waitall(count, requests, statuses);
  return p2p::waitall(count, requests, statuses);
}

GDDT_MPI_ENTRY int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!gddt::mpi::requests::any() || disabled()) return PMPI_Testall(count, requests, flag, statuses);
  return p2p::testall(count, requests, flag, statuses);
}

GDDT_MPI_ENTRY int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                                MPI_Status statuses[]) {
  if (!gddt::mpi::requests::any() || disabled()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  return p2p::waitsome(incount, requests, outcount, indices, statuses);
}

GDDT_MPI_ENTRY int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                                MPI_Status statuses[]) {
  if (!gddt::mpi::requests::any() || disabled()) return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  return p2p::testsome(incount, requests, outcount, indices, statuses);
}

GDDT_MPI_ENTRY int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (disabled()) return PMPI_Request_get_status(request, flag, status);
  return p2p::request_get_status(request, flag, status);
}

GDDT_MPI_ENTRY int MPI_Request_free(MPI_Request* request) {
  if (disabled()) return PMPI_Request_free(request);
  return p2p::request_free(request);
}

GDDT_MPI_ENTRY int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (disabled()) return PMPI_Probe(source, tag, comm, status);
  return p2p::probe(source, tag, comm, status);
}

GDDT_MPI_ENTRY int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (disabled()) return PMPI_Iprobe(source, tag, comm, flag, status);
  return p2p::iprobe(source, tag, comm, flag, status);
}

GDDT_MPI_ENTRY int MPI_Cancel(MPI_Request* request) {
  if (disabled()) return PMPI_Cancel(request);
  return p2p::cancel(request);
}
