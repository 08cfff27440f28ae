// MPI_Pack, MPI_Unpack and MPI_Pack_size as gddt implements them for device memory (and,
// with GDDT_PACK_HOST=gddt, for host memory), plus the checks they share with the public
// window API. The interposer shims in interpose_pack_types.cpp call these after the disable switch.
#pragma once

#include <mpi.h>

namespace gddt::mpi {

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

}  // namespace gddt::mpi
