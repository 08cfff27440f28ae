// gddt's implementations of the point-to-point entry points (see p2p.hpp for what gddt does
// with a message; the shims that call them are generated from entry_points.txt). The generated
// callers of the plain sends, receives and completion calls (their fast rows) ask the inline
// test of mpi/fast_path.hpp first, so host traffic pays a few loads for gddt and never reaches
// these. MPI_Test_cancelled, MPI_Get_count and MPI_Get_elements are forwarded: gddt's messages
// are ordinary MPI messages of packed bytes, whose statuses count bytes, which the library
// converts to any datatype. MPI_Probe, MPI_Iprobe and MPI_Cancel only start queued sends first.
#include <mpi.h>

#include "mpi/entry_points.hpp"
#include "mpi/interpose.hpp"
#include "mpi/p2p.hpp"

namespace gddt::mpi::entry {

int Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return p2p::send(PMPI_Send, false, buf, count, datatype, dest, tag, comm);
}
int Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return p2p::send(PMPI_Ssend, false, buf, count, datatype, dest, tag, comm);
}
int Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return p2p::send(PMPI_Rsend, false, buf, count, datatype, dest, tag, comm);
}
int Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return p2p::send(PMPI_Bsend, true, buf, count, datatype, dest, tag, comm);
}
int Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return p2p::isend(PMPI_Isend, false, false, buf, count, datatype, dest, tag, comm, request);
}
int Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return p2p::isend(PMPI_Issend, false, false, buf, count, datatype, dest, tag, comm, request);
}
int Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return p2p::isend(PMPI_Irsend, false, false, buf, count, datatype, dest, tag, comm, request);
}
int Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return p2p::isend(PMPI_Ibsend, true, false, buf, count, datatype, dest, tag, comm, request);
}
int Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return p2p::isend(PMPI_Send_init, false, true, buf, count, datatype, dest, tag, comm, request);
}
int Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return p2p::isend(PMPI_Ssend_init, false, true, buf, count, datatype, dest, tag, comm, request);
}
int Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return p2p::isend(PMPI_Rsend_init, false, true, buf, count, datatype, dest, tag, comm, request);
}
int Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return p2p::isend(PMPI_Bsend_init, true, true, buf, count, datatype, dest, tag, comm, request);
}
int Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return p2p::recv(buf, count, datatype, source, tag, comm, status);
}

int Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return p2p::irecv(false, buf, count, datatype, source, tag, comm, request);
}

int Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return p2p::irecv(true, buf, count, datatype, source, tag, comm, request);
}

int Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return p2p::sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                       status);
}

int Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                     MPI_Comm comm, MPI_Status* status) {
  return p2p::sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
}

#if GDDT_HAVE_MPI_Psend_init
int Psend_init(const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return p2p::psend_init(buf, partitions, count, datatype, dest, tag, comm, info, request);
}
int Precv_init(void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Info info, MPI_Request* request) {
  return p2p::precv_init(buf, partitions, count, datatype, source, tag, comm, info, request);
}
int Pready(int partition, MPI_Request request) { return p2p::pready(partition, request); }
int Pready_range(int partition_low, int partition_high, MPI_Request request) {
  return p2p::pready_range(partition_low, partition_high, request);
}
int Pready_list(int length, int array_of_partitions[], MPI_Request request) {
  return p2p::pready_list(length, array_of_partitions, request);
}
int Parrived(MPI_Request request, int partition, int* flag) { return p2p::parrived(request, partition, flag); }
#endif

#if GDDT_HAVE_MPI_Isendrecv
int Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  return p2p::isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                        comm, request);
}

int Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                      MPI_Comm comm, MPI_Request* request) {
  return p2p::isendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, request);
}
#endif

int Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return p2p::mprobe(source, tag, comm, message, status);
}

int Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  return p2p::improbe(source, tag, comm, flag, message, status);
}

int Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  return p2p::mrecv(buf, count, datatype, message, status);
}

int Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  return p2p::imrecv(buf, count, datatype, message, request);
}

int Start(MPI_Request* request) { return p2p::start(request); }

int Startall(int count, MPI_Request requests[]) { return p2p::startall(count, requests); }

int Wait(MPI_Request* request, MPI_Status* status) {
  return p2p::wait(request, status);
}

int Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return p2p::test(request, flag, status);
}

int Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return p2p::waitany(count, requests, index, status);
}

int Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return p2p::testany(count, requests, index, flag, status);
}

int Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return p2p::waitall(count, requests, statuses);
}

int Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  return p2p::testall(count, requests, flag, statuses);
}

int Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return p2p::waitsome(incount, requests, outcount, indices, statuses);
}

int Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return p2p::testsome(incount, requests, outcount, indices, statuses);
}

int Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return p2p::request_get_status(request, flag, status);
}

int Request_free(MPI_Request* request) { return p2p::request_free(request); }

int Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) { return p2p::probe(source, tag, comm, status); }

int Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return p2p::iprobe(source, tag, comm, flag, status);
}

int Cancel(MPI_Request* request) { return p2p::cancel(request); }

}  // namespace gddt::mpi::entry
