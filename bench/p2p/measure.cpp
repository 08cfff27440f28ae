#include "measure.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "checks.hpp"

namespace gddt::bench {
namespace {

constexpr int kAckTag = 101;
constexpr std::uint32_t kSendSeed = 0x51;
constexpr std::uint32_t kBeforeSeed = 0xB0;
constexpr std::size_t kMostWindowBytes = std::size_t{128} << 20;  // bounds a bandwidth window's time

std::string first_difference(const std::vector<std::uint32_t>& got, const std::uint32_t* want, std::size_t words) {
  for (std::size_t i = 0; i < words; ++i) {
    if (got[i] != want[i]) {
      char text[160];
      std::snprintf(text, sizeof text, "4-byte word at byte %zu is 0x%08" PRIx32 ", expected 0x%08" PRIx32, i * 4,
                    got[i], want[i]);
      return text;
    }
  }
  return "";
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

Expectation::Expectation(int rank, int peer, std::size_t extent)
    : own_pattern_(pattern_words(extent, kSendSeed + static_cast<std::uint32_t>(rank))),
      peer_pattern_(pattern_words(extent, kSendSeed + static_cast<std::uint32_t>(peer))),
      before_(pattern_words(extent, kBeforeSeed + static_cast<std::uint32_t>(rank))) {}

void Expectation::fill_send_buffers(Workspace& workspace) const {
  workspace.typed_send().upload(own_pattern_.data(), workspace.typed_send().size());
  workspace.contig_send().upload(own_pattern_.data(), workspace.contig_send().size());
}

void Expectation::reset_receive_buffer(const TransferMethod& method, const Case& message, Workspace& workspace) const {
  if (method.moves_contiguous_bytes() || method.receives_packed()) {
    workspace.contig_recv().upload(before_.data(), message.packed);
  } else {
    workspace.typed_recv().upload(before_.data(), message.extent);
  }
}

void Expectation::expect(const Case& message, MPI_Comm comm) {
  int packed_size = 0;
  BENCH_MPI_CHECK(PMPI_Pack_size(message.count, message.type, comm, &packed_size));
  packed_.resize(static_cast<std::size_t>(packed_size));
  int position = 0;
  BENCH_MPI_CHECK(PMPI_Pack(peer_pattern_.data(), message.count, message.type, packed_.data(), packed_size, &position, comm));
  expected_typed_.assign(before_.begin(), before_.begin() + static_cast<std::ptrdiff_t>(message.extent / 4));
  const int packed_bytes = position;
  position = 0;
  BENCH_MPI_CHECK(PMPI_Unpack(packed_.data(), packed_bytes, &position, expected_typed_.data(), message.count,
                              message.type, comm));
}

std::string Expectation::check(const TransferMethod& method, const Case& message, Workspace& workspace) {
  if (method.moves_contiguous_bytes()) {
    received_.resize(message.packed / 4);
    workspace.contig_recv().download(received_.data(), message.packed);
    return first_difference(received_, peer_pattern_.data(), received_.size());
  }
  if (method.receives_packed()) {
    received_.resize(message.packed / 4);
    workspace.contig_recv().download(received_.data(), message.packed);
    expected_packed_.resize(message.packed / 4);
    std::memcpy(expected_packed_.data(), packed_.data(), std::min(packed_.size(), message.packed));
    return first_difference(received_, expected_packed_.data(), received_.size());
  }
  received_.resize(message.extent / 4);
  workspace.typed_recv().download(received_.data(), message.extent);
  return first_difference(received_, expected_typed_.data(), received_.size());
}

Measurer::Measurer(const Options& options, MPI_Comm comm, int rank) : options_(options), comm_(comm), rank_(rank) {}

void Measurer::round_trip(TransferMethod& method, const Case& message, Workspace& workspace) {
  if (rank_ == 0) {
    method.send(message, workspace);
    method.recv(message, workspace);
  } else {
    method.recv(message, workspace);
    method.send(message, workspace);
  }
}

bool Measurer::verify(TransferMethod& method, const Case& message, Workspace& workspace, Expectation& expectation,
                      const char* label) {
  expectation.reset_receive_buffer(method, message, workspace);
  BENCH_MPI_CHECK(PMPI_Barrier(comm_));
  round_trip(method, message, workspace);
  const std::string problem = expectation.check(method, message, workspace);
  if (!problem.empty()) {
    std::fprintf(stderr, "gddt-bench (rank %d): %s, packed %zu B: wrong data received: %s\n", rank_, label,
                 message.packed, problem.c_str());
  }
  int intact = problem.empty() ? 1 : 0;
  BENCH_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, &intact, 1, MPI_INT, MPI_MIN, comm_));
  return intact == 1;
}

template <typename Step>
std::vector<double> Measurer::time_steps(Step step) {
  BENCH_MPI_CHECK(PMPI_Barrier(comm_));
  const double start = PMPI_Wtime();
  step();
  const double probe = std::max(PMPI_Wtime() - start, 1e-9);
  int plan[2] = {0, 0};  // steps per warm-up batch, timed steps: rank 0 decides for both
  if (rank_ == 0) {
    const int most = options_.max_iterations;
    const double fitting = std::floor(options_.point_seconds / probe);
    plan[1] = static_cast<int>(std::clamp(fitting, static_cast<double>(std::min(3, most)), static_cast<double>(most)));
    plan[0] = static_cast<int>(std::clamp(std::floor(fitting / 8), 1.0, 50.0));
  }
  BENCH_MPI_CHECK(PMPI_Bcast(plan, 2, MPI_INT, 0, comm_));
  // Warm-up runs up to --warmup steps within the point time, in batches after each of which
  // rank 0 says whether to go on: MPI libraries settle slowly (Open MPI 5 + UCX moves its first
  // ~300 host messages of 4 KiB 5x slower than the rest), and the first step, which sized the
  // run, is no guide to how many steps that takes.
  const double warm_start = PMPI_Wtime();
  int warmed = 0;
  int more = options_.warmup > 0 ? 1 : 0;
  while (more != 0) {
    const int batch = std::min(plan[0], options_.warmup - warmed);
    for (int i = 0; i < batch; ++i) step();
    warmed += batch;
    more = warmed < options_.warmup && PMPI_Wtime() - warm_start < options_.point_seconds ? 1 : 0;
    BENCH_MPI_CHECK(PMPI_Bcast(&more, 1, MPI_INT, 0, comm_));
  }
  std::vector<double> seconds;
  seconds.reserve(static_cast<std::size_t>(plan[1]));
  for (int i = 0; i < plan[1]; ++i) {
    const double begin = PMPI_Wtime();
    step();
    seconds.push_back(PMPI_Wtime() - begin);
  }
  return seconds;
}

double Measurer::latency_us(TransferMethod& method, const Case& message, Workspace& workspace) {
  const std::vector<double> round_trips = time_steps([&] { round_trip(method, message, workspace); });
  return median(round_trips) / 2 * 1e6;
}

int Measurer::window_messages(const Case& message) const {
  return static_cast<int>(
      std::clamp<std::size_t>(kMostWindowBytes / message.packed, 1, static_cast<std::size_t>(options_.window)));
}

double Measurer::bandwidth_gbs(TransferMethod& method, const Case& message, Workspace& workspace) {
  const int window = window_messages(message);
  int ack = 0;
  const std::vector<double> windows = time_steps([&] {
    if (rank_ == 0) {
      method.send_window(message, workspace, window);
      BENCH_MPI_CHECK(PMPI_Recv(&ack, 1, MPI_INT, 1, kAckTag, comm_, MPI_STATUS_IGNORE));
    } else {
      method.recv_window(message, workspace, window);
      BENCH_MPI_CHECK(PMPI_Send(&ack, 1, MPI_INT, 0, kAckTag, comm_));
    }
  });
  return static_cast<double>(window) * static_cast<double>(message.packed) / median(windows) / 1e9;
}

double Measurer::copy_latency_us(DeviceCopy* copy, const Case& message) {
  const std::vector<double> copies = time_steps([&] {
    if (copy != nullptr) copy->copy(message.packed, 1);
  });
  return median(copies) * 1e6;
}

double Measurer::copy_bandwidth_gbs(DeviceCopy* copy, const Case& message) {
  const int window = window_messages(message);
  const std::vector<double> windows = time_steps([&] {
    if (copy != nullptr) copy->copy(message.packed, window);
  });
  return static_cast<double>(window) * static_cast<double>(message.packed) / median(windows) / 1e9;
}

HostPingpong measure_host_pingpong(MPI_Comm comm, int rank) {
  HostPingpong result;
  result.rounds = 31;
  result.round_trips = 4000;
  std::uint64_t word = 0;
  const auto one_round = [&](const PointToPointCalls& calls) {
    BENCH_MPI_CHECK(PMPI_Barrier(comm));
    const double start = PMPI_Wtime();
    for (int i = 0; i < result.round_trips; ++i) {
      if (rank == 0) {
        BENCH_MPI_CHECK(calls.send(&word, 8, MPI_BYTE, 1, kAckTag, comm));
        BENCH_MPI_CHECK(calls.recv(&word, 8, MPI_BYTE, 1, kAckTag, comm, MPI_STATUS_IGNORE));
      } else {
        BENCH_MPI_CHECK(calls.recv(&word, 8, MPI_BYTE, 0, kAckTag, comm, MPI_STATUS_IGNORE));
        BENCH_MPI_CHECK(calls.send(&word, 8, MPI_BYTE, 0, kAckTag, comm));
      }
    }
    return (PMPI_Wtime() - start) / (2.0 * result.round_trips) * 1e6;
  };
  one_round(user_calls());  // warm-up of both paths
  one_round(library_calls());
  std::vector<double> user;
  std::vector<double> library;
  for (int round = 0; round < result.rounds; ++round) {
    // alternate which path goes first so that neither always follows the barrier
    if (round % 2 == 0) {
      user.push_back(one_round(user_calls()));
      library.push_back(one_round(library_calls()));
    } else {
      library.push_back(one_round(library_calls()));
      user.push_back(one_round(user_calls()));
    }
  }
  result.user_us = median(user);
  result.library_us = median(library);
  return result;
}

}  // namespace gddt::bench
