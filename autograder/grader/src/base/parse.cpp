#include <reduce_grade/base/parse.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <system_error>

namespace reduce::grade {

std::optional<std::uint64_t> parse_count(std::string_view text, std::uint64_t max) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value, 10);
  if (error != std::errc() || stop != end || value > max) return std::nullopt;
  return value;
}

std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::string_view leading_digits(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
  return text.substr(0, n);
}

std::string read_file_at_most(const std::filesystem::path& path, std::size_t max_bytes, bool* cut) {
  if (cut != nullptr) *cut = false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string text;
  char buffer[1 << 16];
  while (in && text.size() < max_bytes) {
    in.read(buffer, static_cast<std::streamsize>(
                        std::min<std::size_t>(sizeof buffer, max_bytes - text.size())));
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
  }
  if (cut != nullptr && text.size() == max_bytes)
    *cut = in.peek() != std::ifstream::traits_type::eof();
  return text;
}

}  // namespace reduce::grade
