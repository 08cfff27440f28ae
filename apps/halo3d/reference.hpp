// The check of the 3-D stencil's results: the whole periodic grid swept on one process, on the
// host, by the same stencil code.
#pragma once

#include <vector>

#include "domain.hpp"

namespace halo3d {

// This rank's interior (n^3, C order) after `sweeps` sweeps of the whole grid.
std::vector<double> reference_block(const Domain& domain, int sweeps);

}  // namespace halo3d
