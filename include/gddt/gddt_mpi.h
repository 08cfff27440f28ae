/*
 * gddt's MPI-facing C API: byte-window packing of committed MPI datatypes on host or device
 * memory. The interposed MPI functions (MPI_Pack, MPI_Unpack, ...) need none of this; it is
 * for code that builds its own pipelines.
 */
#ifndef GDDT_GDDT_MPI_H
#define GDDT_GDDT_MPI_H

#include <mpi.h>

#include "gddt/gddt.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Packs bytes [offset, offset + length) of the packed stream of `count` elements of
 * `datatype` read from `typed` into `packed` (which receives exactly `length` bytes).
 * Either buffer may be host, pinned, device or managed memory. With `cuda_stream` NULL the
 * call returns when the bytes are in place; otherwise it is ordered on that cudaStream_t and
 * may return before the copy completes (host-only work is always complete on return).
 * offset + length must not exceed count * MPI_Type_size(datatype).
 */
GDDT_EXPORT gddt_status_t gddt_pack_window(MPI_Datatype datatype, MPI_Count count,
                                           const void *typed, void *packed, MPI_Count offset,
                                           MPI_Count length, void *cuda_stream);

/* The reverse of gddt_pack_window: scatters `length` bytes from `packed` into the positions
 * [offset, offset + length) of the packed stream of `count` elements of `datatype` at `typed`.
 * Bytes of `typed` outside those positions are never written. */
GDDT_EXPORT gddt_status_t gddt_unpack_window(MPI_Datatype datatype, MPI_Count count, void *typed,
                                             const void *packed, MPI_Count offset,
                                             MPI_Count length, void *cuda_stream);

/*
 * Explicit buffer identification. A datatype carrying this attribute declares where every
 * buffer used with it lives, and gddt skips the pointer query for it:
 *   MPI_Type_set_attr(type, gddt_memory_keyval(), GDDT_MEMORY_ATTRIBUTE(GDDT_MEMORY_DEVICE, 0));
 * The keyval is created on the first call (after MPI_Init) and freed at MPI_Finalize.
 * Declaring the wrong kind is erroneous, like passing a device pointer to a host-only MPI.
 */
GDDT_EXPORT int gddt_memory_keyval(void);
#define GDDT_MEMORY_ATTRIBUTE(type, device) \
  ((void *)(intptr_t)((((intptr_t)(device)) + 1) * 16 + (intptr_t)(type)))

/*
 * OpenCL buffers. *newtype becomes a duplicate of `type` declaring that the buffer argument of
 * every MPI call made with it is an OpenCL buffer (a cl_mem, cast to void *), in which the
 * datatype's byte 0 lies `offset` bytes in, moved in order on `queue` (a cl_command_queue of the
 * buffer's context; gddt's moves finish before the call returns). Commit it before use and free
 * it with MPI_Type_free; MPI_Type_dup keeps the declaration. MPI_Pack and MPI_Unpack take such a
 * buffer on the typed side (the packed side is host memory). Returns an MPI error code.
 * A cl_mem passed with a datatype lacking the declaration is a host pointer to MPI: the library
 * reads or writes the handle's own memory (docs/usage.md).
 */
GDDT_EXPORT int gddt_type_opencl(MPI_Datatype type, void *queue, MPI_Aint offset, MPI_Datatype *newtype);

/* The MPI error class gddt raises for a status (MPI_SUCCESS for GDDT_OK). */
GDDT_EXPORT int gddt_status_to_mpi_error(gddt_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* GDDT_GDDT_MPI_H */
