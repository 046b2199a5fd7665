/// \file
/// \brief Builds the course's own binaries once, and the lab libraries of each submission.
///
/// Two build folders. The course build (build_course()) holds what never depends on a
/// submission: the checkers (`bin/course_test`, `bin/course_graded_test`: the suites of the
/// operations graded, checker_suites()), the lab runner and the benchmark. It is built once per
/// grading run and shared by every submission graded in it; the SHA-256 of each of its files and of
/// the course's sources is taken after the build, and CourseBuild::changes() says whether any
/// changed since (a submission's code that wrote them voids its grade).
///
/// A submission's build (build_submission()) compiles only its lab libraries: the lab folders
/// are first copied into a staging folder that refuses links and special files, one configure
/// covers all chosen labs, and ninja builds every lab library in one run that keeps going past
/// failures (-k 0). A lab that failed is rebuilt alone afterwards, so that its log holds only its
/// own errors.
#pragma once

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/manifest.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/observations/facts.hpp>
#include <reduce_grade/submission/ninja_logs.hpp>

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
  bool benchmark = true;                             ///< the benchmark will run
  bool hidden = true;                                ///< the hidden tests will run
  std::vector<std::string> cmake_args;               ///< extra -D... for configure
  Limits limits;                                     ///< timeouts
  std::filesystem::path log_dir;  ///< configure.log, build-*.log, `<lab>/build`.log
  std::vector<std::string>
      sandbox;  ///< the command in front of configure and build (isolation.hpp)
  std::function<void(const std::string&)> progress;  ///< progress lines (may be empty)
  /// Called for each lab whose library built, several labs at once, with the build's deps log
  /// (read_deps_log()); returning false stops that lab there (e.g. a forbidden library reduction:
  /// none of its code will run).
  std::function<bool(const std::string& lab, const BuildManifest& built, const std::string& deps)>
      keep_lab;
  /// Told of each lab once it is known whether it may run: \p passed when its libraries built and
  /// keep_lab kept it. Where it is set, each lab is checked as soon as ninja has linked its
  /// libraries and recorded what their compiles read, while it builds the others, so that its
  /// tests may start beside the build; a lab not linked by then is told after ninja ends. Called
  /// from several threads at once.
  std::function<void(const std::string& lab, bool passed)> lab_checked;
  /// Asked once the labs are configured: true leaves their build to build_later_labs().
  std::function<bool()> defer_build;
};

/// The course build: its folder and what to build in it.
struct CourseBuildOptions {
  std::filesystem::path course_root;    ///< the course (its common/, tests, cmake/)
  std::filesystem::path build_dir;      ///< the course build folder (kept and reused if built)
  std::vector<OpPlan> plans;            ///< operations whose checkers are needed
  int jobs = 0;                         ///< parallel compile jobs (0: all cores)
  bool benchmark = true;                ///< also build the benchmark
  bool hidden = true;                   ///< also build the hidden tests
  std::vector<std::string> cmake_args;  ///< extra -D... for configure
  Limits limits;                        ///< timeouts
  std::filesystem::path log_dir;        ///< course-configure.log, course-build.log
  std::function<void(const std::string&)> progress;  ///< progress lines (may be empty)
  /// Labs whose reference solutions (solutions/\<lab\>) are built too, into the tree "solutions"
  /// of the build folder: the benchmark times them beside the labs judged against them.
  std::vector<std::string> reference_labs;
  /// Build cub::DeviceReduce::Sum as a lab library too (BuildManifest::cub_references).
  bool cub_references = false;
};

/// The course's binaries, built once for every submission of a grading run.
struct CourseBuild {
  std::filesystem::path dir;  ///< the build folder: bin/, lib/, solutions/lib/ (references)
  /// Its checkers, runner and benchmark (once configured); its libraries are the references of
  /// CourseBuildOptions::reference_labs.
  BuildManifest manifest;
  bool ok = false;                    ///< configured, and every target built
  std::string problem;                ///< why not (with the log's error lines)
  double seconds = 0;                 ///< wall-clock time of configure and build
  bool benchmark_ok = false;          ///< the benchmark binary exists
  std::filesystem::path course_root;  ///< the course whose sources are digested too
  /// SHA-256 of each file under bin/ and lib/, and of the course's sources ("course: " + path)
  std::map<std::string, std::string> digests;

  /// Empty while every file under bin/ and lib/ and every source of the course is as it was
  /// after the build, else which changed, appeared or went missing ("bin/sum_test changed").
  std::string changes() const;
};

/// SHA-256 of every file under \p build_dir/bin, lib and solutions/lib (by relative path), and of
/// the course's sources under \p course_root (course.json, CMakeLists.txt, cmake/, common/,
/// autograder/, solutions/; keys "course: <path>"): whatever a submission's code could change to
/// sway its own grade or the next one's.
std::map<std::string, std::string> course_digests(const std::filesystem::path& build_dir,
                                                  const std::filesystem::path& course_root);

/// The value of `-DREDUCE_CHECKER_SUITES` for a course build folder: the operations whose suite
/// files the course's checkers link (autograder/tests/CMakeLists.txt), sorted and joined by ';';
/// empty: every operation's. Those \p plans are tested by (OpPlan::suites), joined with those
/// the folder's last configure linked (\p configured: its reduce-configure-args.txt, empty where
/// the grader never configured it; a configure without the define linked every file), so that
/// a folder only gains suites: a grading of lab 04 compiles the sum's, and a grading of the
/// whole course after it compiles the rest, without configuring again for each alternation.
std::string checker_suites(const std::vector<OpPlan>& plans, const std::string& configured);

/// Configures (tests on, no lab trees) and builds the checkers of \p options.plans (only the
/// suite files they need, checker_suites()), the lab runner and the benchmark, then takes their
/// digests. Never throws.
CourseBuild build_course(const CourseBuildOptions& options);

/// What the build produced.
struct BuildOutcome {
  bool configured = false;                 ///< cmake configure succeeded
  BuildManifest manifest;                  ///< where its lab libraries are (once configured)
  std::string configure_problem;           ///< why not (with the log's error lines)
  std::map<std::string, BuildFacts> labs;  ///< per lab
  bool benchmark_ok = false;               ///< the benchmark binary exists
  std::string benchmark_problem;           ///< why not
  double seconds = 0;                      ///< wall-clock time of configure and build
  std::string isolation;                   ///< how configure and build were confined
  /// Labs configured but not built yet: BuildOptions::defer_build left them to
  /// build_later_labs().
  std::vector<std::string> deferred;
};

/// Configures and builds; never throws for what the submission does.
BuildOutcome build_submission(const BuildOptions& options);

/// Builds the labs \p outcome.deferred that build_submission() configured and left (with the
/// same \p options), adding to \p outcome; never throws for what the submission does.
void build_later_labs(const BuildOptions& options, BuildOutcome& outcome);

/// Records what the configure just run in a submission's build folder wrote: the SHA-256 of each
/// of its files but `course/` and the staged labs, in `reduce-configured-files.txt`.
void record_configure(const std::filesystem::path& build_dir);

/// Readies a submission's old build folder for another grading, keeping its configure: where
/// every file its last configure wrote (recorded right after it, `reduce-configured-files.txt`)
/// is still a regular file with the same SHA-256, every other file but the course's build
/// (`course/`) is removed: the staged labs, the last build's objects and libraries, ninja's
/// logs, anything planted. The next build then compiles every lab again, and configures again
/// only where its arguments changed. Returns false, removing nothing, where no record exists or
/// a recorded file changed (the caller empties the folder); \p why says which, or what was kept.
/// Meant for a student's own re-grades only (docs/grader.md, "A kept build folder").
bool keep_configure(const std::filesystem::path& build_dir, std::string& why);

/// Empties a submission's old build folder of everything but the course's build (`course/`),
/// and where \p keep is true and keep_configure() can, its configure. Returns what it did
/// ("emptied: <why not kept>", or what was kept).
std::string clear_build_dir(const std::filesystem::path& build_dir, bool keep);

/// Where the submission's lab folders are staged (copied, links refused) before they compile.
std::filesystem::path staging_tree(const std::filesystem::path& build_dir);

/// Whether a failed build's only errors are the linker's undefined references (the sources
/// compiled; an entry point of the lab contract is missing or has another signature).
bool links_only(const std::string& log);

/// The compiler's first error lines in a build log: ninja's progress and command lines
/// dropped, \p submission's path prefix removed so paths read "04_sequential/sum.cu(12)".
std::string extract_compiler_errors(const std::string& log, const std::string& submission,
                                    std::size_t max_lines = 20);

}  // namespace reduce::grade
