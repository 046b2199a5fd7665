#include "text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace reduce::bench {

std::size_t parse_size(const std::string& text) {
  const auto caret = text.find('^');
  if (caret == std::string::npos) return std::stoull(text);
  return static_cast<std::size_t>(
      std::llround(std::pow(std::stod(text.substr(0, caret)), std::stod(text.substr(caret + 1)))));
}

std::vector<std::size_t> size_list(const char* variable, const char* fallback) {
  std::vector<std::size_t> values;
  const char* env = std::getenv(variable);
  for (const std::string& v : split(env != nullptr ? env : fallback, ","))
    values.push_back(parse_size(v));
  return values;
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace reduce::bench
