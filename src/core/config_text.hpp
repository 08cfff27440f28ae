// Text forms shared by the settings' reader (config.cpp): case and spaces. Sizes are
// config.hpp's parse_size, also for the tools.
#pragma once

#include <string>

namespace gddt::config {

std::string lowercase(std::string text);
std::string trim(const std::string& text);

}  // namespace gddt::config
