// gddt-fuzz-opencl: random nested datatypes packed out of and unpacked into OpenCL buffers by
// gddt's OpenCL backend, compared byte for byte with the MPI library's own PMPI_Pack and
// PMPI_Unpack on host copies of the same bytes. Each type is checked whole and in a random
// window of its packed stream; packed output past the window and the typed buffer's gaps
// (poisoned beforehand) must stay untouched. Exits 77 (skipped) where no OpenCL device is.
#include <CL/cl.h>
#include <mpi.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "fuzz_random.hpp"
#include "fuzz_reference.hpp"
#include "fuzz_type_tree.hpp"
#include "fuzz_typemap.hpp"
#include "pack/engine.hpp"
#include "type/datatype.hpp"

namespace gddt_test::fuzz {
namespace {

using Bytes = std::vector<unsigned char>;
constexpr int kExitSkipped = 77;
constexpr int kMaxReportedFailures = 20;

struct OpenclDevice {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string name;
};

// The first device of the first platform that has one (GDDT_TEST_OPENCL_PLATFORM picks
// another platform by a part of its name, for machines with several).
bool open_device(OpenclDevice* device) {
  cl_uint count = 0;
  if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) return false;
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  const char* wanted = std::getenv("GDDT_TEST_OPENCL_PLATFORM");
  for (cl_platform_id platform : platforms) {
    char name[256] = {};
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    if (wanted != nullptr && std::strstr(name, wanted) == nullptr) continue;
    cl_device_id id = nullptr;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &id, nullptr) != CL_SUCCESS) continue;
    cl_int error = CL_SUCCESS;
    device->context = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &error);
    if (error != CL_SUCCESS) continue;
    device->queue = clCreateCommandQueue(device->context, id, 0, &error);
    if (error != CL_SUCCESS) continue;
    char device_name[256] = {};
    clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof device_name - 1, device_name, nullptr);
    device->name = std::string(name) + " / " + device_name;
    return true;
  }
  return false;
}

void fill_random(Rng* rng, Bytes* bytes) {
  for (unsigned char& byte : *bytes) byte = static_cast<unsigned char>(rng->next());
}

// A layout's window through the OpenCL backend, from a typed buffer in `buffer` whose byte
// `origin` is the datatype's byte 0.
gddt::Status opencl_move(bool packing, const gddt::type::Layout& layout, std::int64_t count, std::int64_t offset,
                         std::int64_t length, const OpenclDevice& device, cl_mem buffer, std::int64_t origin,
                         void* packed) {
  const gddt::pack::Backend* backend = gddt::pack::backend_for(GDDT_MEMORY_OPENCL, GDDT_MEMORY_HOST);
  if (backend == nullptr) return GDDT_ERR_INTERNAL;
  const gddt::pack::Window window{&layout, count, offset, length};
  gddt::memory::OpenclBuffer typed{buffer, device.queue, origin};
  return packing ? backend->pack(window, &typed, packed, nullptr) : backend->unpack(window, &typed, packed, nullptr);
}

struct Tally {
  std::int64_t checked = 0, failed = 0;
  std::map<std::string, std::int64_t> not_checked;
};

class TypeCheck {
 public:
  TypeCheck(const OpenclDevice& device, MpiLibrary library, Tally* tally, std::uint64_t seed, std::int64_t index,
            int rank)
      : device_(device),
        library_(library),
        tally_(*tally),
        index_(index),
        rank_(rank),
        rng_(type_seed(seed, static_cast<std::uint64_t>(index))) {}

  void run() {
    const TypeNode node = random_type(&rng_, TypeLimits{}, rank_);
    description_ = describe(node);
    const std::int64_t count = rng_.between(1, 4);
    LibraryBoundsMap bounds;
    MPI_Datatype datatype;
    if (build_datatype(node, rng_.next(), &datatype, &bounds) != MPI_SUCCESS ||
        MPI_Type_commit(&datatype) != MPI_SUCCESS) {
      fail("building the datatype failed");
      return;
    }
    if (const char* why = reason_not_checked(node, count, bounds)) {
      ++tally_.not_checked[why];
    } else {
      gddt::type::Layout layout;
      const gddt::Status status = gddt::type::decode(datatype, &layout);
      if (status == GDDT_ERR_UNSUPPORTED) {
        ++tally_.not_checked["gddt does not express the type (the library's own)"];
      } else if (status != GDDT_OK) {
        fail("decode returned " + std::to_string(status));
      } else {
        check(datatype, layout, count);
      }
    }
    MPI_Type_free(&datatype);
  }

 private:
  const char* reason_not_checked(const TypeNode& node, std::int64_t count, const LibraryBoundsMap& bounds) {
    if (const char* why = reference_unusable(library_, node)) return why;
    // The library leaves the padding of an x87 long double undefined (usage.md): no reference.
    for (MPI_Datatype padded : {MPI_LONG_DOUBLE, MPI_LONG_DOUBLE_INT, MPI_C_LONG_DOUBLE_COMPLEX}) {
      if (contains_named_type(node, padded)) return "long double padding is undefined in the library";
    }
    if (!expand_typemap(node, padding_rule(library_), TypeLimits{}.max_runs, &typemap_, &bounds)) {
      return "typemap too large for the fuzzer";
    }
    if (std::max(typemap_.ub, typemap_.true_ub()) - std::min(typemap_.lb, typemap_.true_lb()) > (64 << 20)) {
      return "the library's bounds are implausible";
    }
    unpack_unusable_ = reference_unpack_unusable(library_, typemap_);
    if (unpack_unusable_ == nullptr && overlaps(typemap_, count)) unpack_unusable_ = "overlapping typemap";
    return nullptr;
  }

  void check(MPI_Datatype datatype, const gddt::type::Layout& layout, std::int64_t count) {
    const std::int64_t low = layout.span_lb(count), high = layout.span_ub(count);
    // A shift of 0..15 bytes gives the kernels every word width.
    const std::int64_t origin = 64 - low + rng_.between(0, 15);
    const std::size_t typed_bytes = static_cast<std::size_t>(origin + high + 64);
    const std::int64_t stream = count * layout.size;
    if (stream == 0) {
      ++tally_.not_checked["no bytes to pack"];
      return;
    }
    Bytes source(typed_bytes);
    fill_random(&rng_, &source);
    Bytes reference(static_cast<std::size_t>(stream));
    int position = 0;
    if (PMPI_Pack(source.data() + origin, static_cast<int>(count), datatype, reference.data(),
                  static_cast<int>(reference.size()), &position, MPI_COMM_WORLD) != MPI_SUCCESS ||
        position != stream) {
      fail("PMPI_Pack failed");
      return;
    }
    ++tally_.checked;
    cl_int error = CL_SUCCESS;
    cl_mem buffer = clCreateBuffer(device_.context, CL_MEM_READ_WRITE, typed_bytes, nullptr, &error);
    if (error != CL_SUCCESS) {
      fail("clCreateBuffer failed");
      return;
    }
    clEnqueueWriteBuffer(device_.queue, buffer, CL_TRUE, 0, typed_bytes, source.data(), 0, nullptr, nullptr);
    // The whole stream, then a random window of it.
    std::int64_t first = 0, length = stream;
    for (int pass = 0; pass < 2 && !failed_; ++pass) {
      Bytes packed(static_cast<std::size_t>(length) + 64), poison(packed.size());
      fill_random(&rng_, &poison);
      packed = poison;
      const gddt::Status status =
          opencl_move(true, layout, count, first, length, device_, buffer, origin, packed.data());
      if (status != GDDT_OK) {
        fail("pack returned " + std::to_string(status));
      } else if (!std::equal(packed.begin(), packed.begin() + length, reference.begin() + first)) {
        fail("packed bytes differ from PMPI_Pack's in window [" + std::to_string(first) + ", " +
             std::to_string(first + length) + ")");
      } else if (!std::equal(packed.begin() + length, packed.end(), poison.begin() + length)) {
        fail("pack wrote past its window");
      }
      first = rng_.between(0, stream - 1);
      length = rng_.between(1, stream - first);
    }
    if (!failed_ && unpack_unusable_ != nullptr) ++tally_.not_checked[std::string("unpack: ") + unpack_unusable_];
    if (!failed_ && unpack_unusable_ == nullptr) check_unpack(datatype, layout, count, buffer, origin, reference);
    clReleaseMemObject(buffer);
  }

  // Unpacked in two windows split at a random byte into a poisoned buffer: every byte, gaps
  // included, must be what PMPI_Unpack leaves in a host copy of the same poison.
  void check_unpack(MPI_Datatype datatype, const gddt::type::Layout& layout, std::int64_t count, cl_mem buffer,
                    std::int64_t origin, const Bytes& packed) {
    Bytes expected(static_cast<std::size_t>(origin + layout.span_ub(count) + 64));
    fill_random(&rng_, &expected);
    clEnqueueWriteBuffer(device_.queue, buffer, CL_TRUE, 0, expected.size(), expected.data(), 0, nullptr, nullptr);
    int position = 0;
    if (PMPI_Unpack(packed.data(), static_cast<int>(packed.size()), &position, expected.data() + origin,
                    static_cast<int>(count), datatype, MPI_COMM_WORLD) != MPI_SUCCESS) {
      fail("PMPI_Unpack failed");
      return;
    }
    const std::int64_t stream = static_cast<std::int64_t>(packed.size());
    const std::int64_t split = rng_.between(0, stream);
    for (auto [first, length] : {std::pair{std::int64_t{0}, split}, std::pair{split, stream - split}}) {
      const gddt::Status status = opencl_move(false, layout, count, first, length, device_, buffer, origin,
                                              const_cast<unsigned char*>(packed.data()) + first);
      if (status != GDDT_OK) return fail("unpack returned " + std::to_string(status));
    }
    Bytes unpacked(expected.size());
    clEnqueueReadBuffer(device_.queue, buffer, CL_TRUE, 0, unpacked.size(), unpacked.data(), 0, nullptr, nullptr);
    const auto mismatch = std::mismatch(unpacked.begin(), unpacked.end(), expected.begin());
    if (mismatch.first != unpacked.end()) {
      fail("unpacked buffer differs from PMPI_Unpack's at typed byte " +
           std::to_string(mismatch.first - unpacked.begin() - origin));
    }
  }

  void fail(const std::string& what) {
    failed_ = true;
    if (tally_.failed++ < kMaxReportedFailures) {
      std::printf("FAIL rank %d type %" PRId64 ": %s\n  %s\n", rank_, index_, what.c_str(), description_.c_str());
    }
  }

  const OpenclDevice& device_;
  MpiLibrary library_;
  Tally& tally_;
  std::int64_t index_;
  int rank_;
  Rng rng_;
  std::string description_;
  Typemap typemap_;
  const char* unpack_unusable_ = nullptr;
  bool failed_ = false;
};

int run(int argc, char** argv) {
  std::int64_t types = 5000;
  std::uint64_t seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--types") {
      types = std::strtoll(argv[i + 1], nullptr, 10);
    } else if (flag == "--seed") {
      seed = std::strtoull(argv[i + 1], nullptr, 0);
    } else {
      std::printf("usage: gddt-fuzz-opencl [--types N] [--seed S]\n");
      return 2;
    }
  }
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  OpenclDevice device;
  if (!open_device(&device)) {
    std::printf("gddt-fuzz-opencl: no OpenCL device, skipped\n");
    return kExitSkipped;
  }
  std::string version;
  const MpiLibrary library = detect_mpi_library(&version);
  if (rank == 0)
    std::printf("gddt-fuzz-opencl: %" PRId64 " types, seed %" PRIu64 ", %s\n", types, seed, device.name.c_str());
  Tally tally;
  for (std::int64_t index = rank; index < types; index += ranks) {
    TypeCheck(device, library, &tally, seed, index, rank).run();
  }
  long long totals[2] = {tally.checked, tally.failed}, sums[2] = {0, 0};
  MPI_Reduce(totals, sums, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  for (const auto& [why, how_many] : tally.not_checked) {
    std::printf("rank %d: %" PRId64 " types not checked: %s\n", rank, how_many, why.c_str());
  }
  if (rank == 0) std::printf("gddt-fuzz-opencl: %lld types checked, %lld failed\n", sums[0], sums[1]);
  clReleaseCommandQueue(device.queue);
  clReleaseContext(device.context);
  int failed_anywhere = 0, failed_here = tally.failed > 0 ? 1 : 0;
  MPI_Allreduce(&failed_here, &failed_anywhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return failed_anywhere != 0 ? 1 : 0;
}

}  // namespace
}  // namespace gddt_test::fuzz

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rc = gddt_test::fuzz::run(argc, argv);
  MPI_Finalize();
  return rc;
}
