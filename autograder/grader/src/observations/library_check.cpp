#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/library_check.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_vocabulary/result_kind.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>

namespace reduce::grade {
namespace {

/// Runs a binutils tool on a library (nm, readelf, objdump): two minutes, 64 MiB of output.
ProcessResult run_tool(std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout_s = 120;
  spec.output_cap = std::size_t{64} << 20;
  return run_process(spec);
}

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

// The lines read below (symbols, library names, #include lines, objdump's function labels)
// are the lab's to choose and may be megabytes long: they are read by hand, not by std::regex,
// whose matcher recurses once per character and would overflow the stack.

/// White space as std::regex's \s has it.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

/// The index of the first character of \p text at or after \p at that is not white space.
std::size_t skip_space(std::string_view text, std::size_t at) {
  while (at < text.size() && is_space(text[at])) ++at;
  return at;
}

/// The index after the run of hex digits at \p at (\p at itself when there is none).
std::size_t skip_hex(std::string_view text, std::size_t at) {
  while (at < text.size() && is_hex(text[at])) ++at;
  return at;
}

/// The library a `readelf -d` line names, "[libcublas.so.12]" after "(NEEDED)"; empty for
/// other lines.
std::string needed_library(std::string_view line) {
  const std::size_t tag = line.find("(NEEDED)");
  if (tag == std::string_view::npos) return {};
  const std::size_t open = line.find('[', tag);
  if (open == std::string_view::npos) return {};
  const std::size_t close = line.find(']', open + 1);
  if (close == std::string_view::npos || close == open + 1) return {};
  return std::string(line.substr(open + 1, close - open - 1));
}

/// The header an `#include <...>` or `#include "..."` line names (nullopt for other lines).
std::optional<std::string> included_header(std::string_view line) {
  std::size_t at = skip_space(line, 0);
  if (at == line.size() || line[at] != '#') return std::nullopt;
  at = skip_space(line, at + 1);
  if (!starts_with(line.substr(at), "include")) return std::nullopt;
  at = skip_space(line, at + 7);
  if (at == line.size() || (line[at] != '<' && line[at] != '"')) return std::nullopt;
  const std::size_t end = line.find_first_of(">\"", at + 1);
  if (end == std::string_view::npos || end == at + 1) return std::nullopt;
  return std::string(line.substr(at + 1, end - at - 1));
}

bool is_stub_symbol(const std::string& symbol) {
  return contains(symbol, "reduce::NotImplemented::NotImplemented") ||
         contains(symbol, "_ZN6reduce14NotImplementedC");
}

}  // namespace

const char* finding_kind_name(FindingKind kind) {
  switch (kind) {
    case FindingKind::kSymbol:
      return "symbol";
    case FindingKind::kNeeded:
      return "needed";
    case FindingKind::kInclude:
      return "include";
    case FindingKind::kHeader:
      return "header";
    case FindingKind::kImport:
      return "import";
    case FindingKind::kExport:
      return "export";
    case FindingKind::kSyscall:
      return "syscall";
    case FindingKind::kUnchecked:
      return "unchecked";
  }
  return "";
}

std::string LibraryFinding::text() const {
  switch (kind) {
    case FindingKind::kSymbol:
    case FindingKind::kNeeded:
    case FindingKind::kInclude:
      return std::string(finding_kind_name(kind)) + " " + what;
    case FindingKind::kHeader:
    case FindingKind::kImport:
    case FindingKind::kExport:
    case FindingKind::kSyscall:
    case FindingKind::kUnchecked:
      break;
  }
  return what;  // a whole sentence
}

std::string LibraryCheck::describe() const {
  if (forbidden.empty()) return inspected ? "no library reductions found" : problem;
  if (std::all_of(forbidden.begin(), forbidden.end(),
                  [](const LibraryFinding& f) { return f.kind == FindingKind::kUnchecked; }))
    return "not run: " + forbidden.front().what;
  // Library reductions, or (imports, exports, syscalls, headers outside) other forbidden uses.
  const bool library = std::any_of(forbidden.begin(), forbidden.end(), [](const LibraryFinding& f) {
    return f.kind == FindingKind::kSymbol || f.kind == FindingKind::kNeeded ||
           f.kind == FindingKind::kInclude || contains(f.what, "is a library reduction");
  });
  std::string text =
      library ? "forbidden library reduction in the lab: " : "forbidden in the lab: ";
  std::set<std::string> seen;
  std::size_t shown = 0;
  // Most readable first: #include lines, NEEDED libraries, then symbols that begin with the
  // library's namespace (cub::DeviceReduce::Sum<...>), then the rest (guard variables...).
  auto rank = [](const LibraryFinding& f) {
    switch (f.kind) {
      case FindingKind::kInclude:
      case FindingKind::kHeader:
        return 0;
      case FindingKind::kNeeded:
      case FindingKind::kImport:
      case FindingKind::kExport:
      case FindingKind::kSyscall:
        return 1;
      case FindingKind::kSymbol:
      case FindingKind::kUnchecked:
        break;
    }
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
    const std::string full = f.text();
    const std::string item = full.size() > 160 ? full.substr(0, 157) + "..." : full;
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
      if ((pattern == "cub::" || pattern == "thrust::") && rules.primitives_allowed &&
          std::none_of(rules.device_wide_symbols.begin(), rules.device_wide_symbols.end(),
                       [&](const std::string& word) { return contains(symbol, word); }))
        continue;  // a block or warp primitive (or the Thrust it includes), allowed in this lab
      if (per_pattern[pattern]++ < kMaxFindingsPerPattern && seen.insert(symbol).second)
        check.forbidden.push_back({FindingKind::kSymbol, symbol});
      break;
    }
  }
  for (const std::string& line : split_lines(readelf_dynamic)) {
    const std::string library = needed_library(line);
    if (library.empty()) continue;
    for (const std::string& pattern : rules.forbidden_needed) {
      if (contains(library, pattern)) {
        check.forbidden.push_back({FindingKind::kNeeded, library});
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
  // Where CUB's primitives are allowed, its namespace alone is no finding: a device-wide
  // algorithm's names are.
  const bool device_wide =
      std::any_of(rules.device_wide_symbols.begin(), rules.device_wide_symbols.end(),
                  [&](const std::string& word) { return contains(bytes, word); });
  for (const auto& [marker, name] : markers) {
    if (rules.primitives_allowed && !device_wide) continue;
    for (const std::string& pattern : rules.forbidden_symbols)
      if (pattern == name && contains(bytes, marker) && found.insert(name).second)
        check.forbidden.push_back({FindingKind::kSymbol, name + " (mangled name in the library)"});
  }
  for (const std::string& pattern : rules.forbidden_symbols) {
    if (pattern.find("::") != std::string::npos) continue;
    if (contains(bytes, pattern) && found.insert(pattern).second)
      check.forbidden.push_back({FindingKind::kSymbol, pattern + " (name in the library)"});
  }
  for (const std::string& pattern : rules.forbidden_needed)
    if (contains(bytes, pattern + ".so") && found.insert(pattern).second)
      check.forbidden.push_back({FindingKind::kNeeded, pattern});
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
  // The static symbol table (defined and undefined, local included), then the dynamic one
  // (all that is left when the library is stripped).
  const ProcessResult all = run_tool({nm->string(), "-C", library.string()});
  const ProcessResult dynamic = run_tool({nm->string(), "-C", "-D", library.string()});
  const ProcessResult elf =
      readelf ? run_tool({readelf->string(), "-d", library.string()}) : ProcessResult{};
  if (!all.succeeded() && !dynamic.succeeded()) {
    LibraryCheck check = check_library_bytes(read_file(library), rules);
    check.problem = "nm failed (" + dynamic.describe() + "): searched the library's bytes instead";
    return check;
  }
  LibraryCheck check = check_symbol_text(all.output + "\n" + dynamic.output, elf.output, rules);
  if (!readelf) {
    const LibraryCheck bytes = check_library_bytes(read_file(library), rules);
    for (const LibraryFinding& f : bytes.forbidden)
      if (f.kind == FindingKind::kNeeded) check.forbidden.push_back(f);
  }
  return check;
}

bool is_cub_device_wide(const fs::path& from_cub) {
  static const std::set<fs::path> folders = {"device", "agent", "dispatch", "grid"};
  if (from_cub.filename() == "cub.cuh") return true;
  for (const fs::path& part : from_cub)
    if (folders.count(part) != 0) return true;
  return false;
}

std::vector<LibraryFinding> scan_sources(const fs::path& lab_dir, const LibraryRules& rules) {
  std::vector<LibraryFinding> findings;
  std::error_code ec;
  static const std::set<std::string> extensions = {".cu", ".cuh", ".h",   ".hpp", ".cpp",
                                                   ".cc", ".cxx", ".inl", ".hh"};
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
      const std::optional<std::string> included = included_header(line);
      if (!included) continue;
      const std::string& header = *included;
      const auto forbidden = [&](const std::string& prefix) {
        if (!starts_with(header, prefix)) return false;
        return prefix != "cub/" || !rules.primitives_allowed || is_cub_device_wide(header);
      };
      for (const std::string& prefix : rules.forbidden_includes) {
        if (forbidden(prefix)) {
          findings.push_back({FindingKind::kInclude,
                              fmt::format("{}:{}: #include <{}>",
                                          fs::relative(file, lab_dir.parent_path(), ec).string(),
                                          number, header)});
          break;
        }
      }
    }
  }
  return findings;
}

// ---- what the linker produced -------------------------------------------------------------

namespace {

/// The type letter and the name of one `nm` line ("0000000000001530 T reduce::sum(...)",
/// "                 U dlopen@GLIBC_2.34"); nullopt for anything else ("nm: x.so: no symbols").
std::optional<std::pair<char, std::string>> nm_entry(std::string_view line) {
  // [space] [address of 8 or more hex digits, space] type letter, space, name [space]
  const auto entry_at = [&line](std::size_t at) -> std::optional<std::pair<char, std::string>> {
    if (at >= line.size()) return std::nullopt;
    const char type = line[at];
    if (!std::isalpha(static_cast<unsigned char>(type)) && type != '?') return std::nullopt;
    if (at + 1 >= line.size() || !is_space(line[at + 1])) return std::nullopt;
    const std::size_t name = skip_space(line, at + 1);
    std::size_t end = line.size();
    while (end > name && is_space(line[end - 1])) --end;
    if (name >= end) return std::nullopt;
    return std::make_pair(type, std::string(line.substr(name, end - name)));
  };
  const std::size_t start = skip_space(line, 0);
  const std::size_t hex_end = skip_hex(line, start);
  if (hex_end - start >= 8 && hex_end < line.size() && is_space(line[hex_end]))
    if (auto entry = entry_at(skip_space(line, hex_end))) return entry;
  return entry_at(start);
}

/// \p name without a symbol version ("dlopen@GLIBC_2.34", "reduce_sum_lab@@LAB_1").
std::string unversioned(const std::string& name) {
  const std::size_t at = name.find('@');
  if (at == std::string::npos || name.find_first_of("() <>,", at) != std::string::npos) return name;
  return name.substr(0, at);
}

}  // namespace

ContractExports contract_exports(const std::vector<OpPlan>& plans, const BuildManifest& built) {
  ContractExports allowed;
  const auto add = [](std::vector<std::string>& list, const std::string& name) {
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  };
  for (const OpPlan& plan : plans) {
    add(allowed.c_names, built.getter(plan.op));
    add(allowed.cxx_prefixes, "reduce::" + plan.entry + "(");
    const std::optional<runner::ResultKind> kind = runner::parse_result_kind(plan.result);
    if (!kind || runner::has_workspace(*kind))
      add(allowed.cxx_prefixes, "reduce::" + plan.entry + "_workspace_bytes(");
  }
  return allowed;
}

std::vector<LibraryFinding> check_imports(const std::string& nm_undefined_text,
                                          const SymbolPolicy& policy) {
  const std::set<std::string> forbidden(policy.forbidden_imports.begin(),
                                        policy.forbidden_imports.end());
  std::vector<LibraryFinding> findings;
  std::set<std::string> found;
  for (const std::string& line : split_lines(nm_undefined_text)) {
    const auto entry = nm_entry(line);
    if (!entry) continue;
    const std::string name = unversioned(entry->second);
    if (forbidden.count(name) != 0 && found.insert(name).second)
      findings.push_back({FindingKind::kImport, "forbidden import: " + name});
  }
  return findings;
}

std::vector<LibraryFinding> check_exports(const std::string& nm_defined_text,
                                          const ContractExports& allowed,
                                          const SymbolPolicy& policy) {
  constexpr std::size_t kShown = 8;
  const auto is_allowed = [&](const std::string& name) {
    for (const std::string& c : allowed.c_names)
      if (name == c) return true;
    for (const std::string& prefix : allowed.cxx_prefixes)
      if (starts_with(name, prefix)) return true;
    for (const std::string& s : policy.standard_exports)
      if (name == s) return true;
    return false;
  };
  std::vector<std::string> extra;
  std::set<std::string> seen;
  for (const std::string& line : split_lines(nm_defined_text)) {
    const auto entry = nm_entry(line);
    if (!entry || entry->first == 'U' || entry->first == 'w' || entry->first == 'v') continue;
    const std::string name = unversioned(entry->second);
    if (!is_allowed(name) && seen.insert(name).second) extra.push_back(name);
  }
  if (extra.empty()) return {};
  std::string what = "exports symbols outside the lab contract: ";
  for (std::size_t i = 0; i < extra.size() && i < kShown; ++i)
    what +=
        (i == 0 ? "" : ", ") + (extra[i].size() > 120 ? extra[i].substr(0, 117) + "..." : extra[i]);
  if (extra.size() > kShown) what += fmt::format(" and {} more", extra.size() - kShown);
  return {{FindingKind::kExport, what}};
}

namespace {

/// The function of an objdump label line, "0000000000001120 <reduce::sum(...)>:" (nullopt for
/// other lines).
std::optional<std::string> function_label(std::string_view line) {
  const std::size_t open = skip_hex(line, 0);
  if (open == 0 || !starts_with(line.substr(open), " <")) return std::nullopt;
  std::size_t end = line.size();
  while (end > open && is_space(line[end - 1])) --end;
  if (end < open + 2 + 3 || line.substr(end - 2, 2) != ">:") return std::nullopt;
  return std::string(line.substr(open + 2, end - 2 - (open + 2)));
}

}  // namespace

std::vector<LibraryFinding> check_host_code(const std::string& objdump_text) {
  constexpr std::size_t kMaxFindings = 10;
  static const std::set<std::string> prefixes = {
      "lock",   "rep",    "repz",   "repnz",   "repe",     "repne",   "data16",
      "data32", "addr32", "addr16", "notrack", "bnd",      "cs",      "ds",
      "es",     "fs",     "gs",     "ss",      "xacquire", "xrelease"};
  std::vector<LibraryFinding> findings;
  std::string current = "?";
  std::set<std::string> reported;
  for (const std::string& line : split_lines(objdump_text)) {
    if (const std::optional<std::string> name = function_label(line)) {
      current = *name;
      continue;
    }
    const std::size_t start = skip_space(line, 0);
    const std::size_t colon = skip_hex(line, start);
    if (colon == start || colon + 1 >= line.size() || line[colon] != ':' ||
        !is_space(line[colon + 1]))
      continue;
    const std::string address = line.substr(start, colon - start);
    // The mnemonic: the first word that is not a prefix ("rex.W", "lock", "cs"...).
    std::vector<std::string> words = split(line.substr(skip_space(line, colon + 1)), " \t,");
    std::size_t w = 0;
    while (w < words.size() && (prefixes.count(words[w]) != 0 || starts_with(words[w], "rex"))) ++w;
    if (w == words.size()) continue;
    const std::string& mnemonic = words[w];
    std::string which;
    if (mnemonic == "syscall" || mnemonic == "sysenter")
      which = mnemonic;
    else if (mnemonic == "int" && w + 1 < words.size() && words[w + 1] == "$0x80")
      which = "int $0x80";
    if (which.empty() || !reported.insert(current).second) continue;
    if (findings.size() == kMaxFindings) break;
    findings.push_back({FindingKind::kSyscall,
                        fmt::format("raw syscall instruction in host code: {} in {} at 0x{}", which,
                                    current, address)});
  }
  return findings;
}

LibraryCheck inspect_symbols(const fs::path& library, const ContractExports& allowed,
                             const SymbolPolicy& policy) {
  LibraryCheck check;
  std::error_code ec;
  if (!fs::is_regular_file(library, ec)) {
    check.problem = "library not found: " + library.string();
    return check;
  }
  std::vector<std::string> problems;
  if (const auto nm = find_program("nm"); !nm) {
    problems.push_back("nm not found in PATH: the library's imports and exports were not checked");
  } else {
    const ProcessResult undefined =
        run_tool({nm->string(), "-D", "--undefined-only", library.string()});
    const ProcessResult defined =
        run_tool({nm->string(), "-D", "--defined-only", "-C", library.string()});
    if (!undefined.succeeded() || !defined.succeeded()) {
      problems.push_back(
          fmt::format("nm failed ({}): the library's imports and exports were not checked",
                      undefined.succeeded() ? defined.describe() : undefined.describe()));
    } else {
      for (LibraryFinding& f : check_imports(undefined.output, policy))
        check.forbidden.push_back(std::move(f));
      for (LibraryFinding& f : check_exports(defined.output, allowed, policy))
        check.forbidden.push_back(std::move(f));
    }
  }
  if (const auto objdump = find_program("objdump"); !objdump) {
    problems.push_back(
        "objdump not found in PATH: the library's host code was not checked for "
        "raw system calls");
  } else {
    const ProcessResult code =
        run_tool({objdump->string(), "-d", "--no-show-raw-insn", library.string()});
    if (!code.succeeded()) {
      problems.push_back(fmt::format(
          "objdump failed ({}): the library's host code was not checked for raw system calls",
          code.describe()));
    } else {
      for (LibraryFinding& f : check_host_code(code.output))
        check.forbidden.push_back(std::move(f));
    }
  }
  check.inspected = problems.empty();
  for (const std::string& p : problems) check.problem += (check.problem.empty() ? "" : "; ") + p;
  return check;
}

}  // namespace reduce::grade
