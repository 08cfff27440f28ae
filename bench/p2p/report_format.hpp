// What the tables and the target lines of gddt-bench share: number formats and row tests.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "report.hpp"

namespace gddt::bench {

constexpr std::size_t kMiB = std::size_t{1} << 20;

inline std::string format_value(double value) {
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
inline std::string format_bytes(std::size_t bytes) {
  if (bytes < 1024 || bytes % 1024 == 0) return format_size(bytes);
  char text[32];
  const bool mebibytes = bytes >= (std::size_t{1} << 20);
  std::snprintf(text, sizeof text, "%.1f%s", static_cast<double>(bytes) / (mebibytes ? 1048576.0 : 1024.0),
                mebibytes ? "M" : "K");
  return text;
}

inline std::string format_percent(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, ratio >= 0.1 ? "%.0f%%" : "%.1f%%", ratio * 100);
  return text;
}

inline double value_of(const Measurement& measurement, bool latency) {
  return latency ? measurement.latency_us : measurement.bandwidth_gbs;
}

inline bool has_value(const Measurement* measurement, bool latency) {
  return measurement != nullptr && measurement->status.empty() && std::isfinite(value_of(*measurement, latency));
}

inline std::string csv_number(double value) {
  if (!std::isfinite(value)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

inline bool same_table(const PointKey& a, const PointKey& b) {
  return a.memory.name() == b.memory.name() && a.table.name() == b.table.name();
}

inline bool is_device_pair(const MemoryPair& memory) {
  return memory.rank0 == MemoryKind::kDevice && memory.rank1 == MemoryKind::kDevice;
}

}  // namespace gddt::bench
