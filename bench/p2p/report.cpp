#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace gddt::bench {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::string format_value(double value) {
  char text[32];
  if (value >= 100) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else if (value >= 10) {
    std::snprintf(text, sizeof text, "%.1f", value);
  } else if (value >= 1) {
    std::snprintf(text, sizeof text, "%.2f", value);
  } else if (value >= 0.001) {
    std::snprintf(text, sizeof text, "%.3f", value);
  } else {
    std::snprintf(text, sizeof text, "%.1e", value);
  }
  return text;
}

// Exact for whole KiB/MiB, else one decimal: extents are rarely round.
std::string format_bytes(std::size_t bytes) {
  if (bytes < 1024 || bytes % 1024 == 0) return format_size(bytes);
  char text[32];
  const bool mebibytes = bytes >= (std::size_t{1} << 20);
  std::snprintf(text, sizeof text, "%.1f%s", static_cast<double>(bytes) / (mebibytes ? 1048576.0 : 1024.0),
                mebibytes ? "M" : "K");
  return text;
}

std::string format_percent(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, ratio >= 0.1 ? "%.0f%%" : "%.1f%%", ratio * 100);
  return text;
}

double value_of(const Measurement& measurement, bool latency) {
  return latency ? measurement.latency_us : measurement.bandwidth_gbs;
}

bool has_value(const Measurement* measurement, bool latency) {
  return measurement != nullptr && measurement->status.empty() && std::isfinite(value_of(*measurement, latency));
}

std::string csv_number(double value) {
  if (!std::isfinite(value)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

bool same_table(const PointKey& a, const PointKey& b) {
  return a.memory.name() == b.memory.name() && a.table.name() == b.table.name();
}

bool is_device_pair(const MemoryPair& memory) {
  return memory.rank0 == MemoryKind::kDevice && memory.rank1 == MemoryKind::kDevice;
}

// Tallies PASS/MISS lines of the target checks.
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

}  // namespace

void Report::record(const PointKey& point, Method method, const Measurement& measurement) {
  auto row = std::find_if(rows_.begin(), rows_.end(), [&](const Row& candidate) {
    return same_table(candidate.point, point) && candidate.point.packed == point.packed;
  });
  if (row == rows_.end()) {
    rows_.push_back(Row{point, {}});
    row = rows_.end() - 1;
  }
  row->results[method] = measurement;
}

const Measurement* Report::find(const Row& row, Method method) const {
  const auto found = row.results.find(method);
  return found == row.results.end() ? nullptr : &found->second;
}

const Measurement* Report::contig_reference(const Row& row, Method* which) const {
  for (Method method : {Method::kContigDevice, Method::kContigStaged}) {
    const Measurement* measurement = find(row, method);
    if (measurement != nullptr && measurement->status.empty()) {
      *which = method;
      return measurement;
    }
  }
  return nullptr;
}

void Report::print_table(std::FILE* out, const std::vector<const Row*>& rows, bool latency) const {
  std::fprintf(out, "%s\n", latency ? "latency, us (half the median round trip; lower is better)"
                                    : "bandwidth, GB/s (packed bytes; higher is better)");
  std::vector<std::string> header = {"packed", "extent"};
  for (Method method : methods_) header.push_back(method_name(method));
  header.push_back("gddt/cpy2d");
  header.push_back("gddt/contig");
  // Every other method over the d2d-copy ceiling, in tables where it was measured.
  std::vector<Method> over_ceiling;
  const bool ceiling_measured = std::any_of(
      rows.begin(), rows.end(), [&](const Row* row) { return has_value(find(*row, Method::kDeviceCopy), latency); });
  if (ceiling_measured) {
    for (Method method : methods_) {
      if (method == Method::kDeviceCopy) continue;
      over_ceiling.push_back(method);
      header.push_back(std::string(method_name(method)) + "/d2d");
    }
  }
  std::vector<std::vector<std::string>> lines = {header};
  for (const Row* row : rows) {
    std::vector<std::string> cells = {format_size(row->point.packed), format_bytes(row->point.extent)};
    for (Method method : methods_) {
      const Measurement* measurement = find(*row, method);
      if (measurement == nullptr) {
        cells.push_back("-");
      } else if (!measurement->status.empty()) {
        cells.push_back(measurement->status);
      } else {
        const double value = value_of(*measurement, latency);
        cells.push_back(std::isfinite(value) ? format_value(value) : "-");
      }
    }
    const Measurement* gddt = find(*row, Method::kGddt);
    Method contig_method = Method::kContigStaged;
    for (const Measurement* other : {find(*row, Method::kCpy2d), contig_reference(*row, &contig_method)}) {
      const bool both = has_value(gddt, latency) && has_value(other, latency);
      cells.push_back(both ? format_percent(value_of(*gddt, latency) / value_of(*other, latency)) : "-");
    }
    const Measurement* ceiling = find(*row, Method::kDeviceCopy);
    for (Method method : over_ceiling) {
      const Measurement* measurement = find(*row, method);
      const bool both = has_value(measurement, latency) && has_value(ceiling, latency);
      cells.push_back(both ? format_percent(value_of(*measurement, latency) / value_of(*ceiling, latency)) : "-");
    }
    lines.push_back(cells);
  }
  std::vector<std::size_t> widths(header.size(), 0);
  for (const auto& line : lines) {
    for (std::size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  }
  for (const auto& line : lines) {
    for (std::size_t i = 0; i < line.size(); ++i) {
      std::fprintf(out, "  %*s", static_cast<int>(widths[i]), line[i].c_str());
    }
    std::fprintf(out, "\n");
  }
}

void Report::print_tables(std::FILE* out) const {
  std::vector<bool> printed(rows_.size(), false);
  for (std::size_t first = 0; first < rows_.size(); ++first) {
    if (printed[first]) continue;
    std::vector<const Row*> table;
    for (std::size_t i = first; i < rows_.size(); ++i) {
      if (same_table(rows_[i].point, rows_[first].point)) {
        table.push_back(&rows_[i]);
        printed[i] = true;
      }
    }
    const PointKey& point = rows_[first].point;
    std::fprintf(out, "\n== %s, %s (rank 0 memory : rank 1 memory)\n   %s\n", point.table.name().c_str(),
                 point.memory.name().c_str(), point.table.description().c_str());
    if (latency_) print_table(out, table, true);
    if (bandwidth_) print_table(out, table, false);
  }
  std::fprintf(out, "gddt/cpy2d and gddt/contig: gddt's number over the other's (contig = contig-device where "
                    "measured, else contig-staged)\n");
  if (std::find(methods_.begin(), methods_.end(), Method::kDeviceCopy) != methods_.end()) {
    std::fprintf(out,
                 "<method>/d2d: the method's number over d2d-copy's, the device-to-device copy of the packed "
                 "bytes without MPI (latency: how many times the ceiling's time; bandwidth: the share of it)\n");
  }
}

bool Report::write_csv(const std::string& path) const {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  std::fprintf(file,
               "memory,type,family,vector_block,min_block_bytes,packed_bytes,extent_bytes,method,latency_us,"
               "bandwidth_gbs,status\n");
  for (const Row& row : rows_) {
    for (const auto& [method, measurement] : row.results) {
      std::fprintf(file, "%s,%s,%s,%zu,%zu,%zu,%zu,%s,%s,%s,%s\n", row.point.memory.name().c_str(),
                   row.point.table.name().c_str(), row.point.table.family.c_str(), row.point.table.vector_block,
                   row.point.min_block, row.point.packed, row.point.extent, method_name(method),
                   csv_number(measurement.latency_us).c_str(), csv_number(measurement.bandwidth_gbs).c_str(),
                   measurement.status.c_str());
    }
  }
  return std::fclose(file) == 0;
}

void Report::print_targets(std::FILE* out, const HostPingpong* host) const {
  std::fprintf(out, "\nTargets of issue 3 (device:device rows of this run)\n");
  Verdicts verdicts;

  // 1. A 4 MiB vector of 4-byte blocks: gddt within 5% of cpy2d's latency.
  const Row* vector4 = nullptr;
  for (const Row& row : rows_) {
    if (is_device_pair(row.point.memory) && row.point.table.family == "vector" && row.point.table.vector_block == 4 &&
        row.point.packed == 4 * kMiB) {
      vector4 = &row;
    }
  }
  const Measurement* gddt4 = vector4 != nullptr ? find(*vector4, Method::kGddt) : nullptr;
  const Measurement* cpy2d4 = vector4 != nullptr ? find(*vector4, Method::kCpy2d) : nullptr;
  if (has_value(gddt4, true) && has_value(cpy2d4, true)) {
    const double ratio = gddt4->latency_us / cpy2d4->latency_us;
    verdicts.line(out, ratio <= 0.05,
                  "4 MiB vector of 4 B (stride 8 B): gddt latency " + format_value(gddt4->latency_us) + " us = " +
                      format_percent(ratio) + " of cpy2d " + format_value(cpy2d4->latency_us) +
                      " us (target <= 5%; the paper reached 12%)");
  } else if (gddt4 != nullptr && !gddt4->status.empty()) {
    verdicts.line(out, 0, "4 MiB vector of 4 B: gddt " + gddt4->status);
  } else {
    verdicts.line(out, -1, "4 MiB vector of 4 B vs cpy2d: not measured (needs --blocks 4, size 4M, gddt and cpy2d)");
  }

  // Per table: the worst ratio gddt/reference over the rows `applies` selects.
  const auto per_table = [&](const char* what, const std::function<bool(const Row&)>& applies, bool latency,
                             double limit, const char* target) {
    bool any = false;
    for (std::size_t first = 0; first < rows_.size(); ++first) {
      const Row& head = rows_[first];
      if (!is_device_pair(head.point.memory) || !applies(head)) continue;
      bool first_of_table = true;
      for (std::size_t i = 0; i < first; ++i) {
        if (same_table(rows_[i].point, head.point) && applies(rows_[i])) first_of_table = false;
      }
      if (!first_of_table) continue;
      any = true;
      double worst = latency ? 0 : INFINITY;
      std::string worst_text;
      std::string failure;
      Method reference_method = Method::kContigStaged;
      for (std::size_t i = first; i < rows_.size(); ++i) {
        const Row& row = rows_[i];
        if (!same_table(row.point, head.point) || !applies(row)) continue;
        const Measurement* gddt = find(row, Method::kGddt);
        const Measurement* reference = contig_reference(row, &reference_method);
        if (gddt != nullptr && !gddt->status.empty()) {
          failure = "gddt " + gddt->status + " at " + format_size(row.point.packed);
          break;
        }
        if (!has_value(gddt, latency) || !has_value(reference, latency)) continue;
        const double ratio = value_of(*gddt, latency) / value_of(*reference, latency);
        if (latency ? ratio > worst : ratio < worst) {
          worst = ratio;
          worst_text = "at " + format_size(row.point.packed) + ": " + format_value(value_of(*gddt, latency)) + " vs " +
                       format_value(value_of(*reference, latency)) + (latency ? " us" : " GB/s");
        }
      }
      const std::string subject = head.point.table.name() + ": " + what + " " + method_name(reference_method);
      if (!failure.empty()) {
        verdicts.line(out, 0, subject + ": " + failure);
      } else if (worst_text.empty()) {
        verdicts.line(out, -1, subject + ": not measured");
      } else {
        const bool met = latency ? worst <= limit : worst >= limit;
        verdicts.line(out, met,
                      subject + ": worst " + (latency ? format_value(worst) + "x" : format_percent(worst)) + " " +
                          worst_text + " (target " + target + ")");
      }
    }
    if (!any) verdicts.line(out, -1, std::string(what) + ": no rows of this run qualify");
  };

  // 2. Packed >= 1 MiB with blocks >= 64 B: gddt at least 85% of the contiguous bandwidth.
  per_table("packed >= 1 MiB, gddt bandwidth vs",
            [](const Row& row) { return row.point.packed >= kMiB && row.point.min_block >= 64; }, false, 0.85,
            ">= 85%");
  // 3. Packed <= 4 KiB: gddt latency at most twice the contiguous latency.
  per_table("packed <= 4 KiB, gddt latency vs", [](const Row& row) { return row.point.packed <= 4096; }, true, 2.0,
            "<= 2x");

  // 4. The host path: gddt's interposition costs at most 3% of an 8-byte host ping-pong.
  if (host != nullptr) {
    const double overhead = host->user_us / host->library_us - 1;
    char text[256];
    std::snprintf(text, sizeof text,
                  "host 8 B ping-pong in this process: MPI_Send through gddt %.3f us, PMPI_Send %.3f us: %+.1f%% "
                  "(target <= 3%%; also compare --host-pingpong with and without gddt)",
                  host->user_us, host->library_us, overhead * 100);
    verdicts.line(out, overhead <= 0.03, text);
  } else {
    verdicts.line(out, -1, "host 8 B ping-pong: not measured (gddt not loaded); run --host-pingpong with and without it");
  }
  std::fprintf(out, "targets: %d passed, %d missed, %d not measured\n", verdicts.pass, verdicts.miss,
               verdicts.unmeasured);
}

}  // namespace gddt::bench
