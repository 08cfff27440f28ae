// gddt-bench: OSU-style point-to-point latency and bandwidth of MPI derived datatypes on
// device memory, for 2 ranks. The program calls no gddt function: linked before the MPI
// library (or with libgddt.so preloaded), gddt takes over the plain MPI calls of the "gddt"
// method, which is exactly what a user gets; every other method calls PMPI_* so that it
// measures the MPI library alone. See README.md beside this file.
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "checks.hpp"
#include "child_job.hpp"
#include "device_copy.hpp"
#include "measure.hpp"
#include "memory_buffer.hpp"
#include "mpi_env.hpp"
#include "options.hpp"
#include "report.hpp"
#include "sweep.hpp"

namespace gddt::bench {
namespace {

constexpr int kNoDevice = -1;

int select_gpu(int local_rank) {
  const std::string unavailable = gddt_test::prepare_memory_kind(MemoryKind::kDevice, local_rank);
  if (!unavailable.empty()) die("--memory: " + unavailable);
  BENCH_CUDA_CHECK(cudaFree(nullptr));  // the context exists before MPI looks for it
  int device = kNoDevice;
  BENCH_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

int world_rank_checked_for_two() {
  int rank = 0;
  int size = 0;
  BENCH_MPI_CHECK(PMPI_Comm_rank(MPI_COMM_WORLD, &rank));
  BENCH_MPI_CHECK(PMPI_Comm_size(MPI_COMM_WORLD, &size));
  if (size != 2) die("gddt-bench needs exactly 2 ranks, not " + std::to_string(size) + " (mpiexec -n 2 ...)");
  return rank;
}

std::string gddt_summary(bool* usable) {
  std::string version;
  bool disabled = false;
  const bool present = gddt_present(&version, &disabled);
  *usable = present && !disabled;
  if (!present) return "not loaded (link gddt-bench, or preload libgddt.so into gddt-bench-nolink)";
  return "libgddt " + version + (disabled ? " loaded but disabled by GDDT_DISABLE" : " loaded");
}

// Host name and GPU of every rank, one line each, gathered on rank 0.
std::vector<std::string> describe_ranks(int device) {
  char host[64] = {};
  gethostname(host, sizeof host - 1);
  std::string description = "host " + std::string(host);
  if (device == kNoDevice) {
    description += ", no GPU used";
  } else {
    cudaDeviceProp properties{};
    BENCH_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    char bus[32] = {};
    BENCH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
    description += ", GPU " + std::to_string(device) + " " + properties.name + " (PCI " + bus + ")";
  }
  char line[256] = {};
  description.copy(line, sizeof line - 1);
  std::vector<char> all(2 * sizeof line);
  BENCH_MPI_CHECK(PMPI_Gather(line, sizeof line, MPI_CHAR, all.data(), sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD));
  return {std::string(all.data()), std::string(all.data() + sizeof line)};
}

class ReportSink final : public PointSink {
 public:
  explicit ReportSink(Report& report) : report_(report) {}
  void begin(const PointKey&) override {}
  void record(const PointKey& point, Method method, const Measurement& measurement) override {
    report_.record(point, method, measurement);
  }

 private:
  Report& report_;
};

class ChildWorkerSink final : public PointSink {
 public:
  explicit ChildWorkerSink(const std::string& path) : writer_(path) {}
  void begin(const PointKey& point) override { writer_.begin(point); }
  void record(const PointKey& point, Method, const Measurement& measurement) override {
    writer_.done(point, measurement);
  }

 private:
  ChildReportWriter writer_;
};

struct ChildPlanEntry {
  Method method;
  MemoryPair memory;
  TableSpec table;
  std::vector<PointKey> points;
};

bool wants(const Options& options, Method method) {
  return std::find(options.methods.begin(), options.methods.end(), method) != options.methods.end();
}

void print_header(const Options& options, int argc, char** argv, const std::vector<std::string>& ranks,
                  const std::string& cuda_aware_text, const std::string& gddt_text, const SweepContext& context,
                  const std::vector<Method>& in_child, const DeviceCopyPlan& copy_plan) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i == 0 ? "" : " ") + std::string(argv[i]);
  std::printf("gddt-bench: point-to-point latency and bandwidth of MPI datatypes on device memory\n");
  std::printf("  command: %s\n", command.c_str());
  std::printf("  MPI:     %s\n", mpi_library_version().c_str());
  std::printf("  CUDA-aware MPI: %s\n", cuda_aware_text.c_str());
  std::printf("  gddt:    %s\n", gddt_text.c_str());
  for (std::size_t i = 0; i < ranks.size(); ++i) std::printf("  rank %zu:  %s\n", i, ranks[i].c_str());
  if (ranks[0] == ranks[1] && ranks[0].find(", GPU ") != std::string::npos) {
    std::printf("  note:    both ranks share one GPU: the GPU time-slices their CUDA work, which adds about\n"
                "           150 us to small transfers of every method that touches it; use 2 GPUs\n");
  }
  for (Method method : options.methods) {
    std::string note;
    if (std::find(in_child.begin(), in_child.end(), method) != in_child.end()) {
      note = " (in child jobs, where a crash is harmless: " + child_launcher_text(options) + " ...)";
    } else {
      for (const MemoryPair& memory : options.memories) {
        const std::string reason = unavailable_reason(method, memory, context.cuda_aware, context.gddt_usable);
        if (!reason.empty()) note = " (n/a on " + memory.name() + ": " + reason + ")";
      }
    }
    if (method == Method::kDeviceCopy) {  // where it can run at all says more than the memory pairs
      note = copy_plan.unavailable.empty() ? note + " (" + copy_plan.describe() + ", after the other methods)"
                                           : " (n/a: " + copy_plan.unavailable + ")";
    }
    if (method == Method::kPipeline) {
      note += options.chunk != 0 ? " (chunk " + format_size(options.chunk) + ")" : " (chunk: packed/4 within 256K..4M)";
    }
    std::printf("  method %s%s\n", method_name(method), note.c_str());
  }
  std::printf("  timing: latency = half the median round trip, bandwidth = packed bytes of a window (<= %d messages, "
              "<= 128 MiB) over its median time; <= %d iterations, about %g s per measurement\n",
              options.window, options.max_iterations, options.point_seconds);
  std::fflush(stdout);
}

int host_pingpong_main(int argc, char** argv) {
  BENCH_MPI_CHECK(MPI_Init(&argc, &argv));
  const int rank = world_rank_checked_for_two();
  bool usable = false;
  const std::string gddt_text = gddt_summary(&usable);
  const HostPingpong result = measure_host_pingpong(MPI_COMM_WORLD, rank);
  if (rank == 0) {
    std::printf("gddt-bench --host-pingpong\n  MPI:  %s\n  gddt: %s\n", mpi_library_version().c_str(), gddt_text.c_str());
    std::printf("host 8-byte ping-pong, median one-way latency over %d rounds of %d round trips:\n", result.rounds,
                result.round_trips);
    std::printf("  MPI_Send/MPI_Recv   %.3f us  (the program's calls: through gddt when it is loaded)\n", result.user_us);
    std::printf("  PMPI_Send/PMPI_Recv %.3f us  (the MPI library itself)\n", result.library_us);
    std::printf("one-way latency: %.3f us\n", result.user_us);
  }
  BENCH_MPI_CHECK(MPI_Finalize());
  return 0;
}

int sweep_main(const Options& options, int argc, char** argv) {
  bool needs_gpu = false;
  for (const MemoryPair& memory : options.memories) {
    needs_gpu = needs_gpu || memory.rank0 == MemoryKind::kDevice || memory.rank1 == MemoryKind::kDevice;
  }
  int device = kNoDevice;
  if (needs_gpu && launcher_local_rank() >= 0) device = select_gpu(launcher_local_rank());
  BENCH_MPI_CHECK(MPI_Init(&argc, &argv));
  SweepContext context;
  context.rank = world_rank_checked_for_two();
  if (needs_gpu && device == kNoDevice) {
    MPI_Comm node = MPI_COMM_NULL;
    int local_rank = 0;
    BENCH_MPI_CHECK(PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    BENCH_MPI_CHECK(PMPI_Comm_rank(node, &local_rank));
    BENCH_MPI_CHECK(PMPI_Comm_free(&node));
    device = select_gpu(local_rank);
  }

  std::string cuda_aware_text;
  int cuda_aware = 0;
  if (options.cuda_aware == CudaAwareChoice::kAuto) {
    cuda_aware = mpi_reports_cuda_aware(&cuda_aware_text) ? 1 : 0;
  } else {
    cuda_aware = options.cuda_aware == CudaAwareChoice::kYes ? 1 : 0;
    cuda_aware_text = cuda_aware ? "yes (--cuda-aware yes)" : "no (--cuda-aware no)";
  }
  BENCH_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, &cuda_aware, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  context.cuda_aware = cuda_aware == 1;
  const std::string gddt_text = gddt_summary(&context.gddt_usable);

  if (options.mode == Mode::kChildWorker) {
    std::unique_ptr<ChildWorkerSink> sink;
    if (context.rank == 0) sink = std::make_unique<ChildWorkerSink>(options.child_report_path);
    run_sweep(options, options.methods, context, sink.get());
    sink.reset();
    BENCH_MPI_CHECK(MPI_Finalize());
    return 0;
  }

  // Methods that may crash the MPI wait for child jobs: raw-mpi always, contig-device unless
  // the MPI reports CUDA-awareness (or --cuda-aware decides).
  std::vector<Method> in_process;
  std::vector<Method> in_child;
  for (Method method : options.methods) {
    if (method == Method::kDeviceCopy) continue;  // no message: run_device_copy, after the sweep
    const bool may_crash = method == Method::kRawMpi ||
                           (method == Method::kContigDevice && options.cuda_aware == CudaAwareChoice::kAuto &&
                            !context.cuda_aware);
    (may_crash ? in_child : in_process).push_back(method);
  }

  const std::vector<std::string> ranks = describe_ranks(device);
  DeviceCopyPlan copy_plan;
  if (wants(options, Method::kDeviceCopy)) copy_plan = plan_device_copy(device, MPI_COMM_WORLD, context.rank);
  if (context.rank == 0) {
    print_header(options, argc, argv, ranks, cuda_aware_text, gddt_text, context, in_child, copy_plan);
  }
  context.show_progress = true;
  const double start = PMPI_Wtime();

  Report report(options.methods, options.latency, options.bandwidth);
  ReportSink sink(report);
  run_sweep(options, in_process, context, context.rank == 0 ? &sink : nullptr);

  HostPingpong host;
  const bool host_measured = context.gddt_usable && wants(options, Method::kGddt);
  if (host_measured) host = measure_host_pingpong(MPI_COMM_WORLD, context.rank);
  if (wants(options, Method::kDeviceCopy)) {
    run_device_copy(options, copy_plan, context, context.rank == 0 ? &sink : nullptr);
  }

  std::vector<ChildPlanEntry> child_plan;  // the types are built with MPI, so before MPI_Finalize
  if (context.rank == 0) {
    for (Method method : in_child) {
      for (const MemoryPair& memory : options.memories) {
        for (const TableSpec& table : table_specs(options)) {
          std::vector<PointKey> points = table_points(options, memory, table);
          if (!points.empty()) child_plan.push_back({method, memory, table, std::move(points)});
        }
      }
    }
  }
  const double measured = PMPI_Wtime() - start;
  BENCH_MPI_CHECK(MPI_Finalize());
  const auto finalized = std::chrono::steady_clock::now();
  if (context.rank != 0) return 0;

  std::vector<std::string> child_troubles;
  if (!child_plan.empty()) {
    char directory_template[] = "/tmp/gddt-bench-child-XXXXXX";
    const char* directory = mkdtemp(directory_template);
    if (directory == nullptr) die("cannot make a folder for the child jobs under /tmp");
    for (const ChildPlanEntry& entry : child_plan) {
      const ChildJob job = run_child_job(options, entry.method, entry.memory, entry.table, entry.points, directory);
      for (const auto& [point, measurement] : job.points) report.record(point, entry.method, measurement);
      const double elapsed =
          measured + std::chrono::duration<double>(std::chrono::steady_clock::now() - finalized).count();
      const std::string line = std::string(method_name(entry.method)) + " " + entry.table.name() + ", " +
                               entry.memory.name() + ": " + (job.trouble.empty() ? "measured" : job.trouble);
      std::fprintf(stderr, "[%7.1f s] %s\n", elapsed, line.c_str());
      if (!job.trouble.empty()) child_troubles.push_back(line);
    }
    rmdir(directory);  // only succeeds when no failed job left its log behind
  }

  report.print_tables(stdout);
  for (const std::string& trouble : child_troubles) std::printf("note: %s\n", trouble.c_str());
  report.print_targets(stdout, host_measured ? &host : nullptr, copy_plan.crosses_devices());
  if (!options.csv_path.empty()) {
    if (!report.write_csv(options.csv_path)) die("cannot write " + options.csv_path);
    std::printf("CSV: %s (plot: python3 bench/p2p/plot_p2p.py %s)\n", options.csv_path.c_str(),
                options.csv_path.c_str());
  }
  std::printf("total time %.0f s\n",
              measured + std::chrono::duration<double>(std::chrono::steady_clock::now() - finalized).count());
  return 0;
}

}  // namespace
}  // namespace gddt::bench

int main(int argc, char** argv) {
  using namespace gddt::bench;
  try {
    const Options options = parse_options(argc, argv, launcher_world_rank() <= 0);
    if (options.mode == Mode::kHostPingpong) return host_pingpong_main(argc, argv);
    return sweep_main(options, argc, argv);
  } catch (const std::exception& error) {
    die(error.what());  // what the buffers throw ends the job as a failed check does
  }
}
