// The text forms of settings' values: case, spaces and sizes ("4K", "4MiB").
#include <cctype>
#include <cstdint>
#include <limits>
#include <string>

#include "core/config_text.hpp"

namespace gddt::config {

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string trim(const std::string& text) {
  const char* spaces = " \t\r\n";
  std::size_t first = text.find_first_not_of(spaces);
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(spaces) - first + 1);
}

bool parse_size(const std::string& text, std::uint64_t* bytes) {
  std::string word = trim(text);
  std::size_t digits = 0;
  while (digits < word.size() && std::isdigit(static_cast<unsigned char>(word[digits]))) ++digits;
  if (digits == 0) return false;
  std::string suffix = lowercase(trim(word.substr(digits)));
  // "4M", "4MB" and "4MiB" all mean 4 * 2^20.
  if (suffix.size() == 3 && suffix.compare(1, 2, "ib") == 0) suffix.resize(1);
  if (suffix.size() == 2 && suffix[1] == 'b') suffix.resize(1);
  int shift = 0;
  if (suffix == "k") {
    shift = 10;
  } else if (suffix == "m") {
    shift = 20;
  } else if (suffix == "g") {
    shift = 30;
  } else if (suffix == "t") {
    shift = 40;
  } else if (!suffix.empty() && suffix != "b") {
    return false;
  }
  std::uint64_t value = 0;
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < digits; ++i) {
    unsigned digit = static_cast<unsigned>(word[i] - '0');
    if (value > (max - digit) / 10) return false;
    value = value * 10 + digit;
  }
  if (value > (max >> shift)) return false;
  *bytes = value << shift;
  return true;
}

}  // namespace gddt::config
