#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/manifest.hpp>
#include <reduce_grade/base/util.hpp>

#include <nlohmann/json.hpp>

namespace reduce::grade {
namespace {

/// \p object's string \p key; throws ConfigError naming \p what where it is missing or not a
/// string.
std::string required_string(const nlohmann::json& object, const char* key,
                            const std::string& what) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string())
    throw ConfigError(what + " has no string '" + key + "'");
  return it->get<std::string>();
}

}  // namespace

std::vector<std::string> SuiteSelection::args() const {
  return {"--lab-entry=" + entry, "--lab-filter=" + filter};
}

std::string filter_without(const std::string& filter, const std::vector<std::string>& tests) {
  if (tests.empty() || filter.empty()) return filter;
  // One '-' starts the negative patterns; every later pattern joins them with ':'.
  return filter + (filter.find('-') == std::string::npos ? "-" : ":") + join(tests, ":");
}

SuiteSelection BuildManifest::suites(const std::string& op, SuiteKind kind) const {
  const auto it = operations.find(op);
  if (it == operations.end()) return {};
  const Operation& o = it->second;
  SuiteSelection s;
  s.entry = o.entry;
  switch (kind) {
    case SuiteKind::kPublic:
      s.checker = public_checker;
      s.filter = o.public_filter;
      break;
    case SuiteKind::kHidden:
      s.checker = graded_checker;
      s.filter = o.hidden_filter;
      break;
    case SuiteKind::kGraded:
      s.checker = graded_checker;
      s.filter = o.graded_filter;
      break;
  }
  if (s.filter.empty()) s.checker.clear();
  return s;
}

fs::path BuildManifest::grading_checker() const {
  return graded_checker.empty() ? public_checker : graded_checker;
}

fs::path BuildManifest::library(const std::string& lab, const std::string& op) const {
  const auto it = libraries.find({lab, op});
  return it == libraries.end() ? fs::path() : it->second.library;
}

std::string BuildManifest::bench_name(const std::string& lab, const std::string& op) const {
  const auto it = libraries.find({lab, op});
  return it == libraries.end() ? std::string() : it->second.bench_name;
}

const std::string& BuildManifest::getter(const std::string& op) const {
  const auto it = operations.find(op);
  if (it == operations.end())
    throw ConfigError(file.string() + ": the build has no operation " + op +
                      " (a build of another course: configure it again)");
  return it->second.getter;
}

std::vector<fs::path> BuildManifest::contract_header_paths() const {
  std::vector<fs::path> paths;
  for (const std::string& header : contract_headers) paths.push_back(contract_include_dir / header);
  return paths;
}

BuildManifest parse_manifest(const std::string& text, const fs::path& file) {
  BuildManifest m;
  m.file = file;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    m.runner = j.at("runner").get<std::string>();
    m.bench = j.value("bench", std::string());
    const nlohmann::json cub = j.value("cub_references", nlohmann::json::object());
    for (const auto& [op, path] : cub.items()) m.cub_references[op] = path.get<std::string>();
    m.cuda_compiler = j.value("cuda_compiler", std::string());
    for (const std::string& compiler : j.value("host_compilers", std::vector<std::string>{}))
      if (!compiler.empty()) m.host_compilers.push_back(compiler);
    m.contract_include_dir = j.at("contract_include_dir").get<std::string>();
    m.contract_headers = j.at("contract_headers").get<std::vector<std::string>>();
    if (const auto checkers = j.find("checkers"); checkers != j.end()) {
      m.public_checker = checkers->value("public", std::string());
      m.graded_checker = checkers->value("graded", std::string());
    }
    for (const auto& [op, entry] : j.at("operations").items())
      m.operations[op] = {
          entry.value("entry", op), required_string(entry, "getter", "operation " + op),
          entry.value("public_filter", std::string()), entry.value("hidden_filter", std::string()),
          entry.value("graded_filter", std::string())};
    const nlohmann::json& trees = j.at("trees");
    const nlohmann::json* tree = trees.contains("submission") ? &trees.at("submission") : nullptr;
    if (tree == nullptr && !trees.empty()) tree = &trees.begin().value();
    if (tree != nullptr)
      for (const nlohmann::json& lib : *tree) {
        const std::string lab = lib.at("lab").get<std::string>();
        const std::string op = lib.at("op").get<std::string>();
        m.libraries[{lab, op}] = {
            lib.at("library").get<std::string>(),
            required_string(lib, "bench_name", "the library of " + lab + "/" + op)};
      }
  } catch (const std::exception& e) {
    throw ConfigError(file.string() + ": not a build manifest: " + e.what());
  }
  return m;
}

BuildManifest read_manifest(const fs::path& build_dir) {
  const fs::path file = build_dir / "course-manifest.json";
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw ConfigError(file.string() + " is missing: the build folder was not configured");
  return parse_manifest(read_file(file), file);
}

}  // namespace reduce::grade
