// gddt's implementations of the intercepted entry points of packing and datatypes (the shims that
// call them are generated from entry_points.txt). Point-to-point ones are in interpose_p2p.cpp,
// MPI-4's large-count forms in interpose_large_count.cpp, MPI_Finalize in interpose_finalize.cpp.
#include <mpi.h>

#include <algorithm>

#include "mpi/classify.hpp"
#include "mpi/entry_points.hpp"
#include "mpi/interpose.hpp"
#include "mpi/pack_api.hpp"
#include "type/contents.hpp"

namespace gddt::mpi {

namespace entry {

int Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
         MPI_Comm comm) {
  return pack(inbuf, incount, datatype, outbuf, outsize, position, comm);
}

int Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
           MPI_Comm comm) {
  return unpack(inbuf, insize, position, outbuf, outcount, datatype, comm);
}

int Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  return pack_size(incount, datatype, comm, size);
}

int Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                  MPI_Aint outsize, MPI_Aint* position) {
  return pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position);
}

int Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                    int outcount, MPI_Datatype datatype) {
  return unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype);
}

int Type_commit(MPI_Datatype* datatype) {
  const int rc = PMPI_Type_commit(datatype);
  if (rc != MPI_SUCCESS) return rc;
  type::on_commit(*datatype);
  prepare_for_device(*datatype);
  return rc;
}

// A duplicate of a committed type is committed too (MPI-4.0 5.1.10).
int Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const int rc = PMPI_Type_dup(oldtype, newtype);
  if (rc != MPI_SUCCESS) return rc;
  made_datatype(*newtype);
  if (type::is_known_committed(oldtype)) type::on_commit(*newtype);
  return rc;
}

// Evicted before the library frees it: once freed, the handle may come back for a new type
// at any moment from another thread.
int Type_free(MPI_Datatype* datatype) {
  if (datatype == nullptr) return PMPI_Type_free(datatype);
  const MPI_Datatype handle = *datatype;
  type::on_free(handle);
  const int rc = PMPI_Type_free(datatype);
  if (rc != MPI_SUCCESS) type::on_commit(handle);  // not freed after all (a named type, say)
  return rc;
}

namespace {

// Whether MPI_Type_get_contents returns the children's own handles (MPICH, counting a reference)
// or new handles of their own (Open MPI): only the first makes a freed reference leave a live
// type behind. Asked once, of a probe type.
bool contents_return_own_handles() {
  static const bool own = [] {
    MPI_Datatype child = MPI_DATATYPE_NULL, parent = MPI_DATATYPE_NULL, returned = MPI_DATATYPE_NULL;
    int count = 0;
    MPI_Aint unused = 0;
    bool same = false;
    if (PMPI_Type_contiguous(2, MPI_INT, &child) == MPI_SUCCESS &&
        PMPI_Type_contiguous(2, child, &parent) == MPI_SUCCESS &&
        PMPI_Type_get_contents(parent, 1, 0, 1, &count, &unused, &returned) == MPI_SUCCESS) {
      same = returned == child;
      PMPI_Type_free(&returned);
    }
    if (parent != MPI_DATATYPE_NULL) PMPI_Type_free(&parent);
    if (child != MPI_DATATYPE_NULL) PMPI_Type_free(&child);
    return same;
  }();
  return own;
}

// Own handles are references to live types; new ones are types made like any constructor's.
// Entries past the type's own count of datatypes are the caller's, not written by the library.
void note_references(MPI_Datatype datatype, MPI_Count max_datatypes, const MPI_Datatype* returned) {
  const bool own = contents_return_own_handles();
  const MPI_Count written = std::min(max_datatypes, type::envelope_of(datatype).datatypes);
  for (MPI_Count i = 0; i < written; ++i) {
    if (type::combiner_of(returned[i]) == MPI_COMBINER_NAMED) continue;
    if (own)
      type::on_reference(returned[i]);
    else
      made_datatype(returned[i]);
  }
}

}  // namespace

// Each derived datatype returned is a new reference the program frees on its own (MPI-4.0
// 5.1.13); where the library returns the type's own handle, freeing it must not end the type.
int Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                      int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
  const int rc = PMPI_Type_get_contents(datatype, max_integers, max_addresses, max_datatypes, array_of_integers,
                                        array_of_addresses, array_of_datatypes);
  if (rc == MPI_SUCCESS) note_references(datatype, max_datatypes, array_of_datatypes);
  return rc;
}

#if GDDT_HAVE_MPI_Type_get_contents_c
int Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                        MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                        MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                        MPI_Datatype array_of_datatypes[]) {
  const int rc = PMPI_Type_get_contents_c(datatype, max_integers, max_addresses, max_large_counts, max_datatypes,
                                          array_of_integers, array_of_addresses, array_of_large_counts,
                                          array_of_datatypes);
  if (rc == MPI_SUCCESS) note_references(datatype, max_datatypes, array_of_datatypes);
  return rc;
}
#endif

}  // namespace entry
}  // namespace gddt::mpi
