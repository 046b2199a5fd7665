/// \file
/// \brief The commands of the reduce-grade command line (main.cpp parses the arguments).
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

/// What `batch` was asked (also what each task of a Slurm job array runs).
struct BatchArgs {
  std::string folder;                   ///< the submissions
  std::string labs_spec;                ///< --labs
  std::optional<std::uint64_t> seed;    ///< --seed
  std::string out = "batch-out";        ///< --out
  std::string only;                     ///< --only: these students (comma-separated)
  std::string gradebook;                ///< --gradebook (default: `OUT/gradebook.csv`)
  std::string course_build;             ///< --course-build (default: a temporary build)
  int jobs = 0;                         ///< -j
  bool no_gpu = false;                  ///< --no-gpu
  int build_ahead = 1;                  ///< --build-ahead
  std::vector<std::string> gpus;        ///< --gpus: one submission on each at once
  std::vector<std::string> cmake_args;  ///< --cmake-arg
};

/// What `slurm` was asked.
struct SlurmArgs {
  std::string folder;                       ///< the submissions
  std::string out;                          ///< the class's report folder
  std::string labs_spec;                    ///< --labs
  int per_task = 1;                         ///< --per-task
  bool no_gpu = false;                      ///< --no-gpu
  int jobs = 0;                             ///< -j
  std::vector<std::string> sbatch_options;  ///< --sbatch-option
  std::vector<std::string> cmake_args;      ///< --cmake-arg
};

/// `grade`: one submission.
int cmd_grade(const Common& common, const std::string& submission, const std::string& labs_spec,
              std::optional<std::uint64_t> seed, const std::string& out, int jobs,
              std::optional<double> pass_mark, const std::string& build_dir, bool keep_build,
              bool no_gpu, const std::vector<std::string>& cmake_args);

/// `batch`: every subfolder of a folder, one student each.
int cmd_batch(const Common& common, const BatchArgs& a);

/// `slurm`: the job array that grades a class on a Slurm cluster.
int cmd_slurm(const Common& common, const SlurmArgs& a, const char* argv0);

/// `merge`: the reports of a job array in one gradebook.
int cmd_merge(const std::string& out);

/// `release`: the student release.
int cmd_release(const Common& common, const std::string& out_dir);

/// `calibrate`: the reference solutions' fractions of the ceiling.
int cmd_calibrate(const Common& common, int runs, const std::string& labs_spec,
                  const std::string& out, int jobs, bool keep_build,
                  const std::vector<std::string>& cmake_args);

/// `check-planted`: the planted-bug corpus against its expectations.
int cmd_check_planted(const Common& common, const std::string& dir, const std::string& cases_spec,
                      const std::string& out, int jobs, std::optional<std::uint64_t> seed,
                      bool no_gpu, bool require_gpu, int build_ahead,
                      const std::vector<std::string>& gpus,
                      const std::vector<std::string>& cmake_args);

}  // namespace reduce::grade::cli
