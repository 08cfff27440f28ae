// The check of Stencil2D's results: the whole matrix swept on one process, on the host, by the
// same stencil code.
#pragma once

#include <vector>

#include "grid.hpp"

namespace stencil2d {

// This rank's interior (rows x cols, row-major) after `sweeps` sweeps of the whole matrix.
template <typename T>
std::vector<T> reference_block(const Grid& grid, int sweeps);

}  // namespace stencil2d
