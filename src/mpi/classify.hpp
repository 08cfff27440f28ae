// The classification door every data path goes through: whether a datatype is usable and its
// layout, where a typed buffer lives, and whether the library may serve a buffer alone.
#pragma once

#include <mpi.h>

#include "core/memory.hpp"
#include "type/datatype.hpp"

namespace gddt::mpi {

// A datatype usable for packing: not null, not freed, committed (a type gddt never saw
// committed is asked about through a private zero-count PMPI_Pack), with its layout.
// GDDT_ERR_UNSUPPORTED when the type is valid but gddt cannot express it.
Status resolve_datatype(MPI_Datatype datatype, type::LayoutPtr* layout);

// Readies a newly committed `datatype` for device memory where this process has moved device
// data (memory::device_memory_seen): decodes its layout and has the GPU backend make what its
// first move would (Backend::prepare), for elements of up to 16 KiB. Programs commit their types
// before their exchanges, whose first message of each new type otherwise paid for both: 6-17 us
// a side for the decode and 10 for a piece table on two H200s (performance.md, the flood).
// Failures are left to the first use, which meets them again and reports them.
void prepare_for_device(MPI_Datatype datatype);

// Whether `buf` of `datatype` is OpenCL memory: the datatype carries gddt's OpenCL attribute
// (gddt_type_opencl, opencl_types.cpp), and `buf` (the call's buffer argument) is then a cl_mem,
// described in *buffer. Asked before any address of the buffer is classified; one atomic load
// while no program asked for the attribute.
bool opencl_memory(MPI_Datatype datatype, const void* buf, memory::OpenclBuffer* buffer);

// Where the typed buffer whose first touched byte is `first` lives: from the datatype's
// gddt memory attribute when it has one, else by asking memory::classify.
Status classify_typed(MPI_Datatype datatype, const void* first, memory::Kind* kind);

// Whether elements of a committed `datatype` at `buf` lie in memory the library serves alone
// (host memory), judged by the first byte the library's own true bounds name, so that calls on
// host memory never analyse a type. False where gddt must look further (device memory, a type
// not known to be committed, which the caller checks and reports).
bool on_library_memory(const void* buf, MPI_Datatype datatype);

// Frees what the door keeps (the private probe communicator, the memory keyval); at MPI_Finalize,
// with opencl_types.hpp's release_opencl_keyval.
void release_resources();

}  // namespace gddt::mpi
