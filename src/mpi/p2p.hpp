// Point-to-point calls as gddt implements them. Each user message that gddt handles becomes
// exactly one MPI message of its packed bytes (MPI_PACKED, which matches any type signature),
// posted in call order on the user's communicator and tag, so matching, ordering and
// interoperation with peers that use host memory or other datatypes are the library's own.
// Messages gddt does not need to touch (host memory by default; contiguous device data under
// a CUDA-aware library) are forwarded unchanged.
#pragma once

#include <mpi.h>

#include "mpi/send_calls.hpp"

namespace gddt::mpi::p2p {

// Send, Ssend, Rsend, Bsend (`call` is the PMPI function of the mode). Buffered modes stage in
// host memory, which the library copies into the attached buffer.
int send(BlockingSend call, bool buffered, const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
         MPI_Comm comm);
// Isend, Issend, Irsend, Ibsend, and with `persistent` the *_init calls (packed at MPI_Start).
int isend(RequestSend call, bool buffered, bool persistent, const void* buf, int count, MPI_Datatype datatype,
          int dest, int tag, MPI_Comm comm, MPI_Request* request);
int recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status);
int irecv(bool persistent, void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
          MPI_Request* request);
int sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status);
int sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                     MPI_Comm comm, MPI_Status* status);
// MPI-4's MPI_Isendrecv and MPI_Isendrecv_replace: the send half is packed and posted after
// every held send, like a blocking send's, and one request covers both halves.
int isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
              int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request);
int isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                      MPI_Comm comm, MPI_Request* request);
int mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status);
int imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request);
// Matched probes: the message handle's communicator is remembered for MPI_Mrecv's errors.
int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status);
int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status);

// MPI-4's partitioned calls: a partitioned operation of a staged message is a persistent request of
// the library on the staging, whose partitions MPI_Pready fills and MPI_Parrived (where it says one
// arrived) or the completion moves into the user's buffer.
int psend_init(const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm, MPI_Info info, MPI_Request* request);
int precv_init(void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Info info, MPI_Request* request);
int pready(int partition, MPI_Request request);
int pready_range(int partition_low, int partition_high, MPI_Request request);
int pready_list(int length, int array_of_partitions[], MPI_Request request);
int parrived(MPI_Request request, int partition, int* flag);

int start(MPI_Request* request);
int startall(int count, MPI_Request requests[]);
int wait(MPI_Request* request, MPI_Status* status);
int test(MPI_Request* request, int* flag, MPI_Status* status);
int waitany(int count, MPI_Request requests[], int* index, MPI_Status* status);
int testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status);
int waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
int testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]);
int waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]);
int testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]);
int request_get_status(MPI_Request request, int* flag, MPI_Status* status);
int request_free(MPI_Request* request);
// Probe and Cancel need gddt only to start queued sends first (deferred.hpp).
int probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
int cancel(MPI_Request* request);

// Completes everything still in flight (at MPI_Finalize).
void finalize();

}  // namespace gddt::mpi::p2p
