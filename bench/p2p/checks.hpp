// Every CUDA and MPI call of the benchmark is checked; a failure names the call, the place
// and the rank, then ends the whole job (a half-failed measurement is worse than none).
#pragma once

#include <string>

#include <cuda_runtime_api.h>
#include <mpi.h>

namespace gddt::bench {

[[noreturn]] void die(const std::string& message);
[[noreturn]] void die_at(const char* call, const char* file, int line, const std::string& detail);
std::string mpi_error_text(int code);

}  // namespace gddt::bench

#define BENCH_CUDA_CHECK(call)                                                                 \
  do {                                                                                         \
    const cudaError_t bench_cuda_error_ = (call);                                              \
    if (bench_cuda_error_ != cudaSuccess) {                                                    \
      ::gddt::bench::die_at(#call, __FILE__, __LINE__, cudaGetErrorString(bench_cuda_error_)); \
    }                                                                                          \
  } while (0)

#define BENCH_MPI_CHECK(call)                                                                       \
  do {                                                                                              \
    const int bench_mpi_error_ = (call);                                                            \
    if (bench_mpi_error_ != MPI_SUCCESS) {                                                          \
      ::gddt::bench::die_at(#call, __FILE__, __LINE__, ::gddt::bench::mpi_error_text(bench_mpi_error_)); \
    }                                                                                               \
  } while (0)
