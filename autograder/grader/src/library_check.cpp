#include <reduce_grade/library_check.hpp>
#include <reduce_grade/process.hpp>
#include <reduce_grade/util.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <system_error>

namespace reduce::grade {
namespace {

constexpr std::size_t kMaxFindingsPerPattern = 3;

/// The symbol of one `nm -C` line ("0000000000001530 T reduce::sum(...)", "   U cudaFree").
std::string symbol_of(const std::string& line) {
  const std::string t = trim(line);
  // Skip an address column (hex digits) when present, then the one-letter type.
  std::size_t pos = 0;
  if (t.size() > 2 && std::isxdigit(static_cast<unsigned char>(t[0])) &&
      t.find(' ') != std::string::npos && t.find(' ') >= 8)
    pos = t.find(' ') + 1;
  if (pos + 2 <= t.size() && t[pos + 1] == ' ') pos += 2;
  return t.substr(pos);
}

bool is_stub_symbol(const std::string& symbol) {
  return contains(symbol, "reduce::NotImplemented::NotImplemented") ||
         contains(symbol, "_ZN6reduce14NotImplementedC");
}

}  // namespace

std::string LibraryCheck::describe() const {
  if (forbidden.empty()) return inspected ? "no library reductions found" : problem;
  std::string text = "forbidden library reduction in the lab: ";
  std::set<std::string> seen;
  std::size_t shown = 0;
  // Most readable first: #include lines, NEEDED libraries, then symbols that begin with the
  // library's namespace (cub::DeviceReduce::Sum<...>), then the rest (guard variables...).
  auto rank = [](const LibraryFinding& f) {
    if (f.kind == "include") return 0;
    if (f.kind == "needed") return 1;
    if (starts_with(f.what, "cub::") || starts_with(f.what, "thrust::") ||
        starts_with(f.what, "cublas") || starts_with(f.what, "cudnn"))
      return 2;
    return 3;
  };
  std::vector<LibraryFinding> ordered = forbidden;
  std::stable_sort(
      ordered.begin(), ordered.end(),
      [&](const LibraryFinding& a, const LibraryFinding& b) { return rank(a) < rank(b); });
  for (const LibraryFinding& f : ordered) {
    if (shown == 3) {
      text += fmt::format("; and {} more", forbidden.size() - shown);
      break;
    }
    const std::string item =
        fmt::format("{} {}", f.kind, f.what.size() > 120 ? f.what.substr(0, 117) + "..." : f.what);
    if (!seen.insert(item).second) continue;
    text += (shown == 0 ? "" : "; ") + item;
    ++shown;
  }
  return text;
}

LibraryCheck check_symbol_text(const std::string& nm_text, const std::string& readelf_dynamic,
                               const LibraryRules& rules) {
  LibraryCheck check;
  check.inspected = true;
  std::map<std::string, std::size_t> per_pattern;
  std::set<std::string> seen;
  for (const std::string& line : split_lines(nm_text)) {
    const std::string symbol = symbol_of(line);
    if (symbol.empty()) continue;
    if (is_stub_symbol(symbol)) check.stub = true;
    for (const std::string& pattern : rules.forbidden_symbols) {
      if (!contains(symbol, pattern)) continue;
      if (per_pattern[pattern]++ < kMaxFindingsPerPattern && seen.insert(symbol).second)
        check.forbidden.push_back({"symbol", symbol});
      break;
    }
  }
  static const std::regex needed(R"(\(NEEDED\)[^\[]*\[([^\]]+)\])");
  for (const std::string& line : split_lines(readelf_dynamic)) {
    std::smatch m;
    if (!std::regex_search(line, m, needed)) continue;
    const std::string library = m[1];
    for (const std::string& pattern : rules.forbidden_needed) {
      if (contains(library, pattern)) {
        check.forbidden.push_back({"needed", library});
        break;
      }
    }
  }
  return check;
}

LibraryCheck check_library_bytes(const std::string& bytes, const LibraryRules& rules) {
  LibraryCheck check;
  check.inspected = true;
  check.stub = contains(bytes, "_ZN6reduce14NotImplementedC");
  // Mangled namespaces: cub:: is "3cub" after N or _ZN, thrust:: is "6thrust".
  const std::vector<std::pair<std::string, std::string>> markers = {{"_ZN3cub", "cub::"},
                                                                    {"N3cub", "cub::"},
                                                                    {"_ZN6thrust", "thrust::"},
                                                                    {"N6thrust", "thrust::"}};
  std::set<std::string> found;
  for (const auto& [marker, name] : markers) {
    for (const std::string& pattern : rules.forbidden_symbols)
      if (pattern == name && contains(bytes, marker) && found.insert(name).second)
        check.forbidden.push_back({"symbol", name + " (mangled name in the library)"});
  }
  for (const std::string& pattern : rules.forbidden_symbols) {
    if (pattern.find("::") != std::string::npos) continue;
    if (contains(bytes, pattern) && found.insert(pattern).second)
      check.forbidden.push_back({"symbol", pattern + " (name in the library)"});
  }
  for (const std::string& pattern : rules.forbidden_needed)
    if (contains(bytes, pattern + ".so") && found.insert(pattern).second)
      check.forbidden.push_back({"needed", pattern});
  return check;
}

LibraryCheck inspect_library(const fs::path& library, const LibraryRules& rules) {
  std::error_code ec;
  if (!fs::is_regular_file(library, ec)) {
    LibraryCheck check;
    check.problem = "library not found: " + library.string();
    return check;
  }
  const auto nm = find_program("nm");
  const auto readelf = find_program("readelf");
  if (!nm) {
    LibraryCheck check = check_library_bytes(read_file(library), rules);
    check.problem = "nm not found: searched the library's bytes instead";
    return check;
  }
  const auto run = [](std::vector<std::string> argv) {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.timeout_s = 120;
    spec.output_cap = std::size_t{64} << 20;
    return run_process(spec);
  };
  // The static symbol table (defined and undefined, local included), then the dynamic one
  // (all that is left when the library is stripped).
  const ProcessResult all = run({nm->string(), "-C", library.string()});
  const ProcessResult dynamic = run({nm->string(), "-C", "-D", library.string()});
  const ProcessResult elf =
      readelf ? run({readelf->string(), "-d", library.string()}) : ProcessResult{};
  if (!all.succeeded() && !dynamic.succeeded()) {
    LibraryCheck check = check_library_bytes(read_file(library), rules);
    check.problem = "nm failed (" + dynamic.describe() + "): searched the library's bytes instead";
    return check;
  }
  LibraryCheck check = check_symbol_text(all.output + "\n" + dynamic.output, elf.output, rules);
  if (!readelf) {
    const LibraryCheck bytes = check_library_bytes(read_file(library), rules);
    for (const LibraryFinding& f : bytes.forbidden)
      if (f.kind == "needed") check.forbidden.push_back(f);
  }
  return check;
}

std::vector<LibraryFinding> scan_sources(const fs::path& lab_dir, const LibraryRules& rules) {
  std::vector<LibraryFinding> findings;
  std::error_code ec;
  static const std::set<std::string> extensions = {".cu", ".cuh", ".h",   ".hpp", ".cpp",
                                                   ".cc", ".cxx", ".inl", ".hh"};
  static const std::regex include(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(lab_dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && extensions.count(it->path().extension().string()) != 0)
      files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    int number = 0;
    for (const std::string& line : split_lines(read_file(file))) {
      ++number;
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string header = m[1];
      for (const std::string& prefix : rules.forbidden_includes) {
        if (starts_with(header, prefix)) {
          findings.push_back(
              {"include", fmt::format("{}:{}: #include <{}>",
                                      fs::relative(file, lab_dir.parent_path(), ec).string(),
                                      number, header)});
          break;
        }
      }
    }
  }
  return findings;
}

}  // namespace reduce::grade
