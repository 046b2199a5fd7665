// What the grader checks about a built lab before any of its code runs (built_lab_check.hpp).
#include <reduce_grade/submission/build.hpp>
#include <reduce_grade/submission/built_lab_check.hpp>

#include <system_error>

namespace reduce::grade {

namespace fs = std::filesystem;

namespace {

/// The CUDA toolkit folders a lab's compile may read: those of the build's nvcc, and the usual
/// /usr/local/cuda ones.
std::vector<fs::path> toolkit_include_roots(const BuildManifest& built) {
  std::vector<fs::path> roots = DependencyPolicy{}.toolkit_roots;
  if (built.cuda_compiler.empty()) return roots;
  std::error_code ec;
  const fs::path toolkit =
      fs::weakly_canonical(built.cuda_compiler, ec).parent_path().parent_path();
  roots.push_back(toolkit / "include");
  for (const auto& target : fs::directory_iterator(toolkit / "targets", ec))
    roots.push_back(target.path() / "include");
  return roots;
}

/// The host compilers' own folders, where one is not installed under /usr (e.g. /opt/gcc):
/// `<prefix>/include`, `<prefix>/lib/gcc` and `<prefix>/lib64/gcc`.
std::vector<fs::path> compiler_system_roots(const BuildManifest& built) {
  std::vector<fs::path> roots = DependencyPolicy{}.system_roots;
  for (const fs::path& compiler : built.host_compilers) {
    std::error_code ec;
    const fs::path prefix = fs::weakly_canonical(compiler, ec).parent_path().parent_path();
    if (prefix.empty() || prefix == "/" || prefix == "/usr/local") continue;
    for (const fs::path& sub : {fs::path("include"), fs::path("lib/gcc"), fs::path("lib64/gcc")})
      roots.push_back(prefix / sub);
  }
  return roots;
}

}  // namespace

LibraryCheck inspect_built_lab(const fs::path& build_dir, const BuildManifest& built,
                               const std::string& deps_log, const fs::path& tree,
                               const std::string& lab, const std::vector<OpPlan>& plans,
                               const Rubric& rubric) {
  LibraryCheck check;
  check.inspected = true;
  const auto add = [&check](std::vector<LibraryFinding> found) {
    for (LibraryFinding& f : found) check.forbidden.push_back(std::move(f));
  };
  DependencyPolicy deps;
  deps.lab_dir = staging_tree(build_dir) / lab;
  deps.base_dir = build_dir;
  deps.toolkit_roots = toolkit_include_roots(built);
  deps.system_roots = compiler_system_roots(built);
  deps.contract_headers = built.contract_header_paths();
  const LibraryRules rules = rubric.library.for_lab(rubric.find(lab));
  deps.primitives_allowed = rules.primitives_allowed;
  for (const OpPlan& plan : plans) {
    const fs::path library = built.library(lab, plan.op);
    const LibraryCheck reductions = inspect_library(library, rules);
    check.stub = check.stub || reductions.stub;
    if (!reductions.problem.empty()) check.problem = reductions.problem;
    add(reductions.forbidden);
    const LibraryCheck symbols = inspect_symbols(library, contract_exports({plan}, built));
    if (!symbols.inspected)
      add({{FindingKind::kUnchecked, "the grader could not inspect " + library.filename().string() +
                                         " (" + symbols.problem +
                                         "): a grading problem, not yours"}});
    add(symbols.forbidden);
    const std::string depfile = lab_dependencies(deps_log, lab, plan.op);
    if (depfile.empty())
      add({{FindingKind::kUnchecked,
            "the grader found no record of what " + plan.op +
                ".cu's compile read (ninja's deps log): a grading problem, not "
                "yours"}});
    add(check_dependencies(depfile, deps));
  }
  add(scan_sources(tree / lab, rules));
  return check;
}

}  // namespace reduce::grade
