// The targets of issue 44 ("faster than hand-packing"), checked against the device:device rows of
// this run: one PASS, MISS or ---- (not measured) line each, every line naming its numbers.
#include <algorithm>
#include <cmath>
#include <functional>

#include "report.hpp"
#include "report_format.hpp"

namespace gddt::bench {
namespace {

// Tallies PASS/MISS lines.
struct Verdicts {
  int pass = 0;
  int miss = 0;
  int unmeasured = 0;

  void line(std::FILE* out, int verdict, const std::string& text) {  // 1 pass, 0 miss, -1 not measured
    const char* tag = verdict > 0 ? "PASS" : verdict == 0 ? "MISS" : "----";
    (verdict > 0 ? pass : verdict == 0 ? miss : unmeasured)++;
    std::fprintf(out, "  [%s] %s\n", tag, text.c_str());
  }
};

// The vectors of 4 B and 64 B blocks and the 3-D x face: the rows the bandwidth targets name.
bool bandwidth_subject(const PointKey& point) {
  const TableSpec& table = point.table;
  return (table.family == "vector" && (table.vector_block == 4 || table.vector_block == 64)) ||
         table.family == "subarray3d";
}

}  // namespace

void Report::print_targets(std::FILE* out, const HostPingpong* host, bool two_gpus) const {
  std::fprintf(out, "\nTargets of issue 44 (device:device rows of this run, %s)\n",
               two_gpus ? "ranks on two GPUs" : "ranks on one GPU");
  Verdicts verdicts;

  // Per table, the worst of gddt's number over `reference`'s (or, with a `limit_on_value`,
  // gddt's own number) among the rows `applies` selects, against `limit`.
  const auto per_table = [&](const std::string& what, const std::function<bool(const Row&)>& applies,
                             Method reference, bool latency, double limit, const std::string& target,
                             bool limit_on_value = false) {
    bool any = false;
    for (std::size_t first = 0; first < rows_.size(); ++first) {
      const Row& head = rows_[first];
      if (!is_device_pair(head.point.memory) || !applies(head)) continue;
      const bool seen = std::any_of(rows_.begin(), rows_.begin() + static_cast<std::ptrdiff_t>(first),
                                    [&](const Row& row) { return same_table(row.point, head.point) && applies(row); });
      if (seen) continue;
      any = true;
      double worst = latency ? 0 : INFINITY;
      std::string worst_text, failure;
      for (std::size_t i = first; i < rows_.size(); ++i) {
        const Row& row = rows_[i];
        if (!same_table(row.point, head.point) || !applies(row)) continue;
        const Measurement* gddt = find(row, Method::kGddt);
        const Measurement* other = limit_on_value ? gddt : find(row, reference);
        if (gddt != nullptr && !gddt->status.empty()) {
          failure = "gddt " + gddt->status + " at " + format_size(row.point.packed);
          break;
        }
        if (!has_value(gddt, latency) || !has_value(other, latency)) continue;
        const double ratio = limit_on_value ? value_of(*gddt, latency) : value_of(*gddt, latency) / value_of(*other, latency);
        if (latency ? ratio > worst : ratio < worst) {
          worst = ratio;
          worst_text = "at " + format_size(row.point.packed) + ": " + format_value(value_of(*gddt, latency)) +
                       (limit_on_value ? "" : " vs " + format_value(value_of(*other, latency))) +
                       (latency ? " us" : " GB/s");
        }
      }
      const std::string subject = head.point.table.name() + ": " + what;
      if (!failure.empty()) {
        verdicts.line(out, 0, subject + ": " + failure);
      } else if (worst_text.empty()) {
        verdicts.line(out, -1, subject + ": not measured");
      } else {
        const std::string shown = limit_on_value ? format_value(worst) + (latency ? " us" : " GB/s")
                                  : latency      ? format_value(worst) + "x"
                                                 : format_percent(worst);
        verdicts.line(out, latency ? worst <= limit : worst >= limit,
                      subject + ": worst " + shown + " " + worst_text + " (target " + target + ")");
      }
    }
    if (!any) verdicts.line(out, -1, what + ": no rows of this run qualify");
  };
  const auto packed_at = [](std::size_t bytes) { return [bytes](const Row& row) { return row.point.packed == bytes; }; };

  // 1. Small messages: at most 8 us one way, and faster than contig-device up to 64 KiB.
  per_table("1. <= 4 KiB, gddt latency", [](const Row& row) { return row.point.packed <= 4096; }, Method::kGddt, true,
            8.0, "<= 8 us", true);
  per_table("1. <= 64 KiB, gddt latency over contig-device", [](const Row& row) { return row.point.packed <= 65536; },
            Method::kContigDevice, true, 1.0, "< 1x");
  // 2. Large messages: of the peer copy's bandwidth, 90% at 4 MiB and 75% at 1 MiB (two GPUs);
  //    6. with both ranks on one GPU, 70% of the device copy at 4 MiB.
  const auto subject_at = [&](std::size_t bytes) {
    return [bytes](const Row& row) { return row.point.packed == bytes && bandwidth_subject(row.point); };
  };
  if (two_gpus) {
    per_table("2. 4 MiB, gddt bandwidth over d2d-copy", subject_at(4 * kMiB), Method::kDeviceCopy, false, 0.9, ">= 90%");
    per_table("2. 1 MiB, gddt bandwidth over d2d-copy", subject_at(kMiB), Method::kDeviceCopy, false, 0.75, ">= 75%");
  } else {
    per_table("6. 4 MiB, one GPU, gddt bandwidth over d2d-copy", subject_at(4 * kMiB), Method::kDeviceCopy, false, 0.7,
              ">= 70%");
  }
  // 3. A 4 MiB vector of 4 B: at most 1.3x the peer copy's latency.
  per_table("3. 4 MiB, gddt latency over d2d-copy",
            [&](const Row& row) {
              return packed_at(4 * kMiB)(row) && row.point.table.family == "vector" && row.point.table.vector_block == 4;
            },
            Method::kDeviceCopy, true, 1.3, "<= 1.3x");
  // 4. Faster than the hand-written path at every size, in latency and bandwidth.
  const auto every = [](const Row&) { return true; };
  per_table("4. gddt latency over hand-packed", every, Method::kHandPacked, true, 1.0, "<= 1x");
  per_table("4. gddt bandwidth over hand-packed", every, Method::kHandPacked, false, 1.0, ">= 1x");

  // 7. Host-only traffic: the interposition costs at most 1% of an 8-byte host ping-pong.
  if (host != nullptr) {
    const double overhead = host->user_us / host->library_us - 1;
    char text[256];
    std::snprintf(text, sizeof text,
                  "7. host 8 B ping-pong in this process: MPI_Send through gddt %.3f us, PMPI_Send %.3f us: %+.1f%% "
                  "(target <= 1%%; also compare --host-pingpong with and without gddt)",
                  host->user_us, host->library_us, overhead * 100);
    verdicts.line(out, overhead <= 0.01, text);
  } else {
    verdicts.line(out, -1, "7. host 8 B ping-pong: not measured (gddt not loaded); run --host-pingpong with and without it");
  }
  std::fprintf(out, "targets: %d passed, %d missed, %d not measured (5, the flood, is gddt-bench-flood's)\n",
               verdicts.pass, verdicts.miss, verdicts.unmeasured);
}

}  // namespace gddt::bench
