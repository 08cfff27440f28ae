// The interposed MPI entry points of packing, datatypes and finalization: one short shim
// each. A shim checks the disable switch and either forwards to PMPI_* or hands the call to
// the layer that implements it. Linked before the MPI library or LD_PRELOADed, these are the
// functions the application calls. Point-to-point shims are in interpose_p2p.cpp.
#include <mpi.h>

#include "core/pool.hpp"
#include "pack/backend.hpp"
#include "mpi/interpose.hpp"
#include "mpi/p2p.hpp"
#include "mpi/pack_api.hpp"

using gddt::mpi::disabled;

GDDT_MPI_ENTRY int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                            int outsize, int* position, MPI_Comm comm) {
  if (disabled()) return PMPI_Pack(inbuf, incount, datatype, outbuf, outsize, position, comm);
  return gddt::mpi::pack(inbuf, incount, datatype, outbuf, outsize, position, comm);
}

GDDT_MPI_ENTRY int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
                              int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  if (disabled()) return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, datatype, comm);
  return gddt::mpi::unpack(inbuf, insize, position, outbuf, outcount, datatype, comm);
}

GDDT_MPI_ENTRY int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  if (disabled()) return PMPI_Pack_size(incount, datatype, comm, size);
  return gddt::mpi::pack_size(incount, datatype, comm, size);
}

GDDT_MPI_ENTRY int MPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype,
                                     void* outbuf, MPI_Aint outsize, MPI_Aint* position) {
  if (disabled()) return PMPI_Pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position);
  return gddt::mpi::pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position);
}

GDDT_MPI_ENTRY int MPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position,
                                       void* outbuf, int outcount, MPI_Datatype datatype) {
  if (disabled()) return PMPI_Unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype);
  return gddt::mpi::unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype);
}

GDDT_MPI_ENTRY int MPI_Type_commit(MPI_Datatype* datatype) {
  int rc = PMPI_Type_commit(datatype);
  if (rc == MPI_SUCCESS && !disabled()) gddt::type::on_commit(*datatype);
  return rc;
}

// A duplicate of a committed type is committed too (MPI-4.0 5.1.10).
GDDT_MPI_ENTRY int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  int rc = PMPI_Type_dup(oldtype, newtype);
  if (rc == MPI_SUCCESS && !disabled() && gddt::type::is_known_committed(oldtype))
    gddt::type::on_commit(*newtype);
  return rc;
}

// Evicted before the library frees it: once freed, the handle may come back for a new type
// at any moment from another thread.
GDDT_MPI_ENTRY int MPI_Type_free(MPI_Datatype* datatype) {
  if (disabled() || datatype == nullptr) return PMPI_Type_free(datatype);
  const MPI_Datatype handle = *datatype;
  gddt::type::on_free(handle);
  int rc = PMPI_Type_free(datatype);
  if (rc != MPI_SUCCESS) gddt::type::on_commit(handle);  // not freed after all (a named type, say)
  return rc;
}

GDDT_MPI_ENTRY int MPI_Finalize(void) {
  if (!disabled()) {
    gddt::mpi::p2p::finalize();
    gddt::mpi::release_resources();
    if (gddt::pack::cuda_backend().stop != nullptr) gddt::pack::cuda_backend().stop();
    gddt::type::clear_cache();
    gddt::pool::trim();
  }
  return PMPI_Finalize();
}
