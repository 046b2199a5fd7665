/// \file
/// \brief Configures and builds the chosen labs of a submission out of source.
///
/// The lab folders are first copied into a staging folder that refuses links and special files;
/// the build sees only that copy. One configure for all chosen labs, then ninja builds every lab's targets in one invocation
/// that keeps going past failures (-k 0): ninja runs the labs' compilations in parallel, and one
/// lab's compile error does not stop the others. (Several `cmake --build` processes in one
/// build folder would race on the shared targets and on ninja's logs.) The build runs in three
/// phases: lab libraries; test binaries of the labs whose library built; the benchmark. A lab
/// that failed is rebuilt alone afterwards, so its log holds only its own errors.
#pragma once

#include <reduce_grade/course.hpp>
#include <reduce_grade/facts.hpp>
#include <reduce_grade/rubric.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace reduce::grade {

/// Where and what to build.
struct BuildOptions {
  std::filesystem::path course_root;                 ///< the course (its common/, tests, cmake/)
  std::filesystem::path submission;                  ///< the tree with the lab folders
  std::filesystem::path build_dir;                   ///< fresh build folder
  std::vector<std::string> labs;                     ///< lab folders to build (all present)
  std::map<std::string, std::vector<OpPlan>> plans;  ///< operations per lab
  int jobs = 0;                                      ///< parallel compile jobs (0: all cores)
  bool benchmark = true;                             ///< also build the benchmark
  bool hidden = true;                                ///< also build the hidden tests
  std::vector<std::string> cmake_args;               ///< extra -D... for configure
  Limits limits;                                     ///< timeouts
  std::filesystem::path log_dir;  ///< configure.log, build-*.log, `<lab>/build`.log
  std::function<void(const std::string&)> progress;  ///< progress lines (may be empty)
  /// Called for each lab whose library built, before its tests are built; returning false
  /// stops that lab there (e.g. a forbidden library reduction: its tests are not worth building).
  std::function<bool(const std::string& lab)> keep_lab;
};

/// What the build produced.
struct BuildOutcome {
  bool configured = false;                 ///< cmake configure succeeded
  std::string configure_problem;           ///< why not (with the log's error lines)
  std::map<std::string, BuildFacts> labs;  ///< per lab
  bool benchmark_ok = false;               ///< the benchmark binary exists
  std::string benchmark_problem;           ///< why not
  double seconds = 0;                      ///< wall-clock time of configure and build
};

/// Configures and builds; never throws for what the submission does.
BuildOutcome build_submission(const BuildOptions& options);

/// The lab library `lib<lab>_<op>`.so in a grading build folder.
std::filesystem::path lab_library_path(const std::filesystem::path& build_dir,
                                       const std::string& lab, const std::string& op);

/// The checker of \p op, `bin/<op>_test` (or _hidden_test), in a grading build folder: a course
/// binary that calls a lab through a runner process (--lab=LIBRARY).
std::filesystem::path test_binary_path(const std::filesystem::path& build_dir,
                                       const std::string& op, bool hidden);

/// The benchmark binary of a grading build folder.
std::filesystem::path bench_binary_path(const std::filesystem::path& build_dir);

/// Where the submission's lab folders are staged (copied, links refused) before they compile.
std::filesystem::path staging_tree(const std::filesystem::path& build_dir);

/// The dependency list the compiler wrote (-MD) for a lab's operation, as make-style depfile
/// text read back from ninja's deps log; empty when ninja has none.
std::string lab_dependencies(const std::filesystem::path& build_dir, const std::string& lab,
                             const std::string& op);

/// The compiler's first error lines in a build log: ninja's progress and command lines
/// dropped, \p submission's path prefix removed so paths read "04_sequential/sum.cu(12)".
std::string extract_compiler_errors(const std::string& log, const std::string& submission,
                                    std::size_t max_lines = 20);

}  // namespace reduce::grade
