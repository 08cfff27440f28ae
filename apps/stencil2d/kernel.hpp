// Stencil2D's work on a rank's block where it lives (kernel.cpp: a kernel on the GPU, loops on
// the host).
#pragma once

#include "grid.hpp"

namespace stencil2d {

// Fills a block with the initial matrix, its halo towards a neighbour with NaN (which a missed
// exchange would spread into the results).
template <typename T>
void initialize(const Grid& grid, T* block);

template <typename T>
void sweep(const Grid& grid, const T* in, T* out);  // not waited for

}  // namespace stencil2d
