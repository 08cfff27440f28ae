// gddt-info: what gddt would do on this machine. Prints the version, every setting with
// the value in force and where it came from, configuration problems, the MPI library and
// its CUDA awareness, the CUDA driver, runtime, GPUs and peer access, the pack backends, and
// the OpenCL platforms and devices.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "gddt/gddt.h"
#include "core/counters.hpp"
#include "mpi/fortran.hpp"
#include "pack/engine.hpp"
#include "pack/opencl/api.hpp"
#include "protocol/cuda_awareness.hpp"

namespace {

constexpr char kUsage[] =
    "usage: gddt-info [--help] [--markdown | --settings]\n"
    "\n"
    "--markdown prints only the settings table (names, defaults, built-in models, values,\n"
    "meaning) as the Markdown of docs/configuration.md.\n"
    "--settings prints only the settings in force, where each came from, the profile read and\n"
    "the configuration problems, without initializing MPI.\n"
    "\n"
    "Prints the gddt version, every GDDT_* setting (value in force, where it came from,\n"
    "default, built-in model, allowed values, meaning), the gddt-tune profile read, problems\n"
    "met while reading the configuration, the MPI library and whether it is CUDA-aware, the\n"
    "CUDA driver, runtime, GPUs and peer access between them, the pack backends, and the\n"
    "OpenCL platforms and devices with whether the OpenCL backend is usable. Settings come\n"
    "from defaults, then the config file, then the environment; a setting left at auto then\n"
    "takes the value of the gddt-tune profile, else of the built-in model. Initializes MPI to\n"
    "ask the library about CUDA support.\n";

using Table = std::vector<std::vector<std::string>>;

// Left-aligned columns; the last column is not padded.
void print_table(const Table& table) {
  std::vector<std::size_t> widths;
  for (const auto& row : table) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t column = 0; column < row.size(); ++column) {
      widths[column] = std::max(widths[column], row[column].size());
    }
  }
  for (const auto& row : table) {
    std::string line = "  ";
    for (std::size_t column = 0; column < row.size(); ++column) {
      line += row[column];
      if (column + 1 < row.size()) line += std::string(widths[column] - row[column].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

// CUDA encodes 12.4 as 12040.
std::string cuda_version_text(int version) {
  if (version == 0) return "none";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

void print_settings() {
  std::printf("Settings (defaults < config file < environment; auto: gddt-tune profile, else built-in model):\n");
  Table table{{"NAME", "VALUE", "SOURCE", "DEFAULT", "MODEL", "VALUES", "MEANING"}};
  for (const gddt::config::Row& row : gddt::config::rows()) {
    table.push_back({row.name, row.value_text.empty() ? "\"\"" : row.value_text, row.source,
                     *row.default_text ? row.default_text : "\"\"", row.model_text, row.values, row.help});
  }
  print_table(table);
  std::string profile = gddt::config::profile_in_use();
  if (profile.empty()) {
    const std::string would_write = gddt::config::profile_path_for_writing();
    profile = would_write.empty() ? "none" : "none (gddt-tune writes " + would_write + ")";
  }
  std::printf("\ngddt-tune profile: %s\n", profile.c_str());
  const auto& problems = gddt::config::problems();
  std::printf("\nConfiguration problems:%s\n", problems.empty() ? " none" : "");
  for (const std::string& problem : problems) std::printf("  %s\n", problem.c_str());
}

// Whether Fortran callers reach gddt, and how (src/mpi/entry_points.py).
std::string fortran_interception() {
  using gddt::mpi::fortran::Layer;
  const std::string defined = std::to_string(gddt::mpi::fortran::kEntryPoints) + " Fortran functions";
  switch (gddt::mpi::fortran::kLayer) {
    case Layer::kOpenMpi: return "gddt defines " + defined + " of Open MPI's Fortran layer, which calls PMPI_* itself";
    case Layer::kMpichF08:
      return "gddt defines " + defined + " of MPICH's mpi_f08 layer, which calls PMPI_* itself; the others call MPI_*";
    case Layer::kNone: break;
  }
  return "through gddt's C entry points, if the library's Fortran layer calls MPI_* (none was found at build time)";
}

void print_counters() {
  std::printf("\nCounters (gddt_counter(), GDDT_STATS=1):\n");
  Table table;
  for (int i = 0; i < static_cast<int>(gddt::counters::Counter::kCount); ++i) {
    const auto counter = static_cast<gddt::counters::Counter>(i);
    table.push_back({gddt::counters::name(counter), gddt::counters::help(counter)});
  }
  print_table(table);
}

void print_mpi() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string text(version, static_cast<std::size_t>(length));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  std::string how;
  gddt::protocol::cuda_aware(&how);
  // MPICH's version string runs over many lines; keep them in the value column.
  Table table;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = std::min(text.find('\n', start), text.size());
    table.push_back({table.empty() ? "library:" : "", text.substr(start, end - start)});
    start = end + 1;
  }
  table.push_back({"CUDA-aware:", how});
  table.push_back({"Fortran:", fortran_interception()});
  std::printf("\nMPI:\n");
  print_table(table);
}

std::string cuda_usability() {
  if (!gddt::gpu::compiled_in()) return "no (built without CUDA)";
  if (gddt::gpu::available()) return "yes";
  if (gddt::config::cuda() == gddt::config::Cuda::kOff) return "no (GDDT_CUDA=off)";
  if (gddt::gpu::driver_version() == 0) return "no (no CUDA driver)";
  return "no (no GPU)";
}

void print_cuda() {
  const int devices = gddt::gpu::device_count();
  std::printf("\nCUDA:\n");
  print_table({{"compiled in:", gddt::gpu::compiled_in() ? "yes" : "no"},
               {"usable:", cuda_usability()},
               {"driver:", cuda_version_text(gddt::gpu::driver_version())},
               {"runtime:", cuda_version_text(gddt::gpu::runtime_version())},
               {"GPUs:", std::to_string(devices)}});
  if (devices == 0) return;
  Table gpus;
  for (int device = 0; device < devices; ++device) {
    gpus.push_back({"GPU " + std::to_string(device) + ":", gddt::gpu::device_name(device)});
  }
  print_table(gpus);
  std::printf("\nPeer access (row GPU reads column GPU's memory):\n");
  Table peers{{""}};
  for (int peer = 0; peer < devices; ++peer) peers[0].push_back(std::to_string(peer));
  for (int device = 0; device < devices; ++device) {
    peers.push_back({std::to_string(device)});
    for (int peer = 0; peer < devices; ++peer) {
      peers.back().push_back(device == peer ? "-" : gddt::gpu::can_access_peer(device, peer) ? "yes" : "no");
    }
  }
  print_table(peers);
}

void print_backends() {
  std::string names;
  gddt::pack::for_each_backend([&](const gddt::pack::Backend& backend) {
    names += names.empty() ? backend.name : std::string(", ") + backend.name;
  });
  std::printf("\nPack backends: %s\n", names.c_str());
}

// The OpenCL backend is usable where the ICD loader opens and some platform has an available
// device.
void print_opencl() {
  std::printf("\nOpenCL:\n");
  if (gddt::pack::opencl::api() == nullptr) {
    print_table({{"backend usable:", "no (" + gddt::pack::opencl::unavailable_reason() + ")"}});
    return;
  }
  const std::vector<gddt::pack::opencl::PlatformInfo> platforms = gddt::pack::opencl::platforms();
  bool any_device = false;
  Table listing;
  for (std::size_t p = 0; p < platforms.size(); ++p) {
    const auto& platform = platforms[p];
    listing.push_back({"platform " + std::to_string(p) + ":", platform.name + " (" + platform.vendor + ", " +
                                                                  platform.version + ")"});
    for (std::size_t d = 0; d < platform.devices.size(); ++d) {
      const auto& device = platform.devices[d];
      any_device = any_device || device.available;
      listing.push_back({"  device " + std::to_string(d) + ":",
                         device.name + " (" + device.version + ")" + (device.available ? "" : ", not available")});
    }
  }
  print_table({{"backend usable:", any_device ? "yes" : "no (no available OpenCL device)"},
               {"platforms:", std::to_string(platforms.size())}});
  print_table(listing);
}

}  // namespace

// The settings table as docs/configuration.md holds it; a test keeps the two equal.
void print_markdown() {
  std::printf(
      "# gddt configuration\n\n"
      "Every setting is read once, from its default, then the config file, then the\n"
      "environment variable. A config file holds `NAME=VALUE` lines (`NAME` with or without\n"
      "the `GDDT_` prefix, `#` starts a comment). Sizes take a `K`, `M`, `G` or `T` suffix\n"
      "(binary); counts are whole numbers.\n\n"
      "The settings with a built-in model are decided by the machine: their default is\n"
      "`auto` (which the config file or the environment may name too), resolved once to the\n"
      "value measured by `gddt-tune`, from its profile (`GDDT_PROFILE`, default\n"
      "`$XDG_CONFIG_HOME/gddt/profile.conf` or `~/.config/gddt/profile.conf`, the same\n"
      "`NAME=VALUE` lines), where the profile has one, else to the built-in model: the\n"
      "numbers measured on H100 and H200 machines (performance.md). `gddt-tune` measures\n"
      "`GDDT_STAGING_CHUNK` and `GDDT_ZEROCOPY_MAX` today. `gddt-info` shows the values in\n"
      "force and where each came from: default, built-in model, gddt-tune profile (with its\n"
      "path), config file (with its path) or environment. This page is generated by\n"
      "`gddt-info --markdown`.\n\n"
      "| variable | default | built-in model | values | meaning |\n|---|---|---|---|---|\n");
  for (const gddt::config::Row& row : gddt::config::rows()) {
    std::string values = row.values;  // "a|b": a table cell cannot hold a bare '|'
    for (char& c : values) c = c == '|' ? ',' : c;
    const std::string model = row.model_text[0] ? std::string("`") + row.model_text + "`" : "";
    std::printf("| `%s` | `%s` | %s | %s | %s |\n", row.name, row.default_text[0] ? row.default_text : "\"\"",
                model.c_str(), values.c_str(), row.help);
  }
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (std::strcmp(argv[i], "--markdown") == 0) {
      print_markdown();
      return 0;
    }
    if (std::strcmp(argv[i], "--settings") == 0) {
      print_settings();
      return 0;
    }
    std::fprintf(stderr, "gddt-info: unknown argument '%s'\n\n%s", argv[i], kUsage);
    return 2;
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(&argc, &argv);

  std::printf("gddt %s\n\n", gddt_version_string());
  print_settings();
  print_mpi();
  print_counters();
  print_cuda();
  print_backends();
  print_opencl();

  if (!initialized) MPI_Finalize();
  return 0;
}
