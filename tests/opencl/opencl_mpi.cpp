// cl_mem buffers through the ordinary MPI calls, declared by gddt_type_opencl: MPI_Pack and
// MPI_Unpack against the library's own packing of host copies, and bad input (a queue of another
// context, an offset past the buffer) answered with MPI errors. Exits 77
// (skipped) where no OpenCL device is.
#include <CL/cl.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "gddt/gddt_mpi.h"

namespace {

constexpr int kExitSkipped = 77;

struct Device {
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
};
Device device;

bool open_device(Device* opened) {
  cl_platform_id platform = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS) return false;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &opened->id, nullptr) != CL_SUCCESS) return false;
  cl_int error = CL_SUCCESS;
  opened->context = clCreateContext(nullptr, 1, &opened->id, nullptr, nullptr, &error);
  if (error != CL_SUCCESS) return false;
  opened->queue = clCreateCommandQueue(opened->context, opened->id, 0, &error);
  return error == CL_SUCCESS;
}

std::vector<unsigned char> random_bytes(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> bytes(size);
  for (unsigned char& byte : bytes) byte = static_cast<unsigned char>(rng());
  return bytes;
}

cl_mem buffer_with(const std::vector<unsigned char>& bytes) {
  cl_int error = CL_SUCCESS;
  cl_mem buffer = clCreateBuffer(device.context, CL_MEM_READ_WRITE, bytes.size(), nullptr, &error);
  EXPECT_EQ(error, CL_SUCCESS);
  EXPECT_EQ(clEnqueueWriteBuffer(device.queue, buffer, CL_TRUE, 0, bytes.size(), bytes.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  return buffer;
}

std::vector<unsigned char> contents(cl_mem buffer, std::size_t size) {
  std::vector<unsigned char> bytes(size);
  EXPECT_EQ(clEnqueueReadBuffer(device.queue, buffer, CL_TRUE, 0, size, bytes.data(), 0, nullptr, nullptr), CL_SUCCESS);
  return bytes;
}

// Columns 1..3 of a 16 x 10 grid of doubles with a negative-stride twist: a vector of 3-double
// blocks, resized, in a struct beside an int, so the packed stream has gaps and several pieces.
MPI_Datatype halo_type() {
  MPI_Datatype column, pair;
  MPI_Type_vector(16, 3, 10, MPI_DOUBLE, &column);
  const int lengths[2] = {1, 2};
  const MPI_Aint displacements[2] = {8, 1300};
  const MPI_Datatype types[2] = {column, MPI_INT};
  MPI_Type_create_struct(2, lengths, displacements, types, &pair);
  MPI_Type_free(&column);
  return pair;
}

// What pack_and_unpack_match leaves for more checks: the buffer, its declared type and the
// expected packed bytes (a 4-byte head, the stream, 16 bytes of 0xA5).
struct PackedCase {
  cl_mem buffer = nullptr;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::vector<unsigned char> expected;
};

constexpr MPI_Aint kPackOffset = 40;

class OpenclMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    host_type_ = halo_type();
    MPI_Type_commit(&host_type_);
    MPI_Aint lb = 0;
    MPI_Type_get_extent(host_type_, &lb, &extent_);
    MPI_Type_size(host_type_, &size_);
  }
  void TearDown() override { MPI_Type_free(&host_type_); }

  // host_type_ declared as living in an OpenCL buffer at `offset`, committed.
  MPI_Datatype opencl_type(cl_command_queue queue, MPI_Aint offset) {
    MPI_Datatype type;
    EXPECT_EQ(gddt_type_opencl(host_type_, queue, offset, &type), MPI_SUCCESS);
    EXPECT_EQ(MPI_Type_commit(&type), MPI_SUCCESS);
    return type;
  }

  // MPI_Pack and MPI_Unpack of `count` elements at kPackOffset of an OpenCL buffer give the
  // library's bytes, after a 4-byte head; the gaps of the unpacked buffer keep their poison.
  // Returns the buffer, its type and the packed stream for more checks.
  PackedCase pack_and_unpack_match(int count) {
    PackedCase c;
    const std::size_t bytes = static_cast<std::size_t>(kPackOffset + count * extent_ + 64);
    const std::vector<unsigned char> source = random_bytes(bytes, 1);
    c.buffer = buffer_with(source);
    c.type = opencl_type(device.queue, kPackOffset);
    const int stream = count * size_;
    c.expected.assign(static_cast<std::size_t>(stream) + 16, 0xA5);
    std::vector<unsigned char> packed(c.expected.size(), 0xA5);
    int expected_end = 4, packed_end = 4;  // both after a 4-byte head
    EXPECT_EQ(PMPI_Pack(source.data() + kPackOffset, count, host_type_, c.expected.data(), stream + 16, &expected_end,
                        MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Pack(c.buffer, count, c.type, packed.data(), stream + 16, &packed_end, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(packed_end, expected_end);
    EXPECT_EQ(packed, c.expected);
    // Unpacked into a poisoned buffer: the gaps keep the poison, as in the library's own unpack.
    std::vector<unsigned char> poison = random_bytes(bytes, 2), expected_typed = poison;
    EXPECT_EQ(clEnqueueWriteBuffer(device.queue, c.buffer, CL_TRUE, 0, bytes, poison.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
    int position = 4;
    EXPECT_EQ(PMPI_Unpack(c.expected.data(), stream + 16, &position, expected_typed.data() + kPackOffset, count,
                          host_type_, MPI_COMM_WORLD),
              MPI_SUCCESS);
    position = 4;
    EXPECT_EQ(MPI_Unpack(c.expected.data(), stream + 16, &position, c.buffer, count, c.type, MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(position, 4 + stream);
    EXPECT_EQ(contents(c.buffer, bytes), expected_typed);
    return c;
  }

  MPI_Datatype host_type_ = MPI_DATATYPE_NULL;
  MPI_Aint extent_ = 0;
  int size_ = 0;
};

TEST_F(OpenclMpi, PackAndUnpackAreTheLibrarys) {
  constexpr int kCount = 3;
  PackedCase c = pack_and_unpack_match(kCount);
  // A duplicate keeps the declaration.
  MPI_Datatype duplicate;
  ASSERT_EQ(MPI_Type_dup(c.type, &duplicate), MPI_SUCCESS);
  const int stream = kCount * size_;
  std::vector<unsigned char> again(stream, 0);
  int position = 0;
  ASSERT_EQ(MPI_Pack(c.buffer, kCount, duplicate, again.data(), stream, &position, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_TRUE(std::equal(again.begin(), again.end(), c.expected.begin() + 4));
  MPI_Type_free(&duplicate);
  MPI_Type_free(&c.type);
  clReleaseMemObject(c.buffer);
}

// About 1.2 MB packed: with GDDT_STAGING_CHUNK below that (opencl.mpi_chunked), the backend moves
// it in chunks, kernels overlapping copies.
TEST_F(OpenclMpi, LargeWindowsAreTheLibrarys) {
  PackedCase c = pack_and_unpack_match(3000);
  MPI_Type_free(&c.type);
  clReleaseMemObject(c.buffer);
}

TEST_F(OpenclMpi, BadInputIsAnMpiError) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const std::size_t bytes = static_cast<std::size_t>(2 * extent_ + 64);
  cl_mem buffer = buffer_with(random_bytes(bytes, 3));
  std::vector<unsigned char> packed(2 * size_);
  auto pack_with = [&](MPI_Datatype type, void* buf) {
    int position = 0;
    return MPI_Pack(buf, 2, type, packed.data(), static_cast<int>(packed.size()), &position, MPI_COMM_WORLD);
  };

  // The queue of another context.
  Device other;
  ASSERT_TRUE(open_device(&other));
  MPI_Datatype foreign = opencl_type(other.queue, 0);
  EXPECT_NE(pack_with(foreign, buffer), MPI_SUCCESS);
  MPI_Type_free(&foreign);

  // The elements reach past the buffer's end.
  MPI_Datatype past = opencl_type(device.queue, 128);
  EXPECT_NE(pack_with(past, buffer), MPI_SUCCESS);
  MPI_Type_free(&past);

  // A buffer that fits.
  MPI_Datatype fitting = opencl_type(device.queue, 0);
  EXPECT_EQ(pack_with(fitting, buffer), MPI_SUCCESS);
  clReleaseMemObject(buffer);
  MPI_Type_free(&fitting);

  clReleaseCommandQueue(other.queue);
  clReleaseContext(other.context);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

// Rank 0 sends from an OpenCL buffer by MPI_Send, MPI_Isend and a persistent send (twice); rank 1
// receives into host memory with the plain datatype, then into an OpenCL buffer by MPI_Irecv and a
// persistent receive; then both exchange by MPI_Sendrecv. The wire carries packed bytes, so both must see what the
// library's own pack and unpack of the same bytes give.
TEST_F(OpenclMpi, PointToPointStagesThroughHost) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks < 2) GTEST_SKIP() << "needs two ranks";
  if (rank > 1) return;
  constexpr int kCount = 2;
  constexpr MPI_Aint kOffset = 24;
  const std::size_t bytes = static_cast<std::size_t>(kOffset + kCount * extent_ + 64);
  const std::vector<unsigned char> source = random_bytes(bytes, 11), poison = random_bytes(bytes, 12);
  // What rank 1's typed bytes must become: the library's unpack of the library's pack of source.
  std::vector<unsigned char> packed(kCount * size_), expected = poison;
  int position = 0;
  ASSERT_EQ(PMPI_Pack(source.data() + kOffset, kCount, host_type_, packed.data(), static_cast<int>(packed.size()),
                      &position, MPI_COMM_WORLD),
            MPI_SUCCESS);
  position = 0;
  ASSERT_EQ(PMPI_Unpack(packed.data(), static_cast<int>(packed.size()), &position, expected.data() + kOffset, kCount,
                        host_type_, MPI_COMM_WORLD),
            MPI_SUCCESS);

  cl_mem buffer = buffer_with(rank == 0 ? source : poison);
  MPI_Datatype type = opencl_type(device.queue, kOffset);
  MPI_Request request;
  if (rank == 0) {
    ASSERT_EQ(MPI_Send(buffer, kCount, type, 1, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(buffer, kCount, type, 1, 2, MPI_COMM_WORLD, &request), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(MPI_Send_init(buffer, kCount, type, 1, 3, MPI_COMM_WORLD, &request), MPI_SUCCESS);
    for (int round = 0; round < 2; ++round) {
      ASSERT_EQ(MPI_Start(&request), MPI_SUCCESS);
      ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    MPI_Request_free(&request);
  } else {
    std::vector<unsigned char> host = poison;
    MPI_Status status;
    ASSERT_EQ(MPI_Recv(host.data() + kOffset, kCount, host_type_, 0, 1, MPI_COMM_WORLD, &status), MPI_SUCCESS);
    EXPECT_EQ(host, expected) << "host receive of an OpenCL send";
    ASSERT_EQ(MPI_Irecv(buffer, kCount, type, 0, 2, MPI_COMM_WORLD, &request), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&request, &status), MPI_SUCCESS);
    int received = 0;
    MPI_Get_count(&status, MPI_BYTE, &received);
    EXPECT_EQ(received, kCount * size_);
    EXPECT_EQ(contents(buffer, bytes), expected) << "MPI_Irecv into an OpenCL buffer";
    ASSERT_EQ(MPI_Recv_init(buffer, kCount, type, 0, 3, MPI_COMM_WORLD, &request), MPI_SUCCESS);
    for (int round = 0; round < 2; ++round) {
      ASSERT_EQ(clEnqueueWriteBuffer(device.queue, buffer, CL_TRUE, 0, bytes, poison.data(), 0, nullptr, nullptr),
                CL_SUCCESS);
      ASSERT_EQ(MPI_Start(&request), MPI_SUCCESS);
      ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
      EXPECT_EQ(contents(buffer, bytes), expected) << "persistent receive, round " << round;
    }
    MPI_Request_free(&request);
  }
  // Both ranks' OpenCL buffers now hold the typemap of source; MPI_Sendrecv swaps them into
  // fresh ones (rank 0 into host memory).
  const int peer = 1 - rank;
  std::vector<unsigned char> host = poison;
  cl_mem into = buffer_with(poison);
  ASSERT_EQ(MPI_Sendrecv(buffer, kCount, type, peer, 4, rank == 0 ? static_cast<void*>(host.data() + kOffset) : into,
                         kCount, rank == 0 ? host_type_ : type, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            MPI_SUCCESS);
  if (rank == 0) {
    EXPECT_EQ(host, expected) << "MPI_Sendrecv into host memory";
  } else {
    EXPECT_EQ(contents(into, bytes), expected) << "MPI_Sendrecv into an OpenCL buffer";
  }
  clReleaseMemObject(into);
  MPI_Type_free(&type);
  clReleaseMemObject(buffer);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int result = kExitSkipped;
  if (open_device(&device)) {
    result = RUN_ALL_TESTS();
    clReleaseCommandQueue(device.queue);
    clReleaseContext(device.context);
  }
  MPI_Finalize();
  return result;
}
