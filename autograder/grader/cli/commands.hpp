/// \file
/// \brief The commands of the reduce-grade command line (main.cpp parses the arguments): the
/// executable's own, on top of the grader's library (include/reduce_grade/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reduce::grade::cli {

/// Options every command takes.
struct Common {
  std::string root;    ///< --root: the course (empty: found)
  std::string rubric;  ///< --rubric (empty: the course's)
  bool quiet = false;  ///< -q: no progress lines
};

/// What every command that builds submissions takes.
struct BuildArgs {
  int jobs = 0;         ///< -j: parallel compile jobs (0: all cores)
  bool no_gpu = false;  ///< --no-gpu: build only (check-planted: the cases that need no GPU)
  std::vector<std::string> cmake_args;  ///< --cmake-arg
  bool keep_build = false;              ///< --keep-build (grade, calibrate)
};

/// What `batch` was asked (also what each task of a Slurm job array runs).
struct BatchArgs : BuildArgs {
  std::string folder;                 ///< the submissions
  std::string labs_spec;              ///< --labs
  std::optional<std::uint64_t> seed;  ///< --seed
  std::string out = "batch-out";      ///< --out
  std::string only;                   ///< --only: these students (comma-separated)
  std::string gradebook;              ///< --gradebook (default: `OUT/gradebook.csv`)
  std::string course_build;           ///< --course-build (default: a temporary build)
  int build_ahead = 1;                ///< --build-ahead
  std::vector<std::string> gpus;      ///< --gpus: one submission on each at once
};

/// What `slurm` was asked.
struct SlurmArgs : BuildArgs {
  std::string folder;                       ///< the submissions
  std::string out;                          ///< the class's report folder
  std::string labs_spec;                    ///< --labs
  int per_task = 1;                         ///< --per-task
  std::optional<int> cpus_per_task;         ///< --cpus-per-task (default: SlurmPlan's)
  std::vector<std::string> sbatch_options;  ///< --sbatch-option
};

/// What `grade` was asked.
struct GradeArgs : BuildArgs {
  std::string submission;             ///< the submission (empty: the course's labs/)
  std::string labs_spec;              ///< --labs
  std::optional<std::uint64_t> seed;  ///< --seed
  std::string out = "grade-out";      ///< --out
  std::optional<double> pass_mark;    ///< --pass-mark (default: the rubric's)
  std::string build_dir;              ///< --build-dir (default: a temporary one)
  bool verbose = false;               ///< -v: every note in the terminal summary
  std::string submission_name;        ///< --submission-name: the path the reports give
};

/// What `calibrate` was asked.
struct CalibrateArgs : BuildArgs {
  int runs = 3;                       ///< --runs: benchmark runs per lab
  std::string labs_spec;              ///< --labs
  std::string out = "calibrate-out";  ///< --out
};

/// What `check-planted` was asked.
struct PlantedArgs : BuildArgs {
  std::string dir;                    ///< the corpus (empty: the course's)
  std::string cases_spec;             ///< --cases
  std::string out = "planted-out";    ///< --out
  std::optional<std::uint64_t> seed;  ///< --seed
  bool require_gpu = false;           ///< --require-gpu: exit 3 at once without a GPU
  int build_ahead = 1;                ///< --build-ahead
  std::vector<std::string> gpus;      ///< --gpus: one case on each at once
};

/// What `gradescope` was asked.
struct GradescopeArgs {
  std::string out;           ///< the zip to write
  std::string ref = "HEAD";  ///< --ref: the commit zipped
  std::string labs_spec;     ///< --labs: the labs the assignment grades (default: all)
};

/// What `report` was asked.
struct ReportArgs {
  std::string batch_out;  ///< the --out folder of `batch` (or of `slurm` after `merge`)
  std::string out;        ///< --out: the report's folder (empty: `BATCH_OUT/class-report`)
};

/// `grade`: one submission.
int cmd_grade(const Common& common, const GradeArgs& a);

/// `batch`: every subfolder of a folder, one student each.
int cmd_batch(const Common& common, const BatchArgs& a);

/// `report`: the class report of a batch output, one static HTML page with its charts, written
/// by `<root>/tools/class_report.py` run with a python3 that has matplotlib.
int cmd_report(const Common& common, const ReportArgs& a);

/// `slurm`: the job array that grades a class on a Slurm cluster.
int cmd_slurm(const Common& common, const SlurmArgs& a, const char* argv0);

/// `merge`: the reports of a job array in one gradebook.
int cmd_merge(const std::string& out);

/// `release`: the student release, from the commit \p ref of the course's repository.
int cmd_release(const Common& common, const std::string& out_dir, const std::string& ref);

/// `gradescope`: the Gradescope autograder zip, from the commit `a.ref` of the course.
int cmd_gradescope(const Common& common, const GradescopeArgs& a);

/// `calibrate`: the reference solutions' fractions of the ceiling.
int cmd_calibrate(const Common& common, const CalibrateArgs& a);

/// `check-planted`: the planted-bug corpus against its expectations.
int cmd_check_planted(const Common& common, const PlantedArgs& a);

}  // namespace reduce::grade::cli
