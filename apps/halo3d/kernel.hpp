// The 3-D stencil's work on a rank's block where it lives (kernel.cpp).
#pragma once

#include "domain.hpp"

namespace halo3d {

void initialize(const Domain& domain, double* block);             // ghost layers NaN, interior the global values
void sweep(const Domain& domain, const double* in, double* out);  // not waited for

}  // namespace halo3d
