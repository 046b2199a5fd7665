/// \file
/// \brief One grading's vocabulary: its options, its progress lines, exit codes, the GPU it
/// found, and a submission built and waiting for its GPU steps.
#pragma once

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/observations/facts.hpp>
#include <reduce_grade/submission/build.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce::grade {

/// Exit codes of reduce-grade (docs/grader.md).
enum ExitCode : int {
  kExitGraded = 0,     ///< graded, score at or above the pass mark (or the command succeeded)
  kExitBelowPass = 1,  ///< graded, score below the pass mark (check-planted: a case failed)
  kExitUsage = 2,      ///< usage or configuration error: bad path, no course root, bad rubric
  kExitNoGpu = 3,      ///< graded without a GPU: build points only
  kExitInternal = 4,   ///< an internal error of the grader (not the submission's, not usage)
};

/// Progress lines, safe to call from several threads.
class Progress {
 public:
  /// \param quiet print nothing
  explicit Progress(bool quiet = false) : quiet_(quiet) {}
  /// Prints one line (prefixed with the elapsed time).
  void line(const std::string& text);

 private:
  bool quiet_;
  std::mutex mutex_;
  double start_ = -1;
};

/// Options of one grading run.
struct GradeOptions {
  std::filesystem::path submission;     ///< the submission (resolved to its lab tree)
  std::vector<std::string> labs;        ///< lab folders to grade
  std::optional<std::uint64_t> seed;    ///< fixed seed (else a fresh one)
  std::filesystem::path out;            ///< report folder
  int jobs = 0;                         ///< parallel compile jobs (0: all cores)
  std::optional<double> pass_mark;      ///< percent, overrides the rubric's
  std::filesystem::path build_dir;      ///< build folder (empty: a temporary one)
  bool keep_build = false;              ///< keep the build folder afterwards
  bool no_gpu = false;                  ///< do not use a GPU even if present (build only)
  std::vector<std::string> cmake_args;  ///< extra configure arguments
  /// An old build_dir keeps its configure (keep_configure()) instead of being emptied: `grade
  /// --build-dir` only, a student's own re-grade; never a batch's or Gradescope's grading.
  bool keep_configure = false;
  /// The course's checkers, runner and benchmark, shared by the submissions of a run (empty:
  /// prepare_submission() builds them in `<build_dir>/course`).
  std::shared_ptr<const CourseBuild> course_build;
  /// Each lab's tests start as soon as it is built and checked, while the other labs build, where
  /// the course's binaries are built by then: the grading of one submission at a time
  /// (grade_submission()), which has the GPU to itself meanwhile.
  bool tests_beside_build = false;
  /// The GPU of the GPU steps (CUDA_VISIBLE_DEVICES of every checker; empty: the default).
  std::string cuda_device;
  /// The CPUs the GPU steps ran on, as cpu_list_text() writes them (batch --gpus with several
  /// GPUs: that GPU's share); empty: every CPU the grader may use.
  std::string cpus;
  /// More folders the lab's process may not change, besides the course, the build folders and
  /// this submission's report folder: in a batch, every submission and every report.
  std::vector<std::filesystem::path> protected_dirs;
  bool print_summary = true;  ///< print the table at the end
  bool verbose = false;       ///< print every note (else: the first one per lab)
  std::string label;          ///< prefix of progress lines (e.g. the student)
  /// How the reports name the submission, and the path their reproduce command uses (empty:
  /// the folder graded). Gradescope grades a temporary copy of /autograder/submission.
  std::string submission_name;
};

/// The submission's code changed what grades it (the course's checkers): no grade is given.
/// The CLI reports the message; batch lists the submission as not graded.
class SubmissionVoid : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// GPU presence, as `nvidia-smi -L` reports it.
struct GpuProbe {
  bool present = false;  ///< at least one device listed
  std::string name;      ///< the first device's name
  std::string detail;    ///< why not, when absent
};

/// Asks `nvidia-smi -L` (never throws).
GpuProbe probe_gpu();

/// A submission that has been built and waits for its GPU runs.
struct PreparedSubmission {
  GradeOptions options;                       ///< the options it was prepared with
  std::filesystem::path tree;                 ///< the folder holding the lab folders
  std::filesystem::path build_dir;            ///< its build folder
  std::shared_ptr<const CourseBuild> course;  ///< the checkers, runner and benchmark it runs
  bool temporary_build = false;               ///< build_dir is ours to delete
  std::uint64_t seed = 0;                     ///< the seed of this run
  std::vector<LabFacts> labs;                 ///< facts so far (presence, build, library)
  BuildOutcome build;                         ///< the build
  std::vector<std::string> build_sandbox;     ///< the command in front of the build's processes
  std::vector<std::string> messages;          ///< run-wide messages
  double started = 0;                         ///< now_seconds() at the start
  std::string started_at;                     ///< UTC time at the start
};

}  // namespace reduce::grade
