// Calls gddt does not otherwise touch that may wait for other processes: collectives
// (neighbourhood ones too), window synchronization and freeing, communicator construction and
// disconnection. Each starts the sends gddt still holds back (deferred.hpp) and then is the
// library's own, so that a peer never waits in them for a message this process has not
// posted. Collectives first refuse device data the library would pack with the CPU, which
// gddt does not move for them yet. Nonblocking collectives need no shim: they complete in the
// interposed completion calls, which start held sends too.
#include <mpi.h>

#include "mpi/deferred.hpp"
#include "mpi/interpose.hpp"
#include "mpi/p2p.hpp"

#define GDDT_BLOCKING_ENTRY(name, parameters, arguments) \
  GDDT_MPI_ENTRY int MPI_##name parameters {             \
    gddt::mpi::deferred::before_blocking();              \
    return PMPI_##name arguments;                        \
  }

// A collective whose buffers are looked at first: device data the library would pack with
// the CPU is refused (p2p::refuse_device_data). `refusal` is the check's call.
#define GDDT_COLLECTIVE_ENTRY(name, parameters, arguments, refusal) \
  GDDT_MPI_ENTRY int MPI_##name parameters {                        \
    if (!gddt::mpi::disabled()) {                                   \
      const int refused = gddt::mpi::p2p::refusal;                  \
      if (refused != MPI_SUCCESS) return refused;                   \
    }                                                               \
    gddt::mpi::deferred::before_blocking();                         \
    return PMPI_##name arguments;                                   \
  }
#define GDDT_SEND_RECV_BUFFERS refuse_device_data(comm, {{sendbuf, sendtype}, {recvbuf, recvtype}})
#define GDDT_REDUCTION_BUFFERS refuse_device_data(comm, {{sendbuf, datatype}, {recvbuf, datatype}})

// Parameter lists that several collectives share (the MPI-3 C bindings).
#define GDDT_EVERY_BLOCK_PARAMETERS \
  (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, \
   MPI_Datatype recvtype, MPI_Comm comm)
#define GDDT_EVERY_BLOCK_ARGUMENTS (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm)
#define GDDT_GATHERV_PARAMETERS \
  (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], \
   const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
#define GDDT_GATHERV_ARGUMENTS (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm)
#define GDDT_ALLTOALLV_PARAMETERS \
  (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf, \
   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
#define GDDT_ALLTOALLV_ARGUMENTS (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm)

GDDT_BLOCKING_ENTRY(Barrier, (MPI_Comm comm), (comm))
GDDT_COLLECTIVE_ENTRY(Bcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm),
                    (buffer, count, datatype, root, comm), refuse_device_data(comm, {{buffer, datatype}}))
GDDT_COLLECTIVE_ENTRY(Gather,
                    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm),
                    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), GDDT_SEND_RECV_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Gatherv,
                    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),
                    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm), GDDT_SEND_RECV_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Scatter,
                    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm),
                    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm), GDDT_SEND_RECV_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Scatterv,
                    (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                     void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                    (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm), GDDT_SEND_RECV_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Allgather, GDDT_EVERY_BLOCK_PARAMETERS, GDDT_EVERY_BLOCK_ARGUMENTS, GDDT_SEND_RECV_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Allgatherv, GDDT_GATHERV_PARAMETERS, GDDT_GATHERV_ARGUMENTS, GDDT_SEND_RECV_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Alltoall, GDDT_EVERY_BLOCK_PARAMETERS, GDDT_EVERY_BLOCK_ARGUMENTS, GDDT_SEND_RECV_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Alltoallv, GDDT_ALLTOALLV_PARAMETERS, GDDT_ALLTOALLV_ARGUMENTS, GDDT_SEND_RECV_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Alltoallw,
                    (const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                     void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                     MPI_Comm comm),
                    (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm), refuse_device_data_w(comm, sendbuf, sendtypes, recvbuf, recvtypes))
GDDT_COLLECTIVE_ENTRY(Reduce,
                    (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm),
                    (sendbuf, recvbuf, count, datatype, op, root, comm), GDDT_REDUCTION_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Allreduce,
                    (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                    (sendbuf, recvbuf, count, datatype, op, comm), GDDT_REDUCTION_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Reduce_scatter,
                    (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm),
                    (sendbuf, recvbuf, recvcounts, datatype, op, comm), GDDT_REDUCTION_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Reduce_scatter_block,
                    (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm),
                    (sendbuf, recvbuf, recvcount, datatype, op, comm), GDDT_REDUCTION_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Scan,
                    (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                    (sendbuf, recvbuf, count, datatype, op, comm), GDDT_REDUCTION_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Exscan,
                    (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
                    (sendbuf, recvbuf, count, datatype, op, comm), GDDT_REDUCTION_BUFFERS)
GDDT_BLOCKING_ENTRY(Win_fence, (int assertion, MPI_Win win), (assertion, win))
GDDT_BLOCKING_ENTRY(Comm_dup, (MPI_Comm comm, MPI_Comm* newcomm), (comm, newcomm))
GDDT_BLOCKING_ENTRY(Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm* newcomm), (comm, color, key, newcomm))
GDDT_BLOCKING_ENTRY(Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm), (comm, group, newcomm))
GDDT_BLOCKING_ENTRY(Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm),
                    (comm, split_type, key, info, newcomm))
GDDT_BLOCKING_ENTRY(Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm),
                    (comm, group, tag, newcomm))
GDDT_BLOCKING_ENTRY(Comm_disconnect, (MPI_Comm * comm), (comm))
GDDT_BLOCKING_ENTRY(Intercomm_create,
                    (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                     MPI_Comm* newintercomm),
                    (local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm))
GDDT_BLOCKING_ENTRY(Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm* newintracomm),
                    (intercomm, high, newintracomm))
GDDT_BLOCKING_ENTRY(Cart_create,
                    (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm* comm_cart),
                    (comm_old, ndims, dims, periods, reorder, comm_cart))
GDDT_BLOCKING_ENTRY(Win_wait, (MPI_Win win), (win))
GDDT_BLOCKING_ENTRY(Win_complete, (MPI_Win win), (win))
GDDT_BLOCKING_ENTRY(Win_free, (MPI_Win * win), (win))
GDDT_COLLECTIVE_ENTRY(Neighbor_allgather, GDDT_EVERY_BLOCK_PARAMETERS, GDDT_EVERY_BLOCK_ARGUMENTS, GDDT_SEND_RECV_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Neighbor_allgatherv, GDDT_GATHERV_PARAMETERS, GDDT_GATHERV_ARGUMENTS, GDDT_SEND_RECV_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Neighbor_alltoall, GDDT_EVERY_BLOCK_PARAMETERS, GDDT_EVERY_BLOCK_ARGUMENTS, GDDT_SEND_RECV_BUFFERS)
GDDT_COLLECTIVE_ENTRY(Neighbor_alltoallv, GDDT_ALLTOALLV_PARAMETERS, GDDT_ALLTOALLV_ARGUMENTS, GDDT_SEND_RECV_BUFFERS)
GDDT_BLOCKING_ENTRY(Neighbor_alltoallw,
                    (const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                     const MPI_Datatype recvtypes[], MPI_Comm comm),
                    (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))
