// gddt-tune: measures, on this machine, the curves the protocol choice depends on and writes
// the thresholds into gddt's profile, which settings left at `auto` take their values from
// (config.hpp; the others keep their built-in model).
//
// For packed sizes 4 KiB .. 64 MiB of a strided layout (64-byte blocks at twice their size,
// the shape of a typical halo) it times moving the packed bytes between device memory and
// pinned host memory both ways the library knows: one zero-copy kernel, and the two-lane
// pipeline at several chunk sizes. The cost model then is the measured curves themselves:
//   GDDT_STAGING_CHUNK = the chunk with the least total time over the large sizes;
//   GDDT_ZEROCOPY_MAX  = the largest size up to which zero-copy beats that pipeline.
// The profile goes to GDDT_PROFILE, else $XDG_CONFIG_HOME/gddt/profile.conf (or
// ~/.config/gddt/profile.conf), where gddt reads it; the config file is left alone, so what a
// user set there still wins over the measurements.
//   gddt-tune [--output FILE] [--iterations N] [--dry-run]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/gpu.hpp"
#include "protocol/transfer.hpp"
#include "type/layout.hpp"

namespace {

using namespace gddt;

struct Options {
  std::string output;
  int iterations = 15;
  bool dry_run = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--output" && i + 1 < argc) o.output = argv[++i];
    else if (arg == "--iterations" && i + 1 < argc) o.iterations = std::max(3, std::atoi(argv[++i]));
    else if (arg == "--dry-run") o.dry_run = true;
    else {
      std::printf("usage: gddt-tune [--output FILE] [--iterations N] [--dry-run]\n");
      std::exit(arg == "--help" ? 0 : 2);
    }
  }
  if (o.output.empty()) o.output = config::profile_path_for_writing();
  return o;
}

// Median wall time in microseconds of `iterations` synchronous runs after one warm-up.
template <typename Run>
double median_us(int iterations, Run&& run) {
  run();
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (is_error(run())) return -1;
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void set_chunk(std::uint64_t bytes) {
  setenv("GDDT_STAGING_CHUNK", std::to_string(bytes).c_str(), 1);
  config::reload_for_testing();
}

// The measured settings that the config file or the environment sets, which therefore win over
// the profile; asked before the measurements set GDDT_STAGING_CHUNK themselves.
std::vector<std::string> overridden_measurements() {
  std::vector<std::string> overridden;
  for (const config::Row& row : config::rows()) {
    const bool measured =
        std::strcmp(row.name, "GDDT_STAGING_CHUNK") == 0 || std::strcmp(row.name, "GDDT_ZEROCOPY_MAX") == 0;
    if (measured && (row.source_kind == config::Source::kFile || row.source_kind == config::Source::kEnvironment)) {
      overridden.push_back(std::string(row.name) + " (" + row.source + ")");
    }
  }
  return overridden;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse(argc, argv);
  const std::vector<std::string> overridden = overridden_measurements();
  if (!gpu::available()) {
    std::printf("gddt-tune: no usable GPU here; the built-in model stays (nothing written)\n");
    return 0;
  }
  const std::int64_t block = 64, max_bytes = std::int64_t{64} << 20;
  void* device = nullptr;
  void* pinned = nullptr;
  if (is_error(gpu::device_alloc(0, static_cast<std::size_t>(2 * max_bytes), &device)) ||
      is_error(gpu::pinned_alloc(static_cast<std::size_t>(max_bytes), &pinned))) {
    std::fprintf(stderr, "gddt-tune: cannot allocate %lld MiB on GPU 0 and in pinned memory\n",
                 static_cast<long long>(max_bytes >> 20));
    return 1;
  }
  const memory::Kind on_device{GDDT_MEMORY_DEVICE, 0}, on_host{GDDT_MEMORY_PINNED, -1};
  const std::vector<std::uint64_t> chunks = {256u << 10, 512u << 10, 1u << 20, 2u << 20, 4u << 20, 8u << 20};

  std::printf("gddt-tune on %s: pack of 64-byte blocks (stride 128 B) device -> pinned host, median of %d\n\n",
              gpu::device_name(0).c_str(), options.iterations);
  std::printf("%10s %12s", "bytes", "zero-copy");
  for (auto c : chunks) std::printf("   pipe %4lluK", static_cast<unsigned long long>(c >> 10));
  std::printf("   (us)\n");

  std::vector<double> chunk_total(chunks.size(), 0);
  std::vector<std::pair<std::int64_t, double>> zero_copy_curve, best_pipe_curve;
  std::vector<std::vector<double>> pipe_curves;
  for (std::int64_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
    type::Layout block_layout = type::make_block(block), layout;
    if (is_error(type::make_repeat(block_layout, bytes / block, 2 * block, &layout))) return 1;
    pack::Window window{&layout, 1, 0, bytes};
    auto run = [&](protocol::Way way) {
      return median_us(options.iterations, [&] {
        return protocol::pack(window, device, on_device, pinned, on_host, nullptr, way);
      });
    };
    double zero_copy = run(protocol::Way::kZeroCopy);
    std::printf("%10lld %12.1f", static_cast<long long>(bytes), zero_copy);
    std::vector<double> pipe;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      set_chunk(chunks[c]);
      pipe.push_back(run(protocol::Way::kPipelined));
      std::printf(" %12.1f", pipe.back());
      if (bytes >= (std::int64_t{4} << 20)) chunk_total[c] += pipe.back() / static_cast<double>(bytes);
    }
    std::printf("\n");
    zero_copy_curve.emplace_back(bytes, zero_copy);
    pipe_curves.push_back(pipe);
  }
  const std::size_t best = static_cast<std::size_t>(
      std::min_element(chunk_total.begin(), chunk_total.end()) - chunk_total.begin());
  std::int64_t zerocopy_max = 0;
  for (std::size_t i = 0; i < zero_copy_curve.size() && zero_copy_curve[i].second <= pipe_curves[i][best]; ++i)
    zerocopy_max = zero_copy_curve[i].first;

  std::printf("\nchosen: GDDT_STAGING_CHUNK=%llu  GDDT_ZEROCOPY_MAX=%lld\n",
              static_cast<unsigned long long>(chunks[best]), static_cast<long long>(zerocopy_max));
  gpu::device_free(0, device);
  gpu::pinned_free(pinned);
  if (options.dry_run) return 0;
  if (options.output.empty()) {
    std::fprintf(stderr,
                 "gddt-tune: neither GDDT_PROFILE, XDG_CONFIG_HOME nor HOME is set; name a file with --output\n");
    return 1;
  }

  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(options.output).parent_path(), ignored);
  // Only what was measured: the settings it leaves out keep their built-in model, and gddt-info
  // tells the two apart.
  const std::vector<config::Measurement> measured = {{"STAGING_CHUNK", chunks[best]},
                                                     {"ZEROCOPY_MAX", static_cast<std::uint64_t>(zerocopy_max)}};
  std::string problem;
  if (!config::write_profile(
          options.output, "gddt-tune profile, measured on " + gpu::device_name(0) + "; read for settings left at auto",
          measured, &problem)) {
    std::fprintf(stderr, "gddt-tune: %s\n", problem.c_str());
    return 1;
  }
  std::printf("profile written to %s\n", options.output.c_str());
  for (const std::string& setting : overridden) {
    std::printf("note: %s is set explicitly and wins over the profile; set it to auto to use the measurement\n",
                setting.c_str());
  }
  return 0;
}
