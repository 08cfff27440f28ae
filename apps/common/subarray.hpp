// A box of a 3-D C-order array as the datatype the gddt versions send straight from device
// memory.
#pragma once

#include <mpi.h>

#include "boxes.hpp"

namespace apps {

MPI_Datatype subarray(const Extent& dims, const Box& box, MPI_Datatype element);  // committed

}  // namespace apps
