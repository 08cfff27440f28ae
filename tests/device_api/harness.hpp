// What the CPU tests of the device API share (device_api_test.cpp and its case files): the
// ranks, a failure count and checks that count, host threads standing in for kernels, buffers
// filled or poisoned and what the library's own MPI_Pack/MPI_Unpack makes of them.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <functional>
#include <vector>

#include "gddt/gddt_device_core.h"
#include "type_cases.hpp"

namespace device_api_test {

constexpr gddt::device::SoloGroup kThread{};

extern int rank, nranks;
extern int failures;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #cond); \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

#define CHECK_RC(expr, want)                                                                                       \
  do {                                                                                                             \
    const int got_ = (expr);                                                                                       \
    if (got_ != (want)) {                                                                                          \
      std::fprintf(stderr, "rank %d: %s:%d: %s returned %d, expected %d\n", rank, __FILE__, __LINE__, #expr, got_, \
                   (want));                                                                                        \
      ++failures;                                                                                                  \
    }                                                                                                              \
  } while (0)

// Runs `body(i)` on `threads` host threads standing in for kernels while this
// thread drives the proxy (a no-op where it has a thread of its own).
void on_device(int threads, const std::function<void(int)> &body);
void on_device(const std::function<void()> &body);

// The committed type cases with their device handles.
std::vector<TypeCase> make_types();

// A buffer of `count` elements of `type`, filled from `seed` (or poisoned with
// 0xEE).
std::vector<unsigned char> buffer_for(MPI_Datatype type, int count, int seed);

// What a poisoned receive buffer holds after receiving `count` elements sent
// from a buffer filled from `seed`: the library's MPI_Unpack of its MPI_Pack.
std::vector<unsigned char> expected_for(MPI_Datatype type, int count, int seed);

int type_size(MPI_Datatype type);
long long counter(const char *name);

}  // namespace device_api_test
