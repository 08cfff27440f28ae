// MPI-4's large-count entry points of point-to-point and packing (MPI_Send_c and the rest,
// MPI_Pack_c, MPI_Unpack_c and their external32 twins), where the library declares them
// (MPICH 4; Open MPI 4.1 and 5.0 do not): MPI-4 code such as mpi4py 4 calls these instead of
// the int ones. A count that fits an int takes the int call's shim, so device data is packed
// and staged the same way. A larger one goes to the library unchanged for host memory; on
// device memory it is MPI_ERR_COUNT, since gddt stages a message as one MPI_PACKED message of
// an int count of bytes. MPI_Pack_size_c, MPI_Get_count_c and MPI_Get_elements_c need no
// shim: they do not depend on where the data lives, and gddt's messages are ordinary ones.
#include <mpi.h>

#include "mpi/entry_points.hpp"

#if GDDT_HAVE_MPI_Send_c

#include <climits>
#include <cstdint>

#include "core/log.hpp"
#include "core/memory.hpp"
#include "mpi/classify.hpp"
#include "mpi/errors.hpp"
#include "mpi/interpose.hpp"
#include "mpi/pack_api.hpp"

namespace gddt::mpi::entry {
namespace {

bool fits_int(MPI_Count count) { return count >= INT_MIN && count <= INT_MAX; }

// Whether a call takes the int shim: every count that fits an int, and every negative one,
// which the int shim rejects as the library would.
bool int_shim_takes(MPI_Count count) { return count <= INT_MAX; }

// What the int shims get for `count`: itself where it fits an int, else -1 for a negative
// count (rejected there as the library would) and INT_MAX for a large one (never reaches them).
int narrowed(MPI_Count count) { return fits_int(count) ? static_cast<int>(count) : (count < 0 ? -1 : INT_MAX); }

// Whether the library takes a call of a count beyond an int as it is: the buffer is in host
// memory.
bool library_takes(const void* buffer) {
  gddt::memory::Kind kind;
  return gddt::memory::classify(buffer, &kind) == GDDT_OK && !kind.is_device();
}

int count_too_large(MPI_Comm comm) {
  GDDT_LOG(kError,
           "a large-count call on device memory beyond INT_MAX elements or bytes: gddt stages each "
           "message as one MPI_PACKED message of at most INT_MAX bytes");
  return gddt::mpi::raise(comm, GDDT_ERR_COUNT);
}

}  // namespace

#define GDDT_LARGE_COUNT_SEND(name)                                                                         \
  int name##_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) { \
    if (int_shim_takes(count)) return name(buf, narrowed(count), datatype, dest, tag, comm);                \
    if (library_takes(buf)) return PMPI_##name##_c(buf, count, datatype, dest, tag, comm);                  \
    return count_too_large(comm);                                                                           \
  }

#define GDDT_LARGE_COUNT_REQUEST_SEND(name)                                                               \
  int name##_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, \
               MPI_Request* request) {                                                                    \
    if (int_shim_takes(count)) return name(buf, narrowed(count), datatype, dest, tag, comm, request);     \
    if (library_takes(buf)) return PMPI_##name##_c(buf, count, datatype, dest, tag, comm, request);       \
    return count_too_large(comm);                                                                         \
  }

GDDT_LARGE_COUNT_SEND(Send)
GDDT_LARGE_COUNT_SEND(Ssend)
GDDT_LARGE_COUNT_SEND(Rsend)
GDDT_LARGE_COUNT_SEND(Bsend)
GDDT_LARGE_COUNT_REQUEST_SEND(Isend)
GDDT_LARGE_COUNT_REQUEST_SEND(Issend)
GDDT_LARGE_COUNT_REQUEST_SEND(Irsend)
GDDT_LARGE_COUNT_REQUEST_SEND(Ibsend)
GDDT_LARGE_COUNT_REQUEST_SEND(Send_init)
GDDT_LARGE_COUNT_REQUEST_SEND(Ssend_init)
GDDT_LARGE_COUNT_REQUEST_SEND(Rsend_init)
GDDT_LARGE_COUNT_REQUEST_SEND(Bsend_init)

int Recv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (int_shim_takes(count)) return Recv(buf, narrowed(count), datatype, source, tag, comm, status);
  if (library_takes(buf)) return PMPI_Recv_c(buf, count, datatype, source, tag, comm, status);
  return count_too_large(comm);
}

int Irecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
            MPI_Request* request) {
  if (int_shim_takes(count)) return Irecv(buf, narrowed(count), datatype, source, tag, comm, request);
  if (library_takes(buf)) return PMPI_Irecv_c(buf, count, datatype, source, tag, comm, request);
  return count_too_large(comm);
}

int Recv_init_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                MPI_Request* request) {
  if (int_shim_takes(count)) return Recv_init(buf, narrowed(count), datatype, source, tag, comm, request);
  if (library_takes(buf)) return PMPI_Recv_init_c(buf, count, datatype, source, tag, comm, request);
  return count_too_large(comm);
}

int Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
               MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (int_shim_takes(sendcount) && int_shim_takes(recvcount))
    return Sendrecv(sendbuf, narrowed(sendcount), sendtype, dest, sendtag, recvbuf, narrowed(recvcount), recvtype,
                    source, recvtag, comm, status);
  if (library_takes(sendbuf) && library_takes(recvbuf))
    return PMPI_Sendrecv_c(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                           comm, status);
  return count_too_large(comm);
}

int Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                       int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (int_shim_takes(count))
    return Sendrecv_replace(buf, narrowed(count), datatype, dest, sendtag, source, recvtag, comm, status);
  if (library_takes(buf))
    return PMPI_Sendrecv_replace_c(buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
  return count_too_large(comm);
}

int Isendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                MPI_Request* request) {
  if (int_shim_takes(sendcount) && int_shim_takes(recvcount))
    return Isendrecv(sendbuf, narrowed(sendcount), sendtype, dest, sendtag, recvbuf, narrowed(recvcount), recvtype,
                     source, recvtag, comm, request);
  if (library_takes(sendbuf) && library_takes(recvbuf))
    return PMPI_Isendrecv_c(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                            comm, request);
  return count_too_large(comm);
}

int Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                        int recvtag, MPI_Comm comm, MPI_Request* request) {
  if (int_shim_takes(count))
    return Isendrecv_replace(buf, narrowed(count), datatype, dest, sendtag, source, recvtag, comm, request);
  if (library_takes(buf))
    return PMPI_Isendrecv_replace_c(buf, count, datatype, dest, sendtag, source, recvtag, comm, request);
  return count_too_large(comm);
}

// A matched message has no communicator to raise an error on: the world's handler takes it.
int Mrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  if (int_shim_takes(count)) return Mrecv(buf, narrowed(count), datatype, message, status);
  if (library_takes(buf)) return PMPI_Mrecv_c(buf, count, datatype, message, status);
  return count_too_large(MPI_COMM_WORLD);
}

int Imrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  if (int_shim_takes(count)) return Imrecv(buf, narrowed(count), datatype, message, request);
  if (library_takes(buf)) return PMPI_Imrecv_c(buf, count, datatype, message, request);
  return count_too_large(MPI_COMM_WORLD);
}

// Packing takes the int shims where the count and position fit an int (negative ones too,
// which they reject) and so does the end of the packed data: an outsize or insize beyond an
// int is then cut to INT_MAX, which the data does not reach.
namespace {

bool packs_within_int(MPI_Count count, MPI_Count position, MPI_Count size, MPI_Datatype datatype) {
  if (count < 0 || position < 0) return true;
  if (!fits_int(count) || !fits_int(position)) return false;
  if (fits_int(size)) return true;
  gddt::type::LayoutPtr layout;
  if (gddt::mpi::resolve_datatype(datatype, &layout) != GDDT_OK) return true;  // the int shim says why
  std::int64_t bytes = 0;
  return !__builtin_mul_overflow(layout->size, static_cast<std::int64_t>(count), &bytes) && position + bytes <= INT_MAX;
}

int clamped(MPI_Count size) { return size > INT_MAX ? INT_MAX : narrowed(size); }

}  // namespace

int Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
           MPI_Count* position, MPI_Comm comm) {
  if (position == nullptr) return Pack(inbuf, narrowed(incount), datatype, outbuf, clamped(outsize), nullptr, comm);
  if (packs_within_int(incount, *position, outsize, datatype)) {
    int at = narrowed(*position);
    const int rc = Pack(inbuf, narrowed(incount), datatype, outbuf, clamped(outsize), &at, comm);
    if (rc == MPI_SUCCESS) *position = at;
    return rc;
  }
  if (library_takes(inbuf) && library_takes(outbuf))
    return PMPI_Pack_c(inbuf, incount, datatype, outbuf, outsize, position, comm);
  return count_too_large(comm);
}

int Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf, MPI_Count outcount,
             MPI_Datatype datatype, MPI_Comm comm) {
  if (position == nullptr) return Unpack(inbuf, clamped(insize), nullptr, outbuf, narrowed(outcount), datatype, comm);
  if (packs_within_int(outcount, *position, insize, datatype)) {
    int at = narrowed(*position);
    const int rc = Unpack(inbuf, clamped(insize), &at, outbuf, narrowed(outcount), datatype, comm);
    if (rc == MPI_SUCCESS) *position = at;
    return rc;
  }
  if (library_takes(inbuf) && library_takes(outbuf))
    return PMPI_Unpack_c(inbuf, insize, position, outbuf, outcount, datatype, comm);
  return count_too_large(comm);
}

// external32 positions and sizes are MPI_Aint in the int calls, as wide as MPI_Count here.
static_assert(sizeof(MPI_Aint) == sizeof(MPI_Count), "MPI_Aint holds every MPI_Count");

int Pack_external_c(const char datarep[], const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
                    MPI_Count outsize, MPI_Count* position) {
  if (position == nullptr || int_shim_takes(incount)) {
    MPI_Aint at = position != nullptr ? static_cast<MPI_Aint>(*position) : 0;
    const int rc = Pack_external(datarep, inbuf, narrowed(incount), datatype, outbuf, static_cast<MPI_Aint>(outsize),
                                 position != nullptr ? &at : nullptr);
    if (rc == MPI_SUCCESS && position != nullptr) *position = at;
    return rc;
  }
  if (library_takes(inbuf) && library_takes(outbuf))
    return PMPI_Pack_external_c(datarep, inbuf, incount, datatype, outbuf, outsize, position);
  return count_too_large(MPI_COMM_WORLD);
}

int Unpack_external_c(const char datarep[], const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf,
                      MPI_Count outcount, MPI_Datatype datatype) {
  if (position == nullptr || int_shim_takes(outcount)) {
    MPI_Aint at = position != nullptr ? static_cast<MPI_Aint>(*position) : 0;
    const int rc = Unpack_external(datarep, inbuf, static_cast<MPI_Aint>(insize), position != nullptr ? &at : nullptr,
                                   outbuf, narrowed(outcount), datatype);
    if (rc == MPI_SUCCESS && position != nullptr) *position = at;
    return rc;
  }
  if (library_takes(inbuf) && library_takes(outbuf))
    return PMPI_Unpack_external_c(datarep, inbuf, insize, position, outbuf, outcount, datatype);
  return count_too_large(MPI_COMM_WORLD);
}

}  // namespace gddt::mpi::entry

#endif  // GDDT_HAVE_MPI_Send_c
