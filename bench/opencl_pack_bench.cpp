// gddt-bench-opencl-pack: how fast gddt packs and unpacks OpenCL buffers, next to what an OpenCL
// program does without it and to gddt's CUDA backend on the same GPU. For vectors (block 4 B ..
// 64 KiB, stride twice the block), faces of 3-D grids of doubles normal to x, y and z, an indexed
// type of irregular int blocks (4-128 B) and a struct of mixed members, at packed sizes 4 KiB ..
// --max-bytes, it times (median of --runs after a warm-up):
//   gddt pack / unpack   MPI_Pack / MPI_Unpack of a cl_mem declared by gddt_type_opencl,
//                        packed side in host memory
//   manual pack          what a program does today: clEnqueueReadBuffer of the typed span (true
//                        lb to true ub), then the library's MPI_Pack on the host copy
//   read                 clEnqueueReadBuffer of the packed size, the copy roofline
// as GB/s of packed bytes; then, in a second pass over the same cases (so that neither context
// runs work beside the other's timings), in builds with CUDA and where a CUDA device answers:
//   cuda pack / unpack   the same MPI_Pack / MPI_Unpack of the same bytes in a cudaMalloc buffer
//                        (gddt's CUDA backend), and the OpenCL backend's rates over these.
// Every result is checked once against the library's MPI_Pack of a host copy. Run as one MPI
// rank: gddt-bench-opencl-pack [--max-bytes 16M] [--runs 9]
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

// The same typed bytes (the case's span) in CUDA device memory, for the CUDA backend's pass;
// empty where this build or machine has no CUDA device.
class CudaTwin {
 public:
  CudaTwin(const std::vector<unsigned char>& host, const Case& c) {
#if GDDT_BENCH_CUDA
    if (cudaMalloc(&device_, host.size()) != cudaSuccess) {
      device_ = nullptr;
      cudaGetLastError();
      return;
    }
    cudaMemcpy(static_cast<char*>(device_) + c.lb, host.data() + c.lb, static_cast<std::size_t>(c.span),
               cudaMemcpyHostToDevice);
#else
    (void)host;
    (void)c;
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

// The typed bytes of a case: random over its span (the only bytes read), 8 at a time, the same
// in both passes.
std::vector<unsigned char> typed_bytes_of(const Case& c) {
  std::vector<unsigned char> host(static_cast<std::size_t>(c.lb + c.span));
  std::mt19937_64 rng(1);
  for (std::int64_t at = c.lb; at < c.lb + c.span; at += 8) {
    const std::uint64_t word = rng();
    std::memcpy(host.data() + at, &word, static_cast<std::size_t>(std::min<std::int64_t>(8, c.lb + c.span - at)));
  }
  return host;
}

// The packed stream the library makes of a case's typed bytes.
std::vector<unsigned char> expected_of(const Case& c, const std::vector<unsigned char>& host) {
  std::vector<unsigned char> expected(static_cast<std::size_t>(c.packed));
  int position = 0;
  PMPI_Pack(host.data(), 1, c.type, expected.data(), static_cast<int>(c.packed), &position, MPI_COMM_WORLD);
  return expected;
}

struct Rates {
  double pack = 0, unpack = 0;  // seconds; 0: not measured
};

// The OpenCL pass of one case: prints its row and returns gddt's times; false in *right where a
// result is wrong.
Rates opencl_row(const Device& device, int runs, Case& c, bool* right) {
  const std::vector<unsigned char> host = typed_bytes_of(c);
  cl_int error = CL_SUCCESS;
  // A y face of a large grid spans more than PoCL's largest buffer (a quarter of host memory).
  cl_mem buffer = clCreateBuffer(device.context, CL_MEM_READ_WRITE, host.size(), nullptr, &error);
  if (error != CL_SUCCESS) {
    std::printf("%-9s %9s %10s | skipped: no buffer of %s (error %d; the device's largest is %s)\n", c.name.c_str(),
                human(c.block).c_str(), human(c.packed).c_str(), human(static_cast<std::int64_t>(host.size())).c_str(),
                static_cast<int>(error), human(static_cast<std::int64_t>(device.largest_buffer)).c_str());
    return {};
  }
  cl_command_queue queue = device.queue;
  clEnqueueWriteBuffer(queue, buffer, CL_TRUE, static_cast<std::size_t>(c.lb), static_cast<std::size_t>(c.span),
                       host.data() + c.lb, 0, nullptr, nullptr);
  MPI_Datatype declared;
  gddt_type_opencl(c.type, queue, 0, &declared);
  MPI_Type_commit(&declared);
  const std::vector<unsigned char> expected = expected_of(c, host);
  std::vector<unsigned char> packed_bytes(expected.size()), copy(host.size());
  const int size = static_cast<int>(c.packed);
  int position = 0;
  MPI_Pack(buffer, 1, declared, packed_bytes.data(), size, &position, MPI_COMM_WORLD);
  if (packed_bytes != expected) {
    std::printf("WRONG: %s of %s packs other bytes than the library\n", c.name.c_str(), human(c.packed).c_str());
    *right = false;
  }
  Rates gddt;
  gddt.pack = median_seconds(runs, [&] {
    int at = 0;
    MPI_Pack(buffer, 1, declared, packed_bytes.data(), size, &at, MPI_COMM_WORLD);
  });
  gddt.unpack = median_seconds(runs, [&] {
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
              human(c.packed).c_str(), gb / gddt.pack, gb / gddt.unpack, gb / manual, gb / read);
  MPI_Type_free(&declared);
  clReleaseMemObject(buffer);
  return gddt;
}

// The CUDA pass of one case, beside the OpenCL pass's times; false where no CUDA device answers.
bool cuda_row(int runs, const Case& c, const Rates& opencl, bool* right) {
  const std::vector<unsigned char> host = typed_bytes_of(c);
  const CudaTwin twin(host, c);
  if (twin.data() == nullptr) return false;
  const std::vector<unsigned char> expected = expected_of(c, host);
  std::vector<unsigned char> packed_bytes(expected.size());
  const int size = static_cast<int>(c.packed);
  int position = 0;
  MPI_Pack(twin.data(), 1, c.type, packed_bytes.data(), size, &position, MPI_COMM_WORLD);
  if (packed_bytes != expected) {
    std::printf("WRONG: %s of %s packs other bytes from CUDA memory than the library\n", c.name.c_str(),
                human(c.packed).c_str());
    *right = false;
  }
  Rates cuda;
  cuda.pack = median_seconds(runs, [&] {
    int at = 0;
    MPI_Pack(twin.data(), 1, c.type, packed_bytes.data(), size, &at, MPI_COMM_WORLD);
  });
  cuda.unpack = median_seconds(runs, [&] {
    int at = 0;
    MPI_Unpack(expected.data(), size, &at, twin.data(), 1, c.type, MPI_COMM_WORLD);
  });
  const double gb = static_cast<double>(c.packed) / 1e9;
  auto share = [](double opencl_seconds, double cuda_seconds) {
    return opencl_seconds > 0 ? rate_or_dash(cuda_seconds, opencl_seconds) : std::string("-");
  };
  std::printf("%-9s %9s %10s | %9s %11s | %11s %13s\n", c.name.c_str(), human(c.block).c_str(),
              human(c.packed).c_str(), rate_or_dash(gb, cuda.pack).c_str(), rate_or_dash(gb, cuda.unpack).c_str(),
              share(opencl.pack, cuda.pack).c_str(), share(opencl.unpack, cuda.unpack).c_str());
  return true;
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
  std::vector<Case> cases;
  for (std::int64_t packed = 4 << 10; packed <= max_bytes; packed *= 8) {
    for (std::int64_t block = 4; block <= (64 << 10) && block <= packed; block *= 16) {
      cases.push_back(vector_case(block, packed));
    }
    for (int axis = 0; axis < 3; ++axis) cases.push_back(face_case(axis, packed));
    cases.push_back(indexed_case(packed));
    cases.push_back(struct_case(packed));
  }
  std::printf("gddt-bench-opencl-pack: %s / %s, median of %d runs, GB/s of packed bytes\n\n", device.platform_name,
              device.device_name, runs);
  std::printf("%-9s %9s %10s | %10s %10s | %11s | %8s\n", "case", "block", "packed", "gddt pack", "gddt unpack",
              "manual pack", "read");
  bool all_right = true;
  std::vector<Rates> opencl;
  for (Case& c : cases) opencl.push_back(opencl_row(device, runs, c, &all_right));
  close_device(&device);
  bool cuda_header = false;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!cuda_header) {
      std::printf("\nthe CUDA backend on the same cases (cudaMalloc buffers), and the OpenCL backend's rate over it\n");
      std::printf("%-9s %9s %10s | %9s %11s | %11s %13s\n", "case", "block", "packed", "cuda pack", "cuda unpack",
                  "opencl/cuda", "opencl/cuda");
      std::printf("%-9s %9s %10s | %9s %11s | %11s %13s\n", "", "", "", "", "", "pack", "unpack");
      cuda_header = true;
    }
    if (!cuda_row(runs, cases[i], opencl[i], &all_right)) {
      std::printf("(no CUDA device in this build or machine: no CUDA pass)\n");
      break;
    }
  }
  for (Case& c : cases) MPI_Type_free(&c.type);
  return all_right ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = run(argc, argv);
  MPI_Finalize();
  return rc;
}
