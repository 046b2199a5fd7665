// What a lab's compile read: the dependencies of its depfile against the DependencyPolicy
// (library_check.hpp, "what the compiler read").
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/library_check.hpp>

#include <fmt/format.h>

#include <map>
#include <set>
#include <system_error>

namespace reduce::grade {

std::vector<std::string> parse_depfile(const std::string& text) {
  std::vector<std::string> deps;
  std::string token;
  bool in_token = false;
  bool after_colon = false;  // the targets of the current rule are behind us
  const auto finish = [&] {
    if (!in_token) return;
    in_token = false;
    if (after_colon) {
      deps.push_back(token);
    } else if (const std::size_t colon = token.find(':'); colon != std::string::npos) {
      after_colon = true;  // "target:" or ":" or "target:dep"
      if (colon + 1 < token.size()) deps.push_back(token.substr(colon + 1));
    }
    token.clear();
  };
  const auto add = [&](char c, std::size_t count = 1) {
    token.append(count, c);
    in_token = in_token || count > 0;
  };
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const char c = text[i];
    if (c == '\\') {
      // A run of k backslashes: before a space or a line end, pairs are literal backslashes and
      // an odd one escapes the space (or continues the line); elsewhere all are literal.
      std::size_t k = 0;
      while (i + k < n && text[i + k] == '\\') ++k;
      const std::size_t next = i + k;
      const bool crlf = next + 1 < n && text[next] == '\r' && text[next + 1] == '\n';
      if (next < n && (text[next] == '\n' || crlf)) {
        add('\\', k / 2);
        finish();
        if (k % 2 == 0) after_colon = false;  // an escaped backslash, then the rule's end
        i = next + (crlf ? 2 : 1);
      } else if (next < n && (text[next] == ' ' || text[next] == '\t')) {
        add('\\', k / 2);
        if (k % 2 == 1) {
          add(text[next]);
          i = next + 1;
        } else {
          i = next;
        }
      } else if (next < n && text[next] == '#') {
        add('\\', k / 2);
        add('#');
        i = next + 1;
      } else {
        add('\\', k);
        i = next;
      }
    } else if (c == '$' && i + 1 < n && text[i + 1] == '$') {
      add('$');
      i += 2;
    } else if (c == '\n') {
      finish();
      after_colon = false;
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      finish();
      ++i;
    } else {
      add(c);
      ++i;
    }
  }
  finish();
  return deps;
}

namespace {

/// \p path made absolute against \p base (empty: the current folder), nothing removed.
fs::path absolute_to(const fs::path& path, const fs::path& base) {
  std::error_code ec;
  if (path.is_absolute()) return path;
  return (base.empty() ? fs::current_path(ec) : fs::absolute(base, ec)) / path;
}

/// Absolute, symbolic links resolved where the file exists, `..` removed, no trailing '/'.
/// `..` is not removed before the links are resolved: "link/.." is the link target's parent,
/// as the compiler's open() found it, not the link's folder.
fs::path resolved(const fs::path& path, const fs::path& base) {
  std::error_code ec;
  const fs::path p = absolute_to(path, base);
  fs::path c = fs::weakly_canonical(p, ec);
  if (ec) c = p;
  c = c.lexically_normal();
  if (c.has_relative_path() && c.filename().empty()) c = c.parent_path();
  return c;
}

/// \p path relative to \p root when it lies below it; empty otherwise.
fs::path below(const fs::path& path, const fs::path& root) {
  const fs::path rel = path.lexically_relative(root);
  if (rel.empty() || rel == "." || *rel.begin() == "..") return {};
  return rel;
}

}  // namespace

std::vector<LibraryFinding> check_dependencies(const std::string& depfile_text,
                                               const DependencyPolicy& policy) {
  constexpr std::size_t kMaxOutside = 10;
  const fs::path lab = policy.lab_dir.empty() ? fs::path{} : resolved(policy.lab_dir, {});
  std::set<fs::path> contract;
  for (const fs::path& h : policy.contract_headers) contract.insert(resolved(h, {}));
  std::vector<fs::path> roots;
  for (const fs::path& r : policy.toolkit_roots) roots.push_back(resolved(r, {}));
  for (const fs::path& r : policy.system_roots) roots.push_back(resolved(r, {}));

  std::vector<LibraryFinding> findings;
  std::map<std::string, std::pair<std::size_t, std::size_t>> per_library;  // finding, more
  std::size_t outside = 0;
  std::set<fs::path> seen;
  for (const std::string& dep : parse_depfile(depfile_text)) {
    const fs::path path = resolved(dep, policy.base_dir);
    if (!seen.insert(path).second || contract.count(path) != 0) continue;
    if (!lab.empty() && !below(path, lab).empty()) continue;
    fs::path rel;
    for (const fs::path& root : roots)
      if (!(rel = below(path, root)).empty()) break;
    if (!rel.empty()) {
      // Below a toolkit or system root: allowed unless it belongs to a library.
      std::string library;
      fs::path from_library;
      const std::vector<fs::path> parts(rel.begin(), rel.end());
      for (std::size_t i = 0; i + 1 < parts.size() && library.empty(); ++i)
        for (const auto& [folder, name] : policy.library_folders)
          if (parts[i] == folder) {
            library = name;
            for (std::size_t j = i; j < parts.size(); ++j) from_library /= parts[j];
            break;
          }
      for (const auto& [prefix, name] : policy.library_headers)
        if (library.empty() && starts_with(rel.filename().string(), prefix)) {
          library = name;
          from_library = rel;
        }
      if (library.empty()) continue;
      // A lab allowed CUB's primitives reads the Thrust headers they include; Thrust's device
      // algorithms include CUB's device-wide headers, which are refused.
      if (policy.primitives_allowed &&
          (library == "Thrust" || (library == "CUB" && !is_cub_device_wide(from_library))))
        continue;
      auto [it, first] = per_library.try_emplace(library, findings.size(), 0);
      if (first)
        findings.push_back(
            {FindingKind::kHeader, fmt::format("forbidden header: {} ({}) is a library reduction",
                                               from_library.generic_string(), library)});
      else
        ++it->second.second;
      continue;
    }
    if (++outside > kMaxOutside) continue;
    std::string what = fmt::format(
        "forbidden header: {} is outside the lab folder, the contract headers and the CUDA "
        "toolkit",
        path.string());
    const fs::path named = absolute_to(dep, policy.base_dir);
    if (named != path) what += " (reached as " + dep + ")";
    findings.push_back({FindingKind::kHeader, what});
  }
  for (const auto& [library, entry] : per_library)
    if (entry.second > 0)
      findings[entry.first].what += fmt::format("; and {} more {} header{}", entry.second, library,
                                                entry.second == 1 ? "" : "s");
  if (outside > kMaxOutside)
    findings.push_back(
        {FindingKind::kHeader,
         fmt::format("forbidden header: and {} more files outside the lab folder, the "
                     "contract headers and the CUDA toolkit",
                     outside - kMaxOutside)});
  return findings;
}

}  // namespace reduce::grade
