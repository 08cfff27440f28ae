// The datatypes the OpenCL benchmarks move (vectors, faces of a 3-D grid, an
// irregular indexed type, a struct of mixed members) and their helpers: timing,
// sizes as text, and the first OpenCL device of the first platform.
#pragma once

#include <CL/cl.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace opencl_bench {

constexpr int kExitSkipped = 77;

struct Case {
  std::string name;
  std::int64_t block = 0; // bytes of the typical contiguous run
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::int64_t packed = 0, span = 0,
               lb = 0; // packed bytes, typed bytes and true lb of one element
};

inline Case finish(std::string name, std::int64_t block, MPI_Datatype type) {
  Case c{std::move(name), block, type};
  MPI_Type_commit(&c.type);
  MPI_Count size = 0, lb = 0, extent = 0;
  MPI_Type_size_x(c.type, &size);
  MPI_Type_get_true_extent_x(c.type, &lb, &extent);
  c.packed = size;
  c.lb = lb;
  c.span = extent;
  return c;
}

inline Case vector_case(std::int64_t block, std::int64_t packed) {
  MPI_Datatype type;
  const int blocks = static_cast<int>(packed / block);
  MPI_Type_vector(blocks, static_cast<int>(block / 4),
                  static_cast<int>(2 * block / 4), MPI_INT, &type);
  return finish("vector", block, type);
}

// A face one cell thick of a cube of doubles holding about `packed` bytes per
// face.
inline Case face_case(int axis, std::int64_t packed) {
  int n = 2;
  while (static_cast<std::int64_t>(n + 1) * (n + 1) * 8 <= packed)
    ++n;
  const int sizes[3] = {n, n, n};
  int subsizes[3] = {n, n, n}, starts[3] = {0, 0, 0};
  subsizes[axis] = 1;
  starts[axis] = n / 2;
  MPI_Datatype type;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE,
                           &type);
  const char *names[3] = {"face x", "face y", "face z"};
  // Rows of a face normal to x are whole planes' rows (n doubles); normal to z,
  // single doubles.
  const std::int64_t block = axis == 0   ? static_cast<std::int64_t>(n) * n * 8
                             : axis == 1 ? n * 8
                                         : 8;
  return finish(names[axis], block, type);
}

inline Case indexed_case(std::int64_t packed) {
  std::mt19937 rng(7);
  std::vector<int> lengths, displacements;
  std::int64_t bytes = 0;
  int at = 0;
  while (bytes < packed) {
    const int length = 1 + static_cast<int>(rng() % 32);
    lengths.push_back(length);
    displacements.push_back(at);
    at += length + 1 + static_cast<int>(rng() % 16);
    bytes += 4 * length;
  }
  MPI_Datatype type;
  MPI_Type_indexed(static_cast<int>(lengths.size()), lengths.data(),
                   displacements.data(), MPI_INT, &type);
  return finish("indexed", 64, type);
}

inline Case struct_case(std::int64_t packed) {
  // A particle record: position (3 doubles), id (int), charge (float), flags (2
  // shorts), padded to 48 B.
  const int lengths[4] = {3, 1, 1, 2};
  const MPI_Aint displacements[4] = {0, 24, 28, 32};
  const MPI_Datatype types[4] = {MPI_DOUBLE, MPI_INT, MPI_FLOAT, MPI_SHORT};
  MPI_Datatype record, resized, type;
  MPI_Type_create_struct(4, lengths, displacements, types, &record);
  MPI_Type_create_resized(record, 0, 48, &resized);
  MPI_Type_contiguous(static_cast<int>(std::max<std::int64_t>(packed / 36, 1)),
                      resized, &type);
  MPI_Type_free(&record);
  MPI_Type_free(&resized);
  return finish("struct", 24, type);
}

inline double median_seconds(int runs, const std::function<void()> &run) {
  run(); // warm-up: programs, tables and staging made once
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

inline std::string human(std::int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.0f %s", value, units[unit]);
  return text;
}

// The first device of the first platform, a context and an in-order queue on
// it.
struct Device {
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  char platform_name[256] = {};
  char device_name[256] = {};
  cl_ulong largest_buffer = 0;
};

inline bool open_first_device(Device *d) {
  cl_platform_id platform = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &d->id, nullptr) !=
          CL_SUCCESS) {
    return false;
  }
  cl_int error = CL_SUCCESS;
  d->context = clCreateContext(nullptr, 1, &d->id, nullptr, nullptr, &error);
  if (error != CL_SUCCESS)
    return false;
  d->queue = clCreateCommandQueue(d->context, d->id, 0, &error);
  if (error != CL_SUCCESS)
    return false;
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof d->platform_name - 1,
                    d->platform_name, nullptr);
  clGetDeviceInfo(d->id, CL_DEVICE_NAME, sizeof d->device_name - 1,
                  d->device_name, nullptr);
  clGetDeviceInfo(d->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d->largest_buffer,
                  &d->largest_buffer, nullptr);
  return true;
}

inline void close_device(Device *d) {
  clReleaseCommandQueue(d->queue);
  clReleaseContext(d->context);
}

// "--max-bytes 16M" and "--runs 9" (the options both benchmarks take); false on
// anything else.
inline bool parse_options(int argc, char **argv, std::int64_t *max_bytes,
                          int *runs) {
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc)
      return false;
    if (std::string(argv[i]) == "--max-bytes") {
      char *end = nullptr;
      *max_bytes = std::strtoll(argv[i + 1], &end, 10);
      if (*end == 'K')
        *max_bytes <<= 10;
      if (*end == 'M')
        *max_bytes <<= 20;
    } else if (std::string(argv[i]) == "--runs") {
      *runs = std::max(1, std::atoi(argv[i + 1]));
    } else {
      return false;
    }
  }
  return true;
}

} // namespace opencl_bench
