// Datatypes that declare an OpenCL buffer: gddt_type_opencl's attribute (the command queue
// and the offset of the datatype's byte 0 in the buffer), MPI-ACC's explicit identification. The
// classification door's opencl_memory (classify.hpp) reads it.
#pragma once

#include <mpi.h>


namespace gddt::mpi {

// Frees the attribute's keyval (at MPI_Finalize).
void release_opencl_keyval();

}  // namespace gddt::mpi
