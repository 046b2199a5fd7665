/// \file
/// \brief The grading pipeline: build a submission, run its tests, sanitizer and benchmark one
/// GPU job at a time, score it with the rubric and write the reports.
#pragma once

#include <reduce_grade/build.hpp>
#include <reduce_grade/course.hpp>
#include <reduce_grade/isolation.hpp>
#include <reduce_grade/report.hpp>
#include <reduce_grade/rubric.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
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
  /// The course's checkers, runner and benchmark, shared by the submissions of a run (empty:
  /// prepare_submission() builds them in `<build_dir>/course`).
  std::shared_ptr<const CourseBuild> course_build;
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
  std::vector<std::string> messages;          ///< run-wide messages
  double started = 0;                         ///< now_seconds() at the start
  std::string started_at;                     ///< UTC time at the start
};

/// Resolves the tree, builds the present labs and inspects their libraries (CPU only).
PreparedSubmission prepare_submission(const Course& course, const Rubric& rubric,
                                      const GradeOptions& options, const GpuProbe& gpu,
                                      Progress& progress);

/// Runs the GPU steps of every built lab (one process at a time), scores, writes the reports
/// into options.out, removes a temporary build folder, and returns the report.
GradeReport finish_submission(PreparedSubmission& prepared, const Course& course,
                              const Rubric& rubric, const GpuProbe& gpu, Progress& progress);

/// What build_course() needs to build the checkers of \p plans (and the benchmark when
/// \p benchmark) in \p build_dir, with the jobs and configure arguments of \p options.
CourseBuildOptions course_build_options(const Course& course, const Rubric& rubric,
                                        const std::vector<OpPlan>& plans,
                                        const std::filesystem::path& build_dir,
                                        const GradeOptions& options,
                                        const std::filesystem::path& log_dir, bool benchmark,
                                        std::function<void(const std::string&)> progress);

/// Asks \p options to build what the labs \p labs are measured against: the reference
/// solutions of those the rubric judges against theirs (measure "reference"), where this copy of
/// the course holds them (`solutions/<lab>`), and cub::DeviceReduce::Sum as a lab library where one
/// is judged against CUB (measure "cub").
void add_references(CourseBuildOptions& options, const Course& course, const Rubric& rubric,
                    const std::vector<std::string>& labs);

/// prepare_submission() then finish_submission().
GradeReport grade_submission(const Course& course, const Rubric& rubric,
                             const GradeOptions& options, Progress& progress);

/// One built lab and the operations its benchmark times.
struct BenchTarget {
  std::string lab;            ///< lab folder
  std::vector<OpPlan> plans;  ///< its operations (those without a bench_op are not timed)
  /// Set by run_benchmarks(): the course build has the lab's measure for each of its rows, and
  /// the rubric judges the lab against it (LabRubric::timed_measure()).
  bool references = false;
  /// Set by run_benchmarks(): the sizes the lab is timed at (the rubric's size, then its
  /// launch-bound size where it has one), each minus 1..4093 (at most a quarter of it) drawn
  /// from the run's key.
  std::vector<std::size_t> sizes;
};

/// Runs the benchmark of \p course (build_course()) once for several labs of \p labs (a
/// submission's build, whose manifest names each library's rows): every benchmarked operation of
/// every lab at the rubric's size, beside the ceiling probe and CUB, in one process (one probe,
/// one set of inputs). A lab's fraction is that of its slowest operation. A lab whose rows are
/// missing (the process died in another lab's code, say) gets a problem and PerfFacts::
/// unattributed; the caller may rerun it alone, with another key. \p key is the run's key
/// (reduce::benchmark_key() of the grading secret): every timed input and the timed size come
/// from it alone, so no test's input tells anything about them.
/// \p cuda_device pins it to one GPU (CUDA_VISIBLE_DEVICES; empty: the default). \p counts, when
/// given, gets the benchmark process and the lab processes it started added.
std::map<std::string, PerfFacts> run_benchmarks(
    const BuildManifest& course, const BuildManifest& labs, const std::vector<BenchTarget>& targets,
    const Rubric& rubric, std::uint64_t key, const std::filesystem::path& log_dir,
    const Isolation& isolation = {}, const std::string& cuda_device = {},
    ProcessCounts* counts = nullptr);

/// run_benchmarks() for one lab (calibrate times the labs one at a time).
PerfFacts run_benchmark(const BuildManifest& course, const BuildManifest& labs,
                        const std::string& lab, const std::vector<OpPlan>& plans,
                        const Rubric& rubric, std::uint64_t key,
                        const std::filesystem::path& log_dir, const Isolation& isolation = {},
                        const std::string& cuda_device = {}, ProcessCounts* counts = nullptr);

/// The grader's version string.
std::string grader_version();

}  // namespace reduce::grade
