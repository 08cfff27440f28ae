#include "options.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace gddt::bench {
namespace {

constexpr const char* kUsage = R"(usage: mpiexec -n 2 gddt-bench [options]
OSU-style point-to-point latency and bandwidth of MPI derived datatypes on device memory:
gddt (plain MPI calls with gddt linked or preloaded) side by side with hand-written CUDA+MPI
code and with the MPI library alone. Two ranks.

  --types LIST       vector,subarray2d,subarray3d,indexed,struct (default: all)
  --blocks LIST      vector block bytes, multiples of 4 (default 4,64,4K,64K); stride = 2 blocks
  --sizes A:B[:F]    packed bytes A, A*F, ... up to B (default 4:64M:4); or a list 4K,4M
  --memory LIST      rank0:rank1 memory, each device|host, e.g. device:device,device:host
                     (default device:device; d:h is short for device:host)
  --methods LIST     gddt,gddt-packed,cpy2d,pipeline,contig-device,contig-staged,raw-mpi,d2d-copy,hand-packed
                     (default: all)
  --tests LIST       latency,bandwidth (default: both)
  --iterations N     most timed iterations per measurement (default 200)
  --warmup N         most untimed iterations first, within the point time (default 500)
  --window N         most messages per bandwidth window (default 64)
  --point-time S     seconds aimed at per measurement; slow points run fewer iterations
                     (at least 3) (default 0.1)
  --chunk BYTES      chunk of the hand-written pipeline (default: packed/4 within 256K..4M)
  --cuda-aware auto|yes|no   whether the MPI takes device pointers (default: ask the MPI;
                     when it does not say yes, contig-device runs in child jobs)
  --child-launcher CMD  command line starting a child job of 2 ranks
                     (default: the MPI's own mpiexec -n 2)
  --child-timeout S  seconds one child job may run (default 300)
  --csv FILE         also write every measurement to FILE (plot it with plot_p2p.py)
  --host-pingpong    only the 8-byte host ping-pong: median one-way latency
  --help

Methods: gddt = MPI_Send/MPI_Recv (MPI_Isend/MPI_Irecv windows) of the datatype on the user
buffers; gddt-packed = the same sends, received as MPI_PACKED into a contiguous buffer of the
packed byte count; cpy2d = cudaMemcpy2D into a host buffer of the same layout, then MPI_Send of the host
datatype, mirrored on the receiver (Fig. 4(a) of the MVAPICH2 paper); pipeline = chunked pack
kernel, cudaMemcpyAsync to pinned memory and one MPI_Isend per chunk, mirrored (Fig. 4(b));
contig-device = the packed byte count sent contiguous from device memory; contig-staged = the
same bytes copied to pinned host memory and sent; raw-mpi = the MPI library handed the device
datatype; hand-packed = what an expert writes without gddt: the sender's pack kernel into a device
buffer, PMPI_Send of those device bytes through a CUDA-aware MPI (through pinned host memory
otherwise), the receiver's unpack kernel; d2d-copy = the packed bytes copied device to device
without MPI, the ceiling
(cudaMemcpyAsync on one GPU, cudaMemcpyPeerAsync into rank 1's GPU from rank 0 when the ranks
use two; device:device only), whose ratios the tables print as <method>/d2d. Methods that may
crash the MPI (raw-mpi, and contig-device unless the MPI reports CUDA-awareness) run in
separate 2-rank child jobs started after this job's MPI_Finalize.
)";

[[noreturn]] void usage_error(bool print, const std::string& message) {
  if (print) std::fprintf(stderr, "gddt-bench: %s\n(gddt-bench --help lists the options)\n", message.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator)) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::size_t size_or_die(const std::string& text, bool print) {
  std::size_t bytes = 0;
  if (!parse_size(text, &bytes)) usage_error(print, "not a size: '" + text + "'");
  return bytes;
}

double number_or_die(const std::string& text, bool print) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value > 0)) usage_error(print, "not a positive number: '" + text + "'");
  return value;
}

int count_or_die(const std::string& text, bool print, int minimum) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < minimum || value > 1000000) {
    usage_error(print, "not a whole number >= " + std::to_string(minimum) + ": '" + text + "'");
  }
  return static_cast<int>(value);
}

MemoryKind memory_kind_or_die(const std::string& text, bool print) {
  if (text == "device" || text == "d") return MemoryKind::kDevice;
  if (text == "host" || text == "h") return MemoryKind::kHost;
  usage_error(print, "memory is device or host, not '" + text + "'");
}

std::vector<std::size_t> sizes_or_die(const std::string& text, bool print) {
  std::vector<std::size_t> sizes;
  const std::vector<std::string> range = split(text, ':');
  if (range.size() >= 2 && range.size() <= 3) {
    const std::size_t first = size_or_die(range[0], print);
    const std::size_t last = size_or_die(range[1], print);
    const std::size_t factor = range.size() == 3 ? size_or_die(range[2], print) : 2;
    if (first == 0 || factor < 2 || first > last) usage_error(print, "bad size range '" + text + "'");
    for (std::size_t size = first; size <= last; size *= factor) sizes.push_back(size);
    return sizes;
  }
  for (const std::string& item : split(text, ',')) sizes.push_back(size_or_die(item, print));
  if (sizes.empty()) usage_error(print, "no sizes in '" + text + "'");
  return sizes;
}

const std::vector<std::string>& all_families() {
  static const std::vector<std::string> families = {"vector", "subarray2d", "subarray3d", "indexed", "struct"};
  return families;
}

template <typename T>
std::string join(const std::vector<T>& items, const char* separator, std::string (*show)(const T&)) {
  std::string text;
  for (const T& item : items) text += (text.empty() ? "" : separator) + show(item);
  return text;
}

std::string show_size(const std::size_t& bytes) { return format_size(bytes); }
std::string show_string(const std::string& text) { return text; }

std::string show_number(double value) {
  std::ostringstream stream;
  stream << value;
  return stream.str();
}

}  // namespace

std::string MemoryPair::name() const {
  return std::string(gddt_test::memory_kind_name(rank0)) + ":" + gddt_test::memory_kind_name(rank1);
}

const char* method_name(Method method) {
  switch (method) {
    case Method::kGddt: return "gddt";
    case Method::kGddtPacked: return "gddt-packed";
    case Method::kCpy2d: return "cpy2d";
    case Method::kPipeline: return "pipeline";
    case Method::kContigDevice: return "contig-device";
    case Method::kContigStaged: return "contig-staged";
    case Method::kRawMpi: return "raw-mpi";
    case Method::kDeviceCopy: return "d2d-copy";
    case Method::kHandPacked: return "hand-packed";
  }
  return "?";
}

const std::vector<Method>& all_methods() {
  static const std::vector<Method> methods = {Method::kGddt,         Method::kGddtPacked,   Method::kCpy2d,        Method::kPipeline,
                                              Method::kContigDevice, Method::kContigStaged, Method::kRawMpi,
                                              Method::kDeviceCopy,   Method::kHandPacked};
  return methods;
}

bool parse_size(const std::string& text, std::size_t* bytes) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || end == text.c_str() || text[0] == '-') return false;
  const std::string suffix(end);
  unsigned shift = 0;
  if (suffix == "K" || suffix == "k" || suffix == "KiB") {
    shift = 10;
  } else if (suffix == "M" || suffix == "MiB") {
    shift = 20;
  } else if (suffix == "G" || suffix == "GiB") {
    shift = 30;
  } else if (!suffix.empty() && suffix != "B") {
    return false;
  }
  *bytes = static_cast<std::size_t>(value) << shift;
  return true;
}

std::string format_size(std::size_t bytes) {
  static const char* const kUnits[] = {"", "K", "M", "G"};
  unsigned unit = 0;
  while (unit < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + kUnits[unit];
}

Options parse_options(int argc, char** argv, bool print) {
  Options options;
  options.families = all_families();
  options.vector_blocks = {4, 64, 4096, 65536};
  options.sizes = sizes_or_die("4:64M:4", print);
  options.memories = {MemoryPair{}};
  options.methods = all_methods();

  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(print, flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--help" || flag == "-h") {
      if (print) std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (flag == "--types") {
      options.families = split(value(), ',');
      for (const std::string& family : options.families) {
        bool known = false;
        for (const std::string& candidate : all_families()) known = known || candidate == family;
        if (!known) usage_error(print, "unknown type '" + family + "'");
      }
    } else if (flag == "--blocks") {
      options.vector_blocks.clear();
      for (const std::string& item : split(value(), ',')) {
        const std::size_t block = size_or_die(item, print);
        if (block == 0 || block % 4 != 0) usage_error(print, "a vector block is a multiple of 4 bytes: '" + item + "'");
        options.vector_blocks.push_back(block);
      }
    } else if (flag == "--sizes") {
      options.sizes = sizes_or_die(value(), print);
    } else if (flag == "--memory") {
      options.memories.clear();
      for (const std::string& item : split(value(), ',')) {
        const std::vector<std::string> sides = split(item, ':');
        if (sides.size() != 2) usage_error(print, "memory is RANK0:RANK1, e.g. device:host, not '" + item + "'");
        options.memories.push_back({memory_kind_or_die(sides[0], print), memory_kind_or_die(sides[1], print)});
      }
    } else if (flag == "--methods") {
      options.methods.clear();
      for (const std::string& item : split(value(), ',')) {
        bool known = false;
        for (Method method : all_methods()) {
          if (item == method_name(method) || (item == "raw" && method == Method::kRawMpi)) {
            options.methods.push_back(method);
            known = true;
          }
        }
        if (!known) usage_error(print, "unknown method '" + item + "'");
      }
    } else if (flag == "--tests") {
      options.latency = options.bandwidth = false;
      for (const std::string& item : split(value(), ',')) {
        if (item == "latency") {
          options.latency = true;
        } else if (item == "bandwidth") {
          options.bandwidth = true;
        } else {
          usage_error(print, "tests are latency and bandwidth, not '" + item + "'");
        }
      }
    } else if (flag == "--iterations") {
      options.max_iterations = count_or_die(value(), print, 1);
    } else if (flag == "--warmup") {
      options.warmup = count_or_die(value(), print, 0);
    } else if (flag == "--window") {
      options.window = count_or_die(value(), print, 1);
    } else if (flag == "--point-time") {
      options.point_seconds = number_or_die(value(), print);
    } else if (flag == "--chunk") {
      options.chunk = size_or_die(value(), print);
      if (options.chunk == 0 || options.chunk % 4 != 0) usage_error(print, "the chunk is a positive multiple of 4 bytes");
    } else if (flag == "--cuda-aware") {
      const std::string choice = value();
      if (choice == "auto") {
        options.cuda_aware = CudaAwareChoice::kAuto;
      } else if (choice == "yes") {
        options.cuda_aware = CudaAwareChoice::kYes;
      } else if (choice == "no") {
        options.cuda_aware = CudaAwareChoice::kNo;
      } else {
        usage_error(print, "--cuda-aware is auto, yes or no");
      }
    } else if (flag == "--child-launcher") {
      options.child_launcher = value();
    } else if (flag == "--child-timeout") {
      options.child_timeout = number_or_die(value(), print);
    } else if (flag == "--csv") {
      options.csv_path = value();
    } else if (flag == "--host-pingpong") {
      options.mode = Mode::kHostPingpong;
    } else if (flag == "--child-worker") {
      options.mode = Mode::kChildWorker;
    } else if (flag == "--child-report") {
      options.child_report_path = value();
    } else {
      usage_error(print, "unknown option '" + flag + "'");
    }
  }
  if (options.mode == Mode::kChildWorker && (options.child_report_path.empty() || options.methods.size() != 1)) {
    usage_error(print, "--child-worker needs --child-report FILE and one method");
  }
  return options;
}

std::vector<std::string> child_worker_arguments(const Options& options, Method method, const MemoryPair& memory,
                                                const std::string& family, std::size_t vector_block,
                                                const std::string& report_path) {
  std::vector<std::string> tests;
  if (options.latency) tests.push_back("latency");
  if (options.bandwidth) tests.push_back("bandwidth");
  std::vector<std::string> arguments = {"--child-worker",
                                        "--child-report",
                                        report_path,
                                        "--methods",
                                        method_name(method),
                                        "--types",
                                        family,
                                        "--sizes",
                                        join(options.sizes, ",", show_size),
                                        "--memory",
                                        memory.name(),
                                        "--tests",
                                        join(tests, ",", show_string),
                                        "--iterations",
                                        std::to_string(options.max_iterations),
                                        "--warmup",
                                        std::to_string(options.warmup),
                                        "--window",
                                        std::to_string(options.window),
                                        "--point-time",
                                        show_number(options.point_seconds)};
  if (family == "vector") {
    arguments.push_back("--blocks");
    arguments.push_back(format_size(vector_block));
  }
  // contig-device is sent to a child job precisely to try device pointers on this MPI
  if (method == Method::kContigDevice || options.cuda_aware != CudaAwareChoice::kAuto) {
    arguments.push_back("--cuda-aware");
    arguments.push_back(method == Method::kContigDevice || options.cuda_aware == CudaAwareChoice::kYes ? "yes" : "no");
  }
  return arguments;
}

}  // namespace gddt::bench
