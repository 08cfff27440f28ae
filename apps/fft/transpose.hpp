// One pencil transpose in the two versions the app compares; each returns with the destination
// complete and the GPU idle. transpose_hand.cpp is what FFT codes write today,
// transpose_gddt.cpp what gddt lets them write (apps/count_lines.py counts them).
#pragma once

#include <memory>

#include "device.hpp"
#include "pencils.hpp"

namespace fft {

class Transpose {
 public:
  virtual ~Transpose() = default;
  virtual void run(const void* from, void* to) = 0;
};

// "hand": one kernel packs every peer's block into a contiguous buffer, MPI_Alltoallv (PMPI:
// without gddt) moves them from device memory, or through pinned host memory where `stage` (a
// library that is not CUDA-aware), one kernel unpacks them into place.
std::unique_ptr<Transpose> make_hand_transpose(const Blocks& blocks, MPI_Comm comm, apps::MemoryKind arrays,
                                               bool stage);
// "alltoallw": one MPI_Alltoallw of subarray datatypes straight from device memory.
std::unique_ptr<Transpose> make_gddt_transpose(const Blocks& blocks, MPI_Comm comm);

}  // namespace fft
