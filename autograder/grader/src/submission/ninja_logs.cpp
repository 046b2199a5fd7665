// Ninja's build and deps logs read directly (ninja_logs.hpp), in the layout ninja's own
// deps_log.cc writes: a signature and a version, then records of a 4-byte size word whose high
// bit marks a deps record.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/submission/ninja_logs.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string_view>
#include <vector>

namespace reduce::grade {

namespace fs = std::filesystem;

std::set<std::string> finished_outputs(const fs::path& build_dir) {
  std::set<std::string> outputs;
  const std::string log = read_file(build_dir / ".ninja_log");
  const std::size_t complete = log.rfind('\n');  // a last line without its end is still written
  if (complete == std::string::npos) return outputs;
  // "# ninja log v5" (or v6, v7), then start, end, mtime, output and command hash, tab apart.
  for (const std::string& line : split_lines(std::string_view(log).substr(0, complete))) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> fields = reduce::split_fields(line, '\t');
    if (fields.size() >= 5) outputs.insert(fields[3]);
  }
  return outputs;
}

std::string lab_dependencies(const std::string& deps, const std::string& lab,
                             const std::string& op) {
  const std::string marker = fmt::format("submission_{}_{}.dir", lab, op);
  std::string depfile;
  bool inside = false;
  for (const std::string& line : split_lines(deps)) {
    if (!line.empty() && line[0] != ' ' && line[0] != '\t') {
      inside = contains(line, marker) && contains(line, ": #deps");
      if (inside) depfile += line.substr(0, line.find(": #deps")) + ":";
      continue;
    }
    const std::string dep = trim(line);
    if (inside && !dep.empty()) depfile += " " + replace_all(dep, " ", "\\ ");
  }
  return depfile.empty() ? depfile : depfile + "\n";
}

namespace {

/// The 4-byte word at \p at of \p data (the host's order: ninja writes its own).
std::uint32_t word_at(std::string_view data, std::size_t at) {
  std::uint32_t w = 0;
  std::memcpy(&w, data.data() + at, sizeof(w));
  return w;
}

}  // namespace

std::string read_deps_log(const fs::path& build_dir) {
  const std::string file = read_file(build_dir / ".ninja_deps");
  const std::string_view data = file;
  constexpr std::string_view kSignature = "# ninjadeps\n";
  constexpr std::uint32_t kVersion = 4;  // ninja 1.10 on: 64-bit mtimes
  const std::size_t header = kSignature.size() + 4;
  if (data.size() < header || data.substr(0, kSignature.size()) != kSignature ||
      word_at(data, kSignature.size()) != kVersion)
    return {};
  std::vector<std::string> paths;  // a path's id is its place in the log
  struct Deps {
    std::uint64_t mtime = 0;
    std::vector<std::uint32_t> inputs;
  };
  std::map<std::uint32_t, Deps> deps;  // by the object's id; a later record replaces an earlier
  for (std::size_t at = header; at + 4 <= data.size();) {
    const std::uint32_t head = word_at(data, at);
    const bool is_deps = (head >> 31) != 0;
    const std::uint32_t size = head & 0x7FFFFFFFu;
    if (size % 4 != 0 || size < (is_deps ? 12u : 4u) || at + 4 + size > data.size()) break;
    const std::string_view record = data.substr(at + 4, size);
    if (is_deps) {
      Deps d;
      const std::uint32_t object = word_at(record, 0);
      d.mtime = word_at(record, 4) | static_cast<std::uint64_t>(word_at(record, 8)) << 32;
      for (std::size_t k = 12; k < size; k += 4) d.inputs.push_back(word_at(record, k));
      deps[object] = std::move(d);
    } else {
      // The path, padded with up to three NULs, then its checksum: the complement of its id.
      if (word_at(record, size - 4) != ~static_cast<std::uint32_t>(paths.size())) break;
      std::string_view path = record.substr(0, size - 4);
      while (!path.empty() && path.back() == '\0') path.remove_suffix(1);
      paths.emplace_back(path);
    }
    at += 4 + size;
  }
  std::string text;
  for (const auto& [object, d] : deps) {
    if (object >= paths.size()) continue;
    std::string inputs;
    bool known = true;
    for (std::uint32_t in : d.inputs) {
      known = known && in < paths.size();
      if (known) inputs += "    " + paths[in] + "\n";
    }
    if (!known) continue;  // a record that names a path the log does not hold
    text += fmt::format("{}: #deps {}, deps mtime {} (VALID)\n{}\n", paths[object], d.inputs.size(),
                        d.mtime, inputs);
  }
  return text;
}

}  // namespace reduce::grade
