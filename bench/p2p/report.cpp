#include "report.hpp"

#include "report_format.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace gddt::bench {

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
  header.push_back("gddt/hand");
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
    for (const Measurement* other :
         {find(*row, Method::kCpy2d), contig_reference(*row, &contig_method), find(*row, Method::kHandPacked)}) {
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
  std::fprintf(out, "gddt/cpy2d, gddt/contig and gddt/hand: gddt's number over the other's (contig = "
                    "contig-device where measured, else contig-staged; hand = hand-packed)\n");
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

}  // namespace gddt::bench
