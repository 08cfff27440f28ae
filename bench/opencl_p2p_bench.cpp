// gddt-bench-opencl-p2p: point-to-point of OpenCL buffers between two ranks,
// through gddt against what an OpenCL program does without it. For vectors
// (blocks 4 B and 64 B, stride twice the block) and faces of 3-D grids of
// doubles normal to x, y and z, at packed sizes 4 KiB ..
// --max-bytes, a ping-pong of one element each way, as half the round trip
// (median of --runs):
//   gddt     MPI_Send/MPI_Recv of the cl_mem with the datatype declared by
//   gddt_type_opencl manual   clEnqueueReadBuffer of the typed span into a host
//   mirror, MPI_Send of the mirror
//            with the datatype; MPI_Recv into the mirror and
//            clEnqueueWriteBuffer of the span
// with the bandwidth of packed bytes and gddt's speedup. Every case is first
// checked: the receiver's buffer, read back and packed by the library, holds
// the sender's bytes. Run as two MPI ranks: gddt-bench-opencl-p2p [--max-bytes
// 16M] [--runs 21] Exits 1 when a transfer delivered wrong bytes, 77 without an
// OpenCL device.
#include <CL/cl.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "gddt/gddt_mpi.h"
#include "opencl_cases.hpp"

namespace {

using namespace opencl_bench;

constexpr int kTag = 7;

struct Side {
  cl_mem buffer = nullptr;
  MPI_Datatype declared = MPI_DATATYPE_NULL;
  std::vector<unsigned char>
      mirror; // the manual path's host copy of the typed span
};

// Half the median of `runs` round trips, rank 0 starting each.
double half_round_trip(int rank, int runs, const std::function<void()> &send,
                       const std::function<void()> &receive) {
  return median_seconds(runs,
                        [&] {
                          if (rank == 0) {
                            send();
                            receive();
                          } else {
                            receive();
                            send();
                          }
                        }) /
         2;
}

// Rank 0's element, packed by the library, against rank 1's buffer read back
// and packed alike.
bool delivered(int rank, const Case &c, const Device &device, const Side &side,
               const std::vector<unsigned char> &expected) {
  std::vector<unsigned char> copy(side.mirror.size()),
      packed(static_cast<std::size_t>(c.packed));
  clEnqueueReadBuffer(device.queue, side.buffer, CL_TRUE, 0, copy.size(),
                      copy.data(), 0, nullptr, nullptr);
  int position = 0;
  PMPI_Pack(copy.data(), 1, c.type, packed.data(),
            static_cast<int>(packed.size()), &position, MPI_COMM_WORLD);
  int right = rank != 1 || packed == expected;
  MPI_Allreduce(MPI_IN_PLACE, &right, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return right != 0;
}

int run(int argc, char **argv) {
  std::int64_t max_bytes = 16 << 20;
  int runs = 21;
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (!parse_options(argc, argv, &max_bytes, &runs) || ranks != 2) {
    if (rank == 0)
      std::printf("usage: mpiexec -n 2 gddt-bench-opencl-p2p [--max-bytes 16M] "
                  "[--runs 21]\n");
    return 2;
  }
  Device device;
  int opened = open_first_device(&device);
  MPI_Allreduce(MPI_IN_PLACE, &opened, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!opened) {
    if (rank == 0)
      std::printf("gddt-bench-opencl-p2p: no OpenCL device, skipped\n");
    return kExitSkipped;
  }
  if (rank == 0) {
    std::printf("gddt-bench-opencl-p2p: %s / %s, 2 ranks, half round trip, "
                "median of %d\n\n",
                device.platform_name, device.device_name, runs);
    std::printf("%-9s %7s %8s | %10s %10s | %9s %9s | %7s\n", "case", "block",
                "packed", "gddt us", "manual us", "gddt GB/s", "man. GB/s",
                "speedup");
  }
  const int peer = 1 - rank;
  bool all_right = true;
  for (std::int64_t packed = 4 << 10; packed <= max_bytes; packed *= 8) {
    std::vector<Case> cases;
    for (std::int64_t block : {4, 64})
      cases.push_back(vector_case(block, packed));
    for (int axis = 0; axis < 3; ++axis)
      cases.push_back(face_case(axis, packed));
    for (Case &c : cases) {
      const std::int64_t typed_bytes = c.lb + c.span;
      Side side;
      cl_int error = CL_SUCCESS;
      side.buffer = clCreateBuffer(device.context, CL_MEM_READ_WRITE,
                                   static_cast<std::size_t>(typed_bytes),
                                   nullptr, &error);
      int allocated = error == CL_SUCCESS;
      MPI_Allreduce(MPI_IN_PLACE, &allocated, 1, MPI_INT, MPI_LAND,
                    MPI_COMM_WORLD);
      if (!allocated) {
        if (rank == 0) {
          std::printf("%-9s %7s %8s | skipped: no buffer of %s\n",
                      c.name.c_str(), human(c.block).c_str(),
                      human(c.packed).c_str(), human(typed_bytes).c_str());
        }
        if (side.buffer != nullptr)
          clReleaseMemObject(side.buffer);
        MPI_Type_free(&c.type);
        continue;
      }
      side.mirror.resize(static_cast<std::size_t>(typed_bytes));
      std::mt19937 rng(static_cast<unsigned>(rank + 1));
      for (unsigned char &byte : side.mirror)
        byte = static_cast<unsigned char>(rng());
      clEnqueueWriteBuffer(device.queue, side.buffer, CL_TRUE, 0,
                           side.mirror.size(), side.mirror.data(), 0, nullptr,
                           nullptr);
      gddt_type_opencl(c.type, device.queue, 0, &side.declared);
      MPI_Type_commit(&side.declared);
      std::vector<unsigned char> sent(static_cast<std::size_t>(c.packed));
      int position = 0;
      PMPI_Pack(side.mirror.data(), 1, c.type, sent.data(),
                static_cast<int>(sent.size()), &position, MPI_COMM_WORLD);

      auto gddt_send = [&] {
        MPI_Send(side.buffer, 1, side.declared, peer, kTag, MPI_COMM_WORLD);
      };
      auto gddt_receive = [&] {
        MPI_Recv(side.buffer, 1, side.declared, peer, kTag, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      };
      const std::size_t span_at = static_cast<std::size_t>(c.lb),
                        span = static_cast<std::size_t>(c.span);
      auto manual_send = [&] {
        clEnqueueReadBuffer(device.queue, side.buffer, CL_TRUE, span_at, span,
                            side.mirror.data() + span_at, 0, nullptr, nullptr);
        MPI_Send(side.mirror.data(), 1, c.type, peer, kTag, MPI_COMM_WORLD);
      };
      auto manual_receive = [&] {
        MPI_Recv(side.mirror.data(), 1, c.type, peer, kTag, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        clEnqueueWriteBuffer(device.queue, side.buffer, CL_TRUE, span_at, span,
                             side.mirror.data() + span_at, 0, nullptr, nullptr);
      };

      // One transfer rank 0 -> rank 1 each way of moving, checked; rank 1's
      // buffer is refilled with other bytes before the second.
      std::vector<unsigned char> expected = sent;
      MPI_Bcast(expected.data(), static_cast<int>(expected.size()), MPI_BYTE, 0,
                MPI_COMM_WORLD);
      if (rank == 0)
        gddt_send();
      else
        gddt_receive();
      bool right = delivered(rank, c, device, side, expected);
      if (rank == 1) {
        for (unsigned char &byte : side.mirror)
          byte = static_cast<unsigned char>(rng());
        clEnqueueWriteBuffer(device.queue, side.buffer, CL_TRUE, 0,
                             side.mirror.size(), side.mirror.data(), 0, nullptr,
                             nullptr);
      }
      if (rank == 0)
        manual_send();
      else
        manual_receive();
      right = delivered(rank, c, device, side, expected) && right;
      if (!right) {
        if (rank == 0)
          std::printf("WRONG: %s of %s delivered other bytes\n", c.name.c_str(),
                      human(c.packed).c_str());
        all_right = false;
      }

      const double through_gddt =
          half_round_trip(rank, runs, gddt_send, gddt_receive);
      const double manual =
          half_round_trip(rank, runs, manual_send, manual_receive);
      if (rank == 0) {
        const double gb = static_cast<double>(c.packed) / 1e9;
        std::printf("%-9s %7s %8s | %10.1f %10.1f | %9.2f %9.2f | %6.2fx\n",
                    c.name.c_str(), human(c.block).c_str(),
                    human(c.packed).c_str(), through_gddt * 1e6, manual * 1e6,
                    gb / through_gddt, gb / manual, manual / through_gddt);
      }
      MPI_Type_free(&side.declared);
      MPI_Type_free(&c.type);
      clReleaseMemObject(side.buffer);
    }
  }
  close_device(&device);
  return all_right ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const int rc = run(argc, argv);
  MPI_Finalize();
  return rc;
}
