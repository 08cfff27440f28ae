// gddt-bench-opencl-pack: how fast gddt packs and unpacks OpenCL buffers, next to what an OpenCL
// program does without it. For vectors (block 4 B .. 64 KiB, stride twice the block), faces of
// 3-D grids of doubles normal to x, y and z, an indexed type of irregular int blocks (4-128 B)
// and a struct of mixed members, at packed sizes 4 KiB .. --max-bytes, it times (median of
// --runs after a warm-up):
//   gddt pack / unpack   MPI_Pack / MPI_Unpack of a cl_mem declared by gddt_type_opencl,
//                        packed side in host memory
//   manual pack          what a program does today: clEnqueueReadBuffer of the typed span (true
//                        lb to true ub), then the library's MPI_Pack on the host copy
//   read                 clEnqueueReadBuffer of the packed size, the copy roofline
// as GB/s of packed bytes. Every result is checked once against the library's MPI_Pack of a
// host copy. Run as one MPI rank: gddt-bench-opencl-pack [--max-bytes 16M] [--runs 9]
// Exits 1 when a result is wrong, 77 without an OpenCL device.
#include <CL/cl.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gddt/gddt_mpi.h"

namespace {

constexpr int kExitSkipped = 77;

struct Case {
  std::string name;
  std::int64_t block = 0;  // bytes of the typical contiguous run
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::int64_t packed = 0, span = 0, lb = 0;  // packed bytes, typed bytes and true lb of one element
};

Case finish(std::string name, std::int64_t block, MPI_Datatype type) {
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

Case vector_case(std::int64_t block, std::int64_t packed) {
  MPI_Datatype type;
  const int blocks = static_cast<int>(packed / block);
  MPI_Type_vector(blocks, static_cast<int>(block / 4), static_cast<int>(2 * block / 4), MPI_INT, &type);
  return finish("vector", block, type);
}

// A face one cell thick of a cube of doubles holding about `packed` bytes per face.
Case face_case(int axis, std::int64_t packed) {
  int n = 2;
  while (static_cast<std::int64_t>(n + 1) * (n + 1) * 8 <= packed) ++n;
  const int sizes[3] = {n, n, n};
  int subsizes[3] = {n, n, n}, starts[3] = {0, 0, 0};
  subsizes[axis] = 1;
  starts[axis] = n / 2;
  MPI_Datatype type;
  MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &type);
  const char* names[3] = {"face x", "face y", "face z"};
  // Rows of a face normal to x are whole planes' rows (n doubles); normal to z, single doubles.
  const std::int64_t block = axis == 0 ? static_cast<std::int64_t>(n) * n * 8 : axis == 1 ? n * 8 : 8;
  return finish(names[axis], block, type);
}

Case indexed_case(std::int64_t packed) {
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
  MPI_Type_indexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(), MPI_INT, &type);
  return finish("indexed", 64, type);
}

Case struct_case(std::int64_t packed) {
  // A particle record: position (3 doubles), id (int), charge (float), flags (2 shorts), padded to 48 B.
  const int lengths[4] = {3, 1, 1, 2};
  const MPI_Aint displacements[4] = {0, 24, 28, 32};
  const MPI_Datatype types[4] = {MPI_DOUBLE, MPI_INT, MPI_FLOAT, MPI_SHORT};
  MPI_Datatype record, resized, type;
  MPI_Type_create_struct(4, lengths, displacements, types, &record);
  MPI_Type_create_resized(record, 0, 48, &resized);
  MPI_Type_contiguous(static_cast<int>(std::max<std::int64_t>(packed / 36, 1)), resized, &type);
  MPI_Type_free(&record);
  MPI_Type_free(&resized);
  return finish("struct", 24, type);
}

double median_seconds(int runs, const std::function<void()>& run) {
  run();  // warm-up: programs, tables and staging made once
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::string human(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
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

int run(int argc, char** argv) {
  std::int64_t max_bytes = 16 << 20;
  int runs = 9;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--max-bytes") == 0) {
      char* end = nullptr;
      max_bytes = std::strtoll(argv[i + 1], &end, 10);
      if (*end == 'K') max_bytes <<= 10;
      if (*end == 'M') max_bytes <<= 20;
    } else if (std::strcmp(argv[i], "--runs") == 0) {
      runs = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::printf("usage: gddt-bench-opencl-pack [--max-bytes 16M] [--runs 9]\n");
      return 2;
    }
  }
  cl_platform_id platform = nullptr;
  cl_device_id device_id = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device_id, nullptr) != CL_SUCCESS) {
    std::printf("gddt-bench-opencl-pack: no OpenCL device, skipped\n");
    return kExitSkipped;
  }
  cl_int error = CL_SUCCESS;
  cl_context context = clCreateContext(nullptr, 1, &device_id, nullptr, nullptr, &error);
  cl_command_queue queue = clCreateCommandQueue(context, device_id, 0, &error);
  char platform_name[256] = {}, device_name[256] = {};
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof platform_name - 1, platform_name, nullptr);
  clGetDeviceInfo(device_id, CL_DEVICE_NAME, sizeof device_name - 1, device_name, nullptr);
  cl_ulong largest_buffer = 0;
  clGetDeviceInfo(device_id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof largest_buffer, &largest_buffer, nullptr);
  std::printf("gddt-bench-opencl-pack: %s / %s, median of %d runs, GB/s of packed bytes\n\n", platform_name,
              device_name, runs);
  std::printf("%-9s %9s %10s | %10s %10s | %11s | %8s\n", "case", "block", "packed", "gddt pack", "gddt unpack",
              "manual pack", "read");

  bool all_right = true;
  for (std::int64_t packed = 4 << 10; packed <= max_bytes; packed *= 8) {
    std::vector<Case> cases;
    for (std::int64_t block = 4; block <= (64 << 10) && block <= packed; block *= 16) {
      cases.push_back(vector_case(block, packed));
    }
    for (int axis = 0; axis < 3; ++axis) cases.push_back(face_case(axis, packed));
    cases.push_back(indexed_case(packed));
    cases.push_back(struct_case(packed));
    for (Case& c : cases) {
      const std::int64_t typed_bytes = c.lb + c.span;
      // A y face of a large grid spans more than PoCL's largest buffer (a quarter of host memory).
      cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, static_cast<std::size_t>(typed_bytes), nullptr, &error);
      if (error != CL_SUCCESS) {
        std::printf("%-9s %9s %10s | skipped: no buffer of %s (error %d; the device's largest is %s)\n", c.name.c_str(),
                    human(c.block).c_str(), human(c.packed).c_str(), human(typed_bytes).c_str(), static_cast<int>(error),
                    human(static_cast<std::int64_t>(largest_buffer)).c_str());
        MPI_Type_free(&c.type);
        continue;
      }
      std::vector<unsigned char> host(static_cast<std::size_t>(typed_bytes));
      std::mt19937 rng(1);
      for (unsigned char& byte : host) byte = static_cast<unsigned char>(rng());
      clEnqueueWriteBuffer(queue, buffer, CL_TRUE, 0, host.size(), host.data(), 0, nullptr, nullptr);
      MPI_Datatype declared;
      gddt_type_opencl(c.type, queue, 0, &declared);
      MPI_Type_commit(&declared);
      std::vector<unsigned char> expected(static_cast<std::size_t>(c.packed)), packed_bytes(expected.size());
      std::vector<unsigned char> copy(host.size());
      const int size = static_cast<int>(c.packed);
      int position = 0;
      PMPI_Pack(host.data(), 1, c.type, expected.data(), size, &position, MPI_COMM_WORLD);
      position = 0;
      MPI_Pack(buffer, 1, declared, packed_bytes.data(), size, &position, MPI_COMM_WORLD);
      if (packed_bytes != expected) {
        std::printf("WRONG: %s of %s packs other bytes than the library\n", c.name.c_str(), human(c.packed).c_str());
        all_right = false;
      }
      const double pack = median_seconds(runs, [&] {
        int at = 0;
        MPI_Pack(buffer, 1, declared, packed_bytes.data(), size, &at, MPI_COMM_WORLD);
      });
      const double unpack = median_seconds(runs, [&] {
        int at = 0;
        MPI_Unpack(expected.data(), size, &at, buffer, 1, declared, MPI_COMM_WORLD);
      });
      const double manual = median_seconds(runs, [&] {
        clEnqueueReadBuffer(queue, buffer, CL_TRUE, static_cast<std::size_t>(c.lb), static_cast<std::size_t>(c.span),
                            copy.data() + c.lb, 0, nullptr, nullptr);
        int at = 0;
        PMPI_Pack(copy.data(), 1, c.type, packed_bytes.data(), size, &at, MPI_COMM_WORLD);
      });
      const double read = median_seconds(runs, [&] {
        clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, expected.size(), packed_bytes.data(), 0, nullptr, nullptr);
      });
      const double gb = static_cast<double>(c.packed) / 1e9;
      std::printf("%-9s %9s %10s | %10.2f %10.2f | %11.2f | %8.2f\n", c.name.c_str(), human(c.block).c_str(),
                  human(c.packed).c_str(), gb / pack, gb / unpack, gb / manual, gb / read);
      MPI_Type_free(&declared);
      MPI_Type_free(&c.type);
      clReleaseMemObject(buffer);
    }
  }
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return all_right ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = run(argc, argv);
  MPI_Finalize();
  return rc;
}
