// OSU-style measurements of one method on one case, after a check that it moves the right
// bytes: latency = half the median round trip of a ping-pong; bandwidth = a window of
// back-to-back messages answered by one small acknowledgement, packed bytes over the median
// window time. Slow points run fewer iterations so that each takes about --point-time.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <mpi.h>

#include "cases.hpp"
#include "device_copy.hpp"
#include "methods.hpp"
#include "options.hpp"
#include "workspace.hpp"

namespace gddt::bench {

struct Measurement {
  double latency_us = std::numeric_limits<double>::quiet_NaN();
  double bandwidth_gbs = std::numeric_limits<double>::quiet_NaN();
  std::string status;  // "" when measured; "wrong data", "crashed", "timeout", "not run", "n/a"
};

// What each rank expects to find in its receive buffers after one message of a table's type:
// the peer's send pattern where the type reaches, its own earlier contents elsewhere.
class Expectation {
 public:
  Expectation(int rank, int peer, std::size_t extent);

  // Fills this rank's send buffers with its pattern (once per table).
  void fill_send_buffers(Workspace& workspace) const;
  // Restores the receive buffer that `method` writes before it is checked.
  void reset_receive_buffer(const TransferMethod& method, const Case& message, Workspace& workspace) const;
  // Computes (with the MPI library's own host packing) what a received `message` leaves.
  void expect(const Case& message, MPI_Comm comm);
  // "" when the receive buffer holds what it should, else where it first differs.
  std::string check(const TransferMethod& method, const Case& message, Workspace& workspace);

 private:
  std::vector<std::uint32_t> own_pattern_, peer_pattern_, before_, expected_typed_, expected_packed_, received_;
  std::vector<char> packed_;
};

class Measurer {
 public:
  Measurer(const Options& options, MPI_Comm comm, int rank);

  // True when one message each way arrives intact on both ranks.
  bool verify(TransferMethod& method, const Case& message, Workspace& workspace, Expectation& expectation,
              const char* label);
  double latency_us(TransferMethod& method, const Case& message, Workspace& workspace);
  double bandwidth_gbs(TransferMethod& method, const Case& message, Workspace& workspace);
  // The d2d-copy ceiling, copied by rank 0 alone (`copy` is null on rank 1, which only keeps
  // step with the timing's collectives): latency = the median time of one copy, the whole
  // one-way time of a message; bandwidth = a window of as many copies as bandwidth_gbs sends
  // messages, queued back to back, packed bytes over its median time.
  double copy_latency_us(DeviceCopy* copy, const Case& message);
  double copy_bandwidth_gbs(DeviceCopy* copy, const Case& message);

 private:
  struct Plan {
    int warmup;
    int iterations;
  };
  template <typename Step>
  std::vector<double> time_steps(Step step);
  int window_messages(const Case& message) const;
  // One message each way: rank 0 sends first, rank 1 answers.
  void round_trip(TransferMethod& method, const Case& message, Workspace& workspace);

  const Options& options_;
  MPI_Comm comm_;
  int rank_;
};

// Median one-way latency of an 8-byte host ping-pong through the plain MPI calls (gddt when it
// is loaded) and through PMPI (the library alone), rounds of the two interleaved.
struct HostPingpong {
  double user_us = 0;
  double library_us = 0;
  int rounds = 0;
  int round_trips = 0;
};
HostPingpong measure_host_pingpong(MPI_Comm comm, int rank);

double median(std::vector<double> values);

}  // namespace gddt::bench
