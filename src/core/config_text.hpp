// The text forms of settings' values (config_text.cpp): case, spaces and sizes, which the
// tools and benchmarks read too (through config.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace gddt::config {

std::string lowercase(std::string text);
std::string trim(const std::string& text);

// Parses "4M", "64K", "1G", "123" into bytes; false when the text is not a size.
bool parse_size(const std::string& text, std::uint64_t* bytes);

}  // namespace gddt::config
