#include <reduce_grade/base/util.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <exception>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

namespace reduce::grade {

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : separator) + parts[i];
  return out;
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_of(" \t\n'\"$\\;&|<>*?()`#~{}[]!") == std::string::npos)
    return word;
  return "'" + replace_all(word, "'", "'\\''") + "'";
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.emplace_back(line);
    start = end + 1;
  }
  return lines;
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.substr(0, prefix.size()) == prefix;
}

bool contains(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  if (from.empty()) return text;
  std::size_t pos = 0;
  while ((pos = text.find(from, pos)) != std::string::npos) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

namespace {

/// The code point of the UTF-8 sequence at \p s[i] and its length in bytes, or a length of 0
/// where the byte at i does not begin a valid sequence (overlong forms, surrogates and code
/// points above U+10FFFF are invalid).
std::pair<std::uint32_t, std::size_t> decode_utf8(const unsigned char* s, std::size_t n,
                                                  std::size_t i) {
  const unsigned char c = s[i];
  if (c < 0x80) return {c, 1};
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0)
    len = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0)
    len = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0)
    len = 4, cp = c & 0x07;
  if (len == 0 || i + len > n) return {0, 0};
  for (std::size_t k = 1; k < len; ++k) {
    if ((s[i + k] & 0xC0) != 0x80) return {0, 0};
    cp = (cp << 6) | (s[i + k] & 0x3F);
  }
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
      cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return {0, 0};
  return {cp, len};
}

/// A code point a terminal or an XML parser treats as a control: C0 and DEL, C1 (U+0080 to
/// U+009F, which some terminals obey as ESC sequences), and the non-characters U+FFFE and U+FFFF
/// that XML 1.0 forbids.
bool control_code_point(std::uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF;
}

/// The bidirectional overrides and isolates, which reorder what a reader sees of a line.
bool bidi_code_point(std::uint32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string sanitize_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, len] = decode_utf8(s, text.size(), i);
    if (len == 0) {
      out += '?';
      ++i;
      continue;
    }
    if (cp == '\t' || cp == '\n' || !control_code_point(cp)) out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

std::string inert_text(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, len] = decode_utf8(s, text.size(), i);
    if (len == 0) {
      out += fmt::format("\\x{:02x}", s[i]);
      ++i;
      continue;
    }
    if (keep_lines && (cp == '\t' || cp == '\n'))
      out += static_cast<char>(cp);
    else if (cp < 0x80 && control_code_point(cp))
      out += fmt::format("\\x{:02x}", cp);
    else if (control_code_point(cp) || bidi_code_point(cp))
      out += fmt::format("\\u{:04x}", cp);
    else
      out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

std::string inert_name(std::string_view name, std::size_t max_bytes) {
  std::string out = inert_text(name, false);
  if (out.size() <= max_bytes) return out;
  const std::size_t total = out.size();
  std::size_t cut = max_bytes;
  // Never inside a UTF-8 sequence (every escape is ASCII).
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  return out + fmt::format("...[{} more bytes]", total - cut);
}

std::string clip(std::string_view text, std::size_t max_lines, std::size_t max_bytes) {
  std::vector<std::string> lines = split_lines(text);
  while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
  std::string out;
  std::size_t taken = 0;
  for (const std::string& line : lines) {
    if (taken == max_lines || (taken > 0 && out.size() + line.size() + 1 > max_bytes)) {
      out += fmt::format("[... {} more lines]\n", lines.size() - taken);
      break;
    }
    if (line.size() + 1 > max_bytes) {  // one overlong line: cut it
      out += line.substr(0, max_bytes > 4 ? max_bytes - 4 : 0) + " ...";
    } else {
      out += line;
    }
    out += '\n';
    ++taken;
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_file(const fs::path& path, std::string_view text) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

fs::path make_temp_dir(const std::string& prefix) {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::random_device device;
  std::mt19937_64 engine(
      device() ^
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  for (int attempt = 0; attempt < 100; ++attempt) {
    const fs::path candidate = base / fmt::format("{}{:08x}", prefix, engine() & 0xFFFFFFFFu);
    if (fs::create_directory(candidate, ec)) return candidate;
  }
  throw std::runtime_error("cannot create a temporary folder in " + base.string());
}

void remove_all_quietly(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

bool is_empty_dir(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return true;
  return fs::is_directory(path, ec) && fs::directory_iterator(path, ec) == fs::directory_iterator();
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void run_in_parallel(std::size_t count, int threads, const std::function<void(std::size_t)>& job) {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr first;  // what the first job to throw threw
  const auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        job(i);
      } catch (...) {  // an exception leaving a std::thread would end the process
        const std::lock_guard<std::mutex> lock(mutex);
        if (!first) first = std::current_exception();
        next = count;  // no job starts after it
      }
    }
  };
  std::vector<std::thread> pool;
  const std::size_t extra =
      std::min<std::size_t>(count, static_cast<std::size_t>(std::max(1, threads)));
  for (std::size_t t = 1; t < extra; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::uint64_t random_seed() {
  std::random_device device;
  std::uint64_t value =
      (static_cast<std::uint64_t>(device()) << 32) ^ device() ^
      static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  value &= (std::uint64_t{1} << 53) - 1;  // exact in a JSON number
  return value == 0 ? 1 : value;
}

std::string fixed(double value, int digits) {
  if (!std::isfinite(value)) return "-";
  return fmt::format("{:.{}f}", value, digits);
}

std::string fraction_text(double value) {
  if (!std::isfinite(value)) return "-";
  return fmt::format("{:.4g}", value);
}

std::string points_text(double value) {
  std::string text = fmt::format("{:.2f}", value);
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

}  // namespace reduce::grade
