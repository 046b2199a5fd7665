/// \file
/// \brief Writes the student release: the course without solutions, hidden tests and planted
/// bugs, with the students' own README and self-check workflow, and cache defaults that build
/// the student's labs/ tree. Also unpacks a commit of the course, which `gradescope` uses too.
#pragma once

#include <reduce_grade/base/course.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace reduce::grade {

/// What write_release() did.
struct ReleaseResult {
  std::vector<std::string> files;     ///< files written, relative to the release root
  std::vector<std::string> warnings;  ///< things worth a look (e.g. a missing README.md)
};

/// Writes the release of \p course into \p out_dir, which must not exist or be empty. Its
/// README.md is the students' (autograder/release/README.md), and autograder/ci/self-check.yml
/// goes to .github/workflows/. Throws ConfigError for a non-empty \p out_dir or when a released
/// lab is identical to its solution.
ReleaseResult write_release(const Course& course, const std::filesystem::path& out_dir);

/// Writes the release of the course as committed at \p ref (git archive) of the repository at
/// \p course_root, not of its working tree: uncommitted work never reaches students. Refuses a
/// lab stub that no longer throws NotImplemented (no REDUCE_NOT_IMPLEMENTED() left in it), and a
/// \p course_root that is not a git repository.
ReleaseResult write_release_from_git(const std::filesystem::path& course_root,
                                     const std::string& ref, const std::filesystem::path& out_dir);

/// Unpacks the commit \p ref of the git repository at \p course_root into the new folder
/// \p dest (git archive: tracked files only, never the working tree) and returns the commit's
/// full hash. Throws ConfigError, its message starting with \p what (the command's name), where
/// \p ref is not a commit of a repository at \p course_root or git or tar fails.
std::string unpack_commit(const std::filesystem::path& course_root, const std::string& ref,
                          const std::filesystem::path& dest, const std::string& what);

/// The top-level CMakeLists.txt text with the release's cache defaults: REDUCE_TREES "labs"
/// and REDUCE_LABS_ARE_STUBS OFF. Throws ConfigError when either default is not found.
std::string release_cmakelists(const std::string& text);

/// CMakePresets.json text for the release: the "grader" presets removed, the default preset
/// building the labs/ tree as the student's own.
std::string release_presets(const std::string& text);

/// True for paths (relative to the course root) that never go into a release.
bool excluded_from_release(const std::string& relative_path);

/// True for what a build or a run leaves in a course, never part of what is handed out (a
/// release, the Gradescope zip): build folders (`build`, `build-*`), `.git`, `__pycache__` and
/// `.pyc` files, at any depth of \p relative_path.
bool generated_path(const std::string& relative_path);

}  // namespace reduce::grade
