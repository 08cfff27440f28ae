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
//   cuda pack / unpack   the same MPI_Pack / MPI_Unpack of the same bytes in a cudaMalloc buffer
//                        (gddt's CUDA backend on the same GPU where NVIDIA's OpenCL runs), in
//                        builds with CUDA and where a CUDA device answers; "-" elsewhere
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
#include "opencl_cases.hpp"

#if GDDT_BENCH_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using namespace opencl_bench;

// The same typed bytes in CUDA device memory, for the CUDA backend's columns; empty where this
// build or machine has no CUDA device.
class CudaTwin {
 public:
  explicit CudaTwin(const std::vector<unsigned char>& host) {
#if GDDT_BENCH_CUDA
    if (cudaMalloc(&device_, host.size()) != cudaSuccess) {
      device_ = nullptr;
      cudaGetLastError();
      return;
    }
    cudaMemcpy(device_, host.data(), host.size(), cudaMemcpyHostToDevice);
#else
    (void)host;
#endif
  }
  ~CudaTwin() {
#if GDDT_BENCH_CUDA
    if (device_ != nullptr) cudaFree(device_);
#endif
  }
  CudaTwin(const CudaTwin&) = delete;
  CudaTwin& operator=(const CudaTwin&) = delete;
  void* data() const { return device_; }

 private:
  void* device_ = nullptr;
};

std::string rate_or_dash(double gb, double seconds) {
  if (seconds <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", gb / seconds);
  return text;
}

int run(int argc, char** argv) {
  std::int64_t max_bytes = 16 << 20;
  int runs = 9;
  if (!parse_options(argc, argv, &max_bytes, &runs)) {
    std::printf("usage: gddt-bench-opencl-pack [--max-bytes 16M] [--runs 9]\n");
    return 2;
  }
  Device device;
  if (!open_first_device(&device)) {
    std::printf("gddt-bench-opencl-pack: no OpenCL device, skipped\n");
    return kExitSkipped;
  }
  cl_context context = device.context;
  cl_command_queue queue = device.queue;
  cl_int error = CL_SUCCESS;
  std::printf("gddt-bench-opencl-pack: %s / %s, median of %d runs, GB/s of packed bytes\n\n", device.platform_name,
              device.device_name, runs);
  std::printf("%-9s %9s %10s | %10s %10s | %11s | %8s | %9s %11s\n", "case", "block", "packed", "gddt pack",
              "gddt unpack", "manual pack", "read", "cuda pack", "cuda unpack");

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
                    human(static_cast<std::int64_t>(device.largest_buffer)).c_str());
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
      double cuda_pack = 0, cuda_unpack = 0;
      const CudaTwin twin(host);
      if (twin.data() != nullptr) {
        std::fill(packed_bytes.begin(), packed_bytes.end(), 0);
        position = 0;
        MPI_Pack(twin.data(), 1, c.type, packed_bytes.data(), size, &position, MPI_COMM_WORLD);
        if (packed_bytes != expected) {
          std::printf("WRONG: %s of %s packs other bytes from CUDA memory than the library\n", c.name.c_str(),
                      human(c.packed).c_str());
          all_right = false;
        }
        cuda_pack = median_seconds(runs, [&] {
          int at = 0;
          MPI_Pack(twin.data(), 1, c.type, packed_bytes.data(), size, &at, MPI_COMM_WORLD);
        });
        cuda_unpack = median_seconds(runs, [&] {
          int at = 0;
          MPI_Unpack(expected.data(), size, &at, twin.data(), 1, c.type, MPI_COMM_WORLD);
        });
      }
      const double gb = static_cast<double>(c.packed) / 1e9;
      std::printf("%-9s %9s %10s | %10.2f %10.2f | %11.2f | %8.2f | %9s %11s\n", c.name.c_str(),
                  human(c.block).c_str(), human(c.packed).c_str(), gb / pack, gb / unpack, gb / manual, gb / read,
                  rate_or_dash(gb, cuda_pack).c_str(), rate_or_dash(gb, cuda_unpack).c_str());
      MPI_Type_free(&declared);
      MPI_Type_free(&c.type);
      clReleaseMemObject(buffer);
    }
  }
  close_device(&device);
  return all_right ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = run(argc, argv);
  MPI_Finalize();
  return rc;
}
