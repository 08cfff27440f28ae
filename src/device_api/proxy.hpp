// The host half of the device API: the ring kernels post into, the tables
// behind the device handles, and the proxy that carries posts out through
// gddt's own MPI entry points (so the peer protocol and every memory path
// apply) and writes their completions back.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "core/status.hpp"
#include "device_api/device_memory.hpp"
#include "gddt/gddt_device.h"

namespace gddt::device_api {

// The process's ring, made (and the proxy started) on the first call; what
// kernels get in their communicator handles.
Status ring(gddt_device_ring_t *out);

// Communicator and datatype entries, as the posts name them. add_* takes
// ownership of the private duplicate and the device copy of the layout.
Status add_comm(MPI_Comm comm, MPI_Comm dup, std::uint32_t *index);
Status remove_comm(std::uint32_t index, MPI_Comm *dup);
Status add_type(MPI_Datatype dup, DeviceCopy layout, std::uint32_t *index);
Status remove_type(std::uint32_t index, MPI_Datatype *dup);

// Runs the proxy once where it has no thread: takes posts, tests requests,
// writes completions. *active gets the requests still in flight.
void progress(int *active);
// Whether the proxy runs on its own thread (else inside the application's MPI
// calls).
bool threaded();

}  // namespace gddt::device_api
