// MPI_Pack, MPI_Unpack and MPI_Pack_size as gddt implements them for device memory (and,
// with GDDT_PACK_HOST=gddt, for host memory), plus the checks they share with the public
// window API. The interposer shims in interpose.cpp call these after the disable switch.
#pragma once

#include <mpi.h>

#include "core/memory.hpp"
#include "type/datatype.hpp"

namespace gddt::mpi {

// A datatype usable for packing: not null, not freed, committed (a type gddt never saw
// committed is asked about through a private zero-count PMPI_Pack), with its layout.
// GDDT_ERR_UNSUPPORTED when the type is valid but gddt cannot express it.
Status resolve_datatype(MPI_Datatype datatype, type::LayoutPtr* layout);

// Where the typed buffer whose first touched byte is `first` lives: from the datatype's
// gddt memory attribute when it has one, else by asking memory::classify.
Status classify_typed(MPI_Datatype datatype, const void* first, memory::Kind* kind);

// Whether elements of a committed `datatype` at `buf` lie in memory the library serves alone
// (host memory), judged by the first byte the library's own true bounds name, so that calls on
// host memory never analyse a type. False where gddt must look further (device memory, a type
// not known to be committed, which the caller checks and reports).
bool on_library_memory(const void* buf, MPI_Datatype datatype);

int pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
         int* position, MPI_Comm comm);
int unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
           MPI_Datatype datatype, MPI_Comm comm);
int pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size);
// MPI_Pack_external and MPI_Unpack_external: the library converts host copies of device
// buffers; calls on host memory and calls it must reject go to it unchanged.
int pack_external(const char* datarep, const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                  MPI_Aint outsize, MPI_Aint* position);
int unpack_external(const char* datarep, const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                    int outcount, MPI_Datatype datatype);

// Frees what the checks above keep (the private probe communicator, the memory keyval); at
// MPI_Finalize.
void release_resources();

}  // namespace gddt::mpi
