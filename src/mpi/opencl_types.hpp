// Datatypes that declare an OpenCL buffer: gddt_type_opencl's attribute (the command queue
// and the offset of the datatype's byte 0 in the buffer), MPI-ACC's explicit identification.
#pragma once

#include <mpi.h>

#include "pack/backend.hpp"

namespace gddt::mpi {

// True when `datatype` carries gddt's OpenCL attribute; then `buf` (the call's buffer
// argument) is a cl_mem, described in *buffer. One atomic load while no program asked for the
// attribute.
bool opencl_buffer_of(MPI_Datatype datatype, const void* buf, pack::OpenclBuffer* buffer);

// Frees the attribute's keyval (at MPI_Finalize).
void release_opencl_keyval();

}  // namespace gddt::mpi
