/*
 * gddt: GPU-aware MPI derived datatypes.
 *
 * The small public C API. Everything MPI-specific lives in <gddt/gddt_mpi.h>; this header
 * does not need <mpi.h>.
 */
#ifndef GDDT_GDDT_H
#define GDDT_GDDT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GDDT_VERSION_MAJOR 0
#define GDDT_VERSION_MINOR 1
#define GDDT_VERSION_PATCH 0

#if defined(__GNUC__)
#define GDDT_EXPORT __attribute__((visibility("default")))
#else
#define GDDT_EXPORT
#endif

/*
 * The one list of status codes: name, value, message. OK is zero, "in progress" is positive,
 * errors are negative. Everything else (the enum, gddt_status_string, the mapping to MPI error
 * classes) is generated from this list.
 */
#define GDDT_STATUS_LIST(X)                                                          \
  X(OK, 0, "success")                                                                \
  X(IN_PROGRESS, 1, "operation in progress")                                         \
  X(ERR_INVALID_ARG, -1, "invalid argument")                                         \
  X(ERR_INVALID_TYPE, -2, "invalid, uncommitted or freed datatype")                  \
  X(ERR_COUNT, -3, "invalid count")                                                  \
  X(ERR_BUFFER, -4, "invalid buffer")                                                \
  X(ERR_TRUNCATE, -5, "output buffer too small")                                     \
  X(ERR_NO_MEMORY, -6, "out of memory")                                              \
  X(ERR_UNSUPPORTED, -7, "unsupported datatype or operation")                        \
  X(ERR_NO_DEVICE, -8, "no usable GPU")                                              \
  X(ERR_CUDA, -9, "CUDA error")                                                      \
  X(ERR_MPI, -10, "error from the underlying MPI library")                           \
  X(ERR_CONFIG, -11, "invalid configuration value")                                  \
  X(ERR_INTERNAL, -12, "internal error")                                             \
  X(ERR_TAG, -13, "invalid tag")                                                     \
  X(ERR_RANK, -14, "invalid rank")

#define GDDT_STATUS_ENUM_ENTRY(name, value, message) GDDT_##name = value,
typedef enum gddt_status { GDDT_STATUS_LIST(GDDT_STATUS_ENUM_ENTRY) } gddt_status_t;
#undef GDDT_STATUS_ENUM_ENTRY

/* Where a buffer lives, as gddt classifies it. */
typedef enum gddt_memory_type {
  GDDT_MEMORY_HOST = 0,   /* pageable host memory */
  GDDT_MEMORY_PINNED = 1, /* page-locked host memory known to CUDA */
  GDDT_MEMORY_DEVICE = 2, /* cudaMalloc memory */
  GDDT_MEMORY_MANAGED = 3, /* cudaMallocManaged memory */
  GDDT_MEMORY_OPENCL = 4   /* an OpenCL buffer (cl_mem), known only from a datatype attribute */
} gddt_memory_type_t;

/* What gddt has done in this process so far: the counter `name` (for example
 * "p2p.host-staged.sides" or "pack.calls"; `gddt-info` lists them all) into *value.
 * GDDT_ERR_INVALID_ARG for an unknown name. GDDT_STATS=1 prints the non-zero ones at
 * MPI_Finalize. */
GDDT_EXPORT gddt_status_t gddt_counter(const char *name, long long *value);

/* Human-readable message of a status code; never NULL. */
GDDT_EXPORT const char *gddt_status_string(gddt_status_t status);

/* Version as "MAJOR.MINOR.PATCH". */
GDDT_EXPORT const char *gddt_version_string(void);

/* Classifies one address. On success writes the type and, for device and managed memory, the
 * CUDA device ordinal (-1 for host memory). */
GDDT_EXPORT gddt_status_t gddt_memory_classify(const void *ptr, gddt_memory_type_t *type,
                                               int *device);

/* Name of a memory type ("host", "pinned", "device", "managed", "opencl"). */
GDDT_EXPORT const char *gddt_memory_type_name(gddt_memory_type_t type);

#ifdef __cplusplus
}
#endif

#endif /* GDDT_GDDT_H */
