#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/reports/release.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>
#include <system_error>
#include <utility>

namespace reduce::grade {
namespace {

/// Top-level entries of the release: folders copied whole (minus exclusions) and single files.
/// Students get the grader and its rubric (weights and thresholds are part of the syllabus) so
/// they can see their own score; the hidden tests and the planted corpus stay with instructors.
const std::vector<std::string> kReleased = {"labs",
                                            "common",
                                            "cmake",
                                            "autograder/tests",
                                            "autograder/bench",
                                            "autograder/runner",
                                            "course.json",
                                            "autograder/grader",
                                            "autograder/rubric.toml",
                                            "autograder/part_seconds.toml",
                                            "tools/ladder",
                                            "tools/lab-test",
                                            "tools/setup",
                                            "tools/environment.yml",
                                            "tools/container",
                                            "tools/test",
                                            "tools/grade",
                                            "tools/capstone_table.py",
                                            "tools/product_error.py",
                                            "notebooks",
                                            "docs",
                                            "CMakeLists.txt",
                                            "CMakePresets.json",
                                            ".clang-format",
                                            ".gitignore",
                                            "LICENSE",
                                            "CHANGELOG.md",
                                            "SECURITY.md"};

/// Files released under another name: the students' own README (the course's README.md is the
/// instructors'), and their self-check workflow where GitHub looks for workflows.
const std::vector<std::pair<std::string, std::string>> kRenamed = {
    {"autograder/release/README.md", "README.md"},
    {"autograder/ci/self-check.yml", ".github/workflows/self-check.yml"}};

}  // namespace

bool excluded_from_release(const std::string& relative_path) {
  static const std::vector<std::string> kExcludedPrefixes = {"solutions",
                                                             "autograder/hidden",
                                                             "autograder/planted",
                                                             "autograder/grader/tests",
                                                             "autograder/gradescope",
                                                             "autograder/ci",
                                                             ".git",
                                                             "tools/maint"};
  for (const std::string& prefix : kExcludedPrefixes) {
    if (relative_path == prefix || starts_with(relative_path, prefix + "/")) return true;
  }
  if (generated_path(relative_path)) return true;
  const fs::path p(relative_path);
  for (const auto& part : p)
    if (part == "solutions" || part == "out") return true;
  // No solution code in docs/: CUDA sources there are not released.
  if (starts_with(relative_path, "docs/")) {
    const std::string ext = p.extension().string();
    if (ext == ".cu" || ext == ".cuh") return true;
  }
  return false;
}

bool generated_path(const std::string& relative_path) {
  const fs::path p(relative_path);
  if (p.extension() == ".pyc") return true;
  for (const auto& part : p) {
    const std::string s = part.string();
    // Build folders (build, build-student, ...), not files such as src/build.cpp.
    const bool build_folder = s == "build" || starts_with(s, "build-");
    if (build_folder || s == ".git" || s == "__pycache__") return true;
  }
  return false;
}

std::string release_cmakelists(const std::string& text) {
  static const std::regex trees(R"re((set\(\s*REDUCE_TREES\s+)"[^"]*")re");
  static const std::regex stubs(
      R"re((option\(\s*REDUCE_LABS_ARE_STUBS(\s+"[^"]*")?\s+)ON(\s*\)))re");
  if (!std::regex_search(text, trees))
    throw ConfigError(
        "release: CMakeLists.txt has no set(REDUCE_TREES \"...\" CACHE ...) to rewrite");
  if (!std::regex_search(text, stubs))
    throw ConfigError(
        "release: CMakeLists.txt has no option(REDUCE_LABS_ARE_STUBS ... ON) to rewrite");
  std::string out = std::regex_replace(text, trees, "$1\"labs\"");
  out = std::regex_replace(out, stubs, "$1OFF$3");
  return "# Student release: REDUCE_TREES defaults to your labs/ tree, built as your own code\n"
         "# (REDUCE_LABS_ARE_STUBS OFF: its tests must pass).\n" +
         out;
}

std::string release_presets(const std::string& text) {
  nlohmann::ordered_json presets = nlohmann::ordered_json::parse(text, nullptr, false);
  if (presets.is_discarded() || !presets.is_object())
    throw ConfigError("release: CMakePresets.json is not valid JSON");
  if (presets.contains("configurePresets")) {
    for (auto& p : presets["configurePresets"]) {
      if (p.value("name", std::string()) != "default") continue;
      p["displayName"] = "Your labs/ tree: build, tests and benchmarks";
      p["cacheVariables"]["REDUCE_TREES"] = "labs";
      p["cacheVariables"]["REDUCE_LABS_ARE_STUBS"] = "OFF";
    }
  }
  return presets.dump(2) + "\n";
}

ReleaseResult write_release(const Course& course, const fs::path& out_dir) {
  std::error_code ec;
  if (!is_empty_dir(out_dir))
    throw ConfigError("release: " + out_dir.string() + " is not empty; choose a new folder");
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec))
    throw ConfigError("release: " + out_dir.string() + " is a file");
  // A lab stub identical to its solution would hand out the answer.
  for (const CourseLab& lab : course.labs) {
    for (const std::string& op : lab.ops) {
      const fs::path stub = course.root / "labs" / lab.folder / (op + ".cu");
      const fs::path solution = course.root / "solutions" / lab.folder / (op + ".cu");
      if (fs::is_regular_file(stub, ec) && fs::is_regular_file(solution, ec) &&
          read_file(stub) == read_file(solution))
        throw ConfigError(
            fmt::format("release: labs/{}/{}.cu is identical to its solution; "
                        "refusing to release it",
                        lab.folder, op));
    }
  }
  fs::create_directories(out_dir, ec);
  ReleaseResult result;
  auto copy_one = [&](const fs::path& from, const std::string& rel) {
    const fs::path to = out_dir / rel;
    fs::create_directories(to.parent_path(), ec);
    if (rel == "CMakeLists.txt") {
      write_file(to, release_cmakelists(read_file(from)));
    } else if (rel == "CMakePresets.json") {
      write_file(to, release_presets(read_file(from)));
    } else {
      fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
      if (ec) throw ConfigError("release: cannot copy " + from.string() + ": " + ec.message());
      fs::permissions(to, fs::status(from).permissions(), ec);
    }
    result.files.push_back(rel);
  };
  for (const std::string& entry : kReleased) {
    const fs::path from = course.root / entry;
    if (fs::is_regular_file(from, ec)) {
      if (!excluded_from_release(entry)) copy_one(from, entry);
    } else if (fs::is_directory(from, ec)) {
      std::vector<std::string> files;
      for (auto it = fs::recursive_directory_iterator(from, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const std::string rel = fs::relative(it->path(), course.root, ec).generic_string();
        if (excluded_from_release(rel)) {
          if (it->is_directory(ec)) it.disable_recursion_pending();
          continue;
        }
        if (it->is_regular_file(ec)) files.push_back(rel);
      }
      std::sort(files.begin(), files.end());
      for (const std::string& rel : files) copy_one(course.root / rel, rel);
    } else {
      result.warnings.push_back(entry + " not found in the course: not in the release");
    }
  }
  for (const auto& [from, to] : kRenamed) {
    if (fs::is_regular_file(course.root / from, ec))
      copy_one(course.root / from, to);
    else
      result.warnings.push_back(from + " not found in the course: the release has no " + to);
  }
  // Last line of defence: nothing instructors-only may have slipped in.
  for (const std::string& rel : result.files)
    if (excluded_from_release(rel))
      throw ConfigError("release: internal error, " + rel + " must not be released");
  return result;
}

std::string unpack_commit(const fs::path& course_root, const std::string& ref, const fs::path& dest,
                          const std::string& what) {
  ProcessSpec check;
  check.argv = {"git", "-C", course_root.string(), "rev-parse", "--verify", ref + "^{commit}"};
  check.timeout_s = 60;
  check.output_cap = 1 << 16;
  const ProcessResult commit = run_process(check);
  if (!commit.succeeded())
    throw ConfigError(fmt::format(
        "{}: {} is not a commit of a git repository at {} ({}); it is made from committed "
        "history only",
        what, ref, course_root.string(), clip(commit.output, 2, 400)));
  const std::string hash = trim(commit.output);
  const fs::path tar = dest.parent_path() / (dest.filename().string() + ".tar");
  fs::create_directories(dest);
  ProcessSpec archive;
  archive.argv = {"git",          "-C", course_root.string(), "archive",
                  "--format=tar", "-o", tar.string(),         hash};
  ProcessSpec untar;
  untar.argv = {"tar", "-xf", tar.string(), "-C", dest.string()};
  for (ProcessSpec* step : {&archive, &untar}) {
    step->timeout_s = 300;
    step->output_cap = 1 << 16;
    const ProcessResult r = run_process(*step);
    if (!r.succeeded())
      throw ConfigError(what + ": " + step->argv[0] + " failed: " + clip(r.output, 4, 800));
  }
  std::error_code ec;
  fs::remove(tar, ec);
  return hash;
}

ReleaseResult write_release_from_git(const fs::path& course_root, const std::string& ref,
                                     const fs::path& out_dir) {
  const fs::path work = make_temp_dir("reduce-grade-release-");
  const fs::path tree = work / "course";
  try {
    unpack_commit(course_root, ref, tree, "release");
    const Course course = load_course(tree);
    for (const CourseLab& lab : course.labs)
      for (const std::string& op : lab.ops) {
        const fs::path stub = tree / "labs" / lab.folder / (op + ".cu");
        if (!contains(read_file(stub), "REDUCE_NOT_IMPLEMENTED("))
          throw ConfigError(fmt::format(
              "release: labs/{}/{}.cu at {} no longer throws NotImplemented (no "
              "REDUCE_NOT_IMPLEMENTED() left): it is not a stub; refusing to release it",
              lab.folder, op, ref));
      }
    ReleaseResult result = write_release(course, out_dir);
    remove_all_quietly(work);
    return result;
  } catch (...) {
    remove_all_quietly(work);
    throw;
  }
}

}  // namespace reduce::grade
