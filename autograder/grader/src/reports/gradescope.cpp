// The Gradescope autograder zip (docs/grader.md, "Gradescope"): a commit of the course, with
// setup.sh and run_autograder at the zip's top level.
#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/reports/gradescope.hpp>
#include <reduce_grade/reports/release.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

namespace reduce::grade {
namespace {

/// The scripts Gradescope looks for at the top of the zip, kept in the course here.
const char* const kEntryPoints[] = {"setup.sh", "run_autograder"};

/// Removes from the unpacked commit \p tree what the zip leaves out; returns the number of
/// regular files left.
std::size_t prune(const fs::path& tree) {
  std::vector<fs::path> doomed;
  std::size_t files = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(tree, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), tree, ec).generic_string();
    if (excluded_from_gradescope(rel)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      doomed.push_back(it->path());
    } else if (it->is_regular_file(ec)) {
      ++files;
    }
  }
  for (const fs::path& p : doomed) remove_all_quietly(p);
  return files;
}

/// Copies setup.sh and run_autograder from autograder/gradescope/ to the top of \p tree, with
/// the executable bits Gradescope's harness needs.
void place_entry_points(const fs::path& tree, const std::string& ref) {
  for (const char* name : kEntryPoints) {
    const fs::path from = tree / "autograder" / "gradescope" / name;
    std::error_code ec;
    if (!fs::is_regular_file(from, ec))
      throw ConfigError(fmt::format(
          "gradescope: autograder/gradescope/{} is not in the commit {}; it cannot be graded there",
          name, ref));
    fs::copy_file(from, tree / name, fs::copy_options::overwrite_existing, ec);
    if (ec) throw ConfigError(fmt::format("gradescope: cannot copy {}: {}", name, ec.message()));
    fs::permissions(tree / name, fs::perms::owner_all | fs::perms::group_read |
                                     fs::perms::group_exec | fs::perms::others_read |
                                     fs::perms::others_exec);
  }
}

/// Zips the contents of \p dir, its entries at the zip's top level, into \p zip (replaced
/// where it exists); returns the tool used. The zip format (deflate, CRC-32, the central
/// directory, the Unix mode bits that keep run_autograder executable) is left to Info-ZIP's
/// `zip`, else Python's zipfile module: the grader's libraries do not write zips, and a
/// hand-written writer would be one more format to get subtly wrong for Gradescope's unzip.
std::string zip_folder(const fs::path& dir, const fs::path& zip) {
  const fs::path target = fs::absolute(zip);
  const fs::path partial = target.string() + ".partial";
  std::error_code ec;
  fs::remove(partial, ec);
  ProcessSpec spec;
  spec.cwd = dir;
  spec.timeout_s = 600;
  spec.output_cap = 1 << 20;
  if (find_program("zip")) {
    spec.argv = {"zip", "-q", "-r", "-X", partial.string(), "."};
  } else if (find_program("python3")) {
    spec.argv = {"python3", "-m", "zipfile", "-c", partial.string()};
    std::vector<std::string> entries;
    for (const auto& e : fs::directory_iterator(dir))
      entries.push_back(e.path().filename().string());
    std::sort(entries.begin(), entries.end());
    spec.argv.insert(spec.argv.end(), entries.begin(), entries.end());
  } else {
    throw ConfigError("gradescope: neither zip nor python3 is installed; one is needed");
  }
  const ProcessResult r = run_process(spec);
  if (!r.succeeded()) {
    fs::remove(partial, ec);
    throw ConfigError("gradescope: " + spec.argv[0] + " failed: " + clip(r.output, 6, 1200));
  }
  fs::rename(partial, target, ec);
  if (ec) throw ConfigError("gradescope: cannot write " + target.string() + ": " + ec.message());
  return spec.argv[0] == "zip" ? "zip" : "python3 -m zipfile";
}

}  // namespace

bool excluded_from_gradescope(const std::string& relative_path) {
  for (const char* prefix : {"solutions", "autograder/planted"})
    if (relative_path == prefix || starts_with(relative_path, std::string(prefix) + "/"))
      return true;
  return generated_path(relative_path);
}

GradescopeZip write_gradescope_zip(const GradescopeOptions& o) {
  std::error_code ec;
  if (fs::is_directory(o.out_zip, ec))
    throw ConfigError("gradescope: " + o.out_zip.string() + " is a folder; name the zip file");
  const fs::path work = make_temp_dir("reduce-grade-gradescope-");
  try {
    const fs::path tree = work / "autograder";
    GradescopeZip z;
    z.commit = unpack_commit(o.course_root, o.ref, tree, "gradescope");
    const Course course = load_course(tree);
    const fs::path labs_file = tree / "autograder" / "gradescope" / "labs";
    if (!o.labs_spec.empty()) {
      const std::vector<std::string> labs = select_labs(course, o.labs_spec);
      write_file(labs_file, join(labs, ",") + "\n");
    }
    if (fs::is_regular_file(labs_file, ec)) z.labs = trim(read_file(labs_file));
    place_entry_points(tree, o.ref);
    z.files = prune(tree);
    if (!o.out_zip.parent_path().empty()) fs::create_directories(o.out_zip.parent_path(), ec);
    z.tool = zip_folder(tree, o.out_zip);
    remove_all_quietly(work);
    return z;
  } catch (...) {
    remove_all_quietly(work);
    throw;
  }
}

}  // namespace reduce::grade
