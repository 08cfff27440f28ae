// Command line of gddt-bench: what to measure (types, sizes, memory, methods) and how long.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "memory_buffer.hpp"

namespace gddt::bench {

using gddt_test::MemoryKind;  // the benchmark takes kDevice and kHost

// Where each rank keeps its buffers; rank 0 starts every ping-pong and sends every window.
struct MemoryPair {
  MemoryKind rank0 = MemoryKind::kDevice;
  MemoryKind rank1 = MemoryKind::kDevice;
  MemoryKind of_rank(int rank) const { return rank == 0 ? rank0 : rank1; }
  std::string name() const;  // "device:host"
};

// kDeviceCopy moves no message: it is the device-to-device copy of the packed bytes, the
// ceiling of every other method (device_copy.hpp).
enum class Method { kGddt, kGddtPacked, kCpy2d, kPipeline, kContigDevice, kContigStaged, kRawMpi, kDeviceCopy, kHandPacked };
const char* method_name(Method method);
const std::vector<Method>& all_methods();

enum class Mode {
  kSweep,         // the full comparison (the default)
  kHostPingpong,  // 8-byte host ping-pong, for runs with and without gddt loaded
  kChildWorker    // a child job measuring one method that may crash (started by kSweep's rank 0)
};

enum class CudaAwareChoice { kAuto, kYes, kNo };

struct Options {
  Mode mode = Mode::kSweep;
  std::vector<std::string> families;      // vector, subarray2d, subarray3d, indexed, struct
  std::vector<std::size_t> vector_blocks;  // bytes, multiples of 4
  std::vector<std::size_t> sizes;          // packed bytes
  std::vector<MemoryPair> memories;
  std::vector<Method> methods;
  bool latency = true;
  bool bandwidth = true;
  int max_iterations = 200;     // timed iterations per point, fewer when a point is slow
  int warmup = 500;             // untimed iterations, fewer when a point is slow
  int window = 64;              // messages per bandwidth window, fewer for large messages
  double point_seconds = 0.1;   // time aimed at for the timed part of one measurement
  std::size_t chunk = 0;        // pipeline chunk bytes; 0 = picked from the message size
  CudaAwareChoice cuda_aware = CudaAwareChoice::kAuto;
  std::string child_launcher;     // command starting a 2-rank child job; "" = found
  double child_timeout = 300;     // seconds one child job may run
  std::string csv_path;
  std::string child_report_path;  // kChildWorker: where the child writes its results
};

// Parses argv. Prints usage and exits (0 for --help, 2 for a bad option) when it must;
// `print` says whether this process is the one that should write those messages.
Options parse_options(int argc, char** argv, bool print);

// The options of one child job: the sweep's settings, narrowed to one method and one table.
std::vector<std::string> child_worker_arguments(const Options& options, Method method, const MemoryPair& memory,
                                                const std::string& family, std::size_t vector_block,
                                                const std::string& report_path);

// "4", "4K", "64M" (binary units) to bytes; false on anything else.
bool parse_size(const std::string& text, std::size_t* bytes);
std::string format_size(std::size_t bytes);  // 4194304 -> "4M"

}  // namespace gddt::bench
