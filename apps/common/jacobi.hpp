// What the two stencil apps share: a Jacobi run over two arrays that swap after every sweep, and
// the checks of its result.
#pragma once

#include <mpi.h>

#include <functional>

#include "app.hpp"
#include "boxes.hpp"
#include "device.hpp"

namespace apps {

// The serial run's interior, where it was computed: the elements of `interior`, a box of the
// C-order arrays of `dims`, back to back.
struct Reference {
  Extent dims;
  Box interior;
  const void* expected;  // nullptr: not checked
  int element_bytes;
};

// Fills `a` and `b` with `initialize`, then times warmup + iterations iterations of
// exchange(in) and sweep(in, out) (measure()), the arrays swapping after each sweep; the outcome
// has the result's fingerprint and its check against `reference`.
Outcome run_jacobi(MPI_Comm comm, int warmup, int iterations, Buffer& a, Buffer& b, const Reference& reference,
                   const std::function<void(void* array)>& initialize, const std::function<void(void* in)>& exchange,
                   const std::function<void(const void* in, void* out)>& sweep);

}  // namespace apps
