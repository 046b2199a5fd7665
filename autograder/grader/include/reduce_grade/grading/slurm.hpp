/// \file
/// \brief Grading a class on a Slurm cluster: one job array whose tasks each run `batch` on a
/// few submissions, and the merge of what the tasks wrote into one gradebook.
///
/// Layout of the class's report folder OUT:
/// - `OUT/slurm/grade.sbatch`: the job array (one task per line of tasks.txt);
/// - `OUT/slurm/tasks.txt`: the students of each task, one task per line, separated by commas;
/// - `OUT/slurm/labs.txt`: the labs graded, one per line (the gradebook's columns);
/// - `OUT/slurm/left_out.txt`: the students no task line can name (slurm_can_name()), made
///   inert, one per line: merge_class() gives each a row "error: ...", never their task-mates;
/// - `OUT/slurm/task-<i>.log`: what task i printed;
/// - `OUT/<student>/`: each student's reports (report.json...) or error.txt, as `batch` writes;
/// - `OUT/slurm/class.json`: the submissions folder and the course, for merge_class();
/// - `OUT/gradebook.csv` and `OUT/similar_sources.txt` (find_similar_sources() over the whole
///   class): written by merge_class().
#pragma once

#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/reports/report.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace reduce::grade {

/// CPUs a task asks for by default: one grading runs the rubric's 8 checkers (parallel_checks)
/// at once, and a task left to Slurm's default (often one CPU) would build and time on one core.
inline constexpr int kSlurmCpusPerTask = 8;

/// What the job array runs.
struct SlurmPlan {
  std::filesystem::path grader;         ///< this reduce-grade executable (absolute)
  std::filesystem::path course_root;    ///< the course (absolute)
  std::filesystem::path rubric;         ///< a rubric other than the course's (empty: its own)
  std::filesystem::path submissions;    ///< the folder of submissions (absolute)
  std::filesystem::path out;            ///< the class's report folder (absolute)
  std::vector<std::string> students;    ///< subfolders of submissions, in order
  std::vector<std::string> labs;        ///< labs graded
  int per_task = 1;                     ///< submissions per array task
  bool gpu = true;                      ///< ask for one GPU per task (--gres=gpu:1)
  std::filesystem::path course_build;   ///< the shared course build (empty: none, e.g. no GPU)
  int minutes_per_submission = 30;      ///< wall-time budget of one submission (from the rubric)
  std::vector<std::string> batch_args;  ///< more arguments for batch (--seed, --cmake-arg...)
  std::vector<std::string> sbatch_options;  ///< more `#SBATCH` lines, e.g. "--partition=gpu"
  /// CPUs per task (`--cpus-per-task`, unless sbatch_options ask for CPUs themselves): the
  /// rubric's 8 parallel_checks at once; the task's batch builds with as many jobs (-j).
  int cpus_per_task = kSlurmCpusPerTask;
};

/// The longest one submission of \p labs labs can take within the rubric's limits, in minutes:
/// configure, build, every lab's public and hidden tests and sanitizer runs (parallel_labs at
/// once), and the benchmark. A task's `--time` is this times its submissions, plus 10 minutes.
int submission_minutes(const Rubric& rubric, std::size_t labs);

/// The students of each task: \p per_task at a time, in order.
std::vector<std::vector<std::string>> slurm_tasks(const std::vector<std::string>& students,
                                                  int per_task);

/// The CPUs that \p sbatch_options ask for per task themselves: `--cpus-per-task=N`,
/// `--cpus-per-task N`, `-c N`, `-cN`, or `--cpus-per-gpu` (one GPU per task, and Slurm refuses
/// it beside `--cpus-per-task`). nullopt: none asks, so the script asks for
/// SlurmPlan::cpus_per_task; 0: one asks with a count that is not a plain number.
std::optional<int> sbatch_cpus(const std::vector<std::string>& sbatch_options);

/// The text of `grade.sbatch`: it asks for SlurmPlan::cpus_per_task CPUs unless its
/// sbatch_options ask for CPUs themselves (sbatch_cpus()), and its batch builds with the CPUs
/// Slurm gave the task (SLURM_CPUS_PER_TASK; else the count asked for).
std::string slurm_script(const SlurmPlan& plan);

/// Whether \p student can be named in a task line and in `batch --only`: no comma, no line end.
bool slurm_can_name(const std::string& student);

/// Writes OUT/slurm/{grade.sbatch,tasks.txt,labs.txt,left_out.txt}; returns the number of tasks.
int write_slurm_job(const SlurmPlan& plan);

/// One student's gradebook row from what `batch` left in \p student_dir: report.json (graded)
/// or error.txt (not graded); nothing when neither exists (its task never ran or died).
std::optional<GradebookRow> read_student_row(const std::filesystem::path& student_dir,
                                             const std::string& student,
                                             const std::vector<std::string>& labs);

/// What merge_class() found.
struct ClassMerge {
  std::vector<std::string> labs;     ///< the gradebook's lab columns
  std::vector<GradebookRow> rows;    ///< every student of every task, in task order
  std::vector<int> failed_tasks;     ///< tasks with a student not graded or missing
  std::vector<std::string> missing;  ///< students with no report at all
  std::vector<std::string> errors;   ///< students whose grading failed ("student: why")
  /// The command that reruns only the failed tasks (empty when none failed).
  std::string rerun;
};

/// Reads every task's students from OUT/slurm and their reports, writes OUT/gradebook.csv (a
/// student with no report gets a row with status "missing: task <i> did not finish").
/// Throws ConfigError when OUT holds no job.
ClassMerge merge_class(const std::filesystem::path& out);

}  // namespace reduce::grade
