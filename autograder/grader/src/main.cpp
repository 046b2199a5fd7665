// reduce-grade: the grader of the CUDA reduction course (docs/grader.md): the command line;
// the commands are in commands.cpp.
//
//   reduce-grade grade [SUBMISSION] [--labs 01,04] [--seed N] [--out DIR] ...
//   reduce-grade batch FOLDER [--out DIR] [--gpus 0,1] ...
//   reduce-grade slurm FOLDER --out DIR [--per-task N] ...   then   reduce-grade merge DIR
//   reduce-grade release OUT_DIR
//   reduce-grade calibrate [--runs 3]
//   reduce-grade check-planted [PLANTED_DIR] [--cases a,b]
//
// Exit codes: 0 graded (at or above the pass mark), 1 below the pass mark (check-planted: a case
// missed its expectation; calibrate: a reference below its threshold), 2 usage or
// configuration error, 3 graded without a GPU (build points only).
#include <reduce_grade/commands.hpp>
#include <reduce_grade/course.hpp>
#include <reduce_grade/grader.hpp>
#include <reduce_grade/pipeline.hpp>
#include <reduce_grade/planted.hpp>
#include <reduce_grade/process.hpp>
#include <reduce_grade/release.hpp>
#include <reduce_grade/rubric.hpp>
#include <reduce_grade/shared_course.hpp>
#include <reduce_grade/slurm.hpp>
#include <reduce_grade/util.hpp>

#include <sys/prctl.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <deque>
#include <future>
#include <map>
#include <optional>
#include <system_error>

namespace rg = reduce::grade;
namespace fs = std::filesystem;

using namespace reduce::grade::cli;

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  // No process of the grading user (a lab's, say) may read or write the grader's memory or open
  // its pipes and files through /proc; and orphans a submission leaves behind become children
  // of the grader, which kills them before it writes any report.
  prctl(PR_SET_DUMPABLE, 0);
  rg::become_subreaper();
  CLI::App app{
      "reduce-grade: builds, tests, sanitizes, benchmarks and scores submissions of the "
      "CUDA reduction course (docs/grader.md)"};
  app.set_version_flag("--version", rg::grader_version());
  app.require_subcommand(1);
  Common common;
  app.add_option("--root", common.root,
                 "course root (default: found from the working folder or the executable)");
  app.add_option("--rubric", common.rubric, "rubric file (default: <root>/autograder/rubric.toml)");
  app.add_flag("-q,--quiet", common.quiet, "no progress lines");

  // grade
  std::string submission, labs_spec, out = "grade-out", build_dir;
  std::uint64_t seed_value = 0;
  int jobs = 0;
  double pass_mark_value = 0;
  bool keep_build = false, no_gpu = false;
  std::vector<std::string> cmake_args;
  auto* grade = app.add_subcommand("grade", "grade one submission (default: <root>/labs)");
  grade->add_option("submission", submission,
                    "submission folder: a copy of labs/ with the stubs filled in");
  grade->add_option("--labs", labs_spec,
                    "labs to grade, e.g. 01,04 or 04_sequential (default: all)");
  auto* grade_seed = grade->add_option("--seed", seed_value,
                                       "seed of every test and benchmark input (default: fresh)");
  grade->add_option("--out", out, "report folder (default: grade-out)");
  grade->add_option("-j,--jobs", jobs, "parallel compile jobs (default: all cores)");
  auto* grade_pass = grade
                         ->add_option("--pass-mark", pass_mark_value,
                                      "percent; exit 1 below it (default: the rubric's)")
                         ->check(CLI::Range(0.0, 100.0));
  grade->add_option("--build-dir", build_dir, "build folder (default: a fresh temporary one)");
  grade->add_flag("--keep-build", keep_build, "keep the build folder");
  grade->add_flag("--no-gpu", no_gpu, "build only, even where a GPU is present (exit code 3)");
  grade->add_option("--cmake-arg", cmake_args,
                    "extra configure argument, e.g. -DCMAKE_CUDA_ARCHITECTURES=80 (repeatable)");

  // batch
  BatchArgs batch_args;
  int build_ahead = 1;
  auto* batch = app.add_subcommand("batch", "grade every subfolder of FOLDER (one student each)");
  batch->add_option("folder", batch_args.folder, "folder of submissions")->required();
  batch->add_option("--out", batch_args.out,
                    "report folder: <out>/<student>/, <out>/gradebook.csv (default: batch-out)");
  batch->add_option("--labs", batch_args.labs_spec, "labs to grade (default: all)");
  auto* batch_seed = batch->add_option("--seed", seed_value,
                                       "one seed for every student (default: fresh per student)");
  batch->add_option("--only", batch_args.only, "only these students, e.g. alice,bob");
  batch->add_option("--gradebook", batch_args.gradebook,
                    "gradebook file (default: <out>/gradebook.csv)");
  batch->add_option("--course-build", batch_args.course_build,
                    "the course's checkers: built there and kept, or used as they are where "
                    "`slurm` built them (default: a temporary build)");
  batch->add_option("-j,--jobs", batch_args.jobs, "parallel compile jobs");
  batch->add_flag("--no-gpu", batch_args.no_gpu, "build only");
  batch->add_option("--build-ahead", batch_args.build_ahead,
                    "submissions built while the GPU runs the current one (0: off)");
  batch
      ->add_option("--gpus", batch_args.gpus,
                   "grade one submission on each of these GPUs at once, e.g. 0,2,3 "
                   "(default: one at a time on the default GPU)")
      ->delimiter(',');
  batch->add_option("--cmake-arg", batch_args.cmake_args, "extra configure argument (repeatable)");

  // slurm, merge
  SlurmArgs slurm_args;
  auto* slurm = app.add_subcommand(
      "slurm", "write a Slurm job array that grades every subfolder of FOLDER (OUT/slurm/)");
  slurm->add_option("folder", slurm_args.folder, "folder of submissions")->required();
  slurm->add_option("--out", slurm_args.out, "the class's report folder")->required();
  slurm->add_option("--labs", slurm_args.labs_spec, "labs to grade (default: all)");
  slurm->add_option("--per-task", slurm_args.per_task, "submissions per array task (default 1)")
      ->check(CLI::Range(1, 1000));
  slurm->add_flag("--no-gpu", slurm_args.no_gpu, "build only (no --gres=gpu:1)");
  slurm->add_option("--sbatch-option", slurm_args.sbatch_options,
                    "an #SBATCH line, e.g. --partition=gpu (repeatable)");
  slurm->add_option("-j,--jobs", slurm_args.jobs, "parallel compile jobs of the course build");
  slurm->add_option("--cmake-arg", slurm_args.cmake_args, "extra configure argument (repeatable)");
  std::string merge_out;
  auto* merge =
      app.add_subcommand("merge", "merge the reports of a Slurm job array into OUT/gradebook.csv");
  merge->add_option("out", merge_out, "the class's report folder given to slurm")->required();

  // release
  std::string release_out;
  auto* release = app.add_subcommand("release", "write the student release into an empty folder");
  release->add_option("out_dir", release_out, "new or empty folder")->required();

  // calibrate
  int runs = 3;
  std::string calibrate_out = "calibrate-out";
  auto* calibrate =
      app.add_subcommand("calibrate", "measure the reference solutions' fraction of the ceiling");
  calibrate->add_option("--runs", runs, "benchmark runs per lab (default 3)")
      ->check(CLI::Range(1, 100));
  calibrate->add_option("--labs", labs_spec, "labs (default: all)");
  calibrate->add_option("--out", calibrate_out, "report folder (default: calibrate-out)");
  calibrate->add_option("-j,--jobs", jobs, "parallel compile jobs");
  calibrate->add_flag("--keep-build", keep_build, "keep the build folder");
  calibrate->add_option("--cmake-arg", cmake_args, "extra configure argument (repeatable)");

  // check-planted
  std::string planted_dir, cases_spec, planted_out = "planted-out";
  auto* planted = app.add_subcommand("check-planted",
                                     "grade the planted-bug corpus and check every expected.toml");
  planted->add_option("planted_dir", planted_dir,
                      "corpus folder (default: <root>/autograder/planted)");
  planted->add_option("--cases", cases_spec, "only these cases, e.g. compile_error,cub_call");
  planted->add_option("--out", planted_out, "report folder (default: planted-out)");
  planted->add_option("-j,--jobs", jobs, "parallel compile jobs");
  auto* planted_seed = planted->add_option("--seed", seed_value, "seed (default: fresh)");
  planted->add_flag("--no-gpu", no_gpu, "check only the cases that need no GPU");
  bool require_gpu = false;
  planted->add_flag("--require-gpu", require_gpu,
                    "exit 3 at once when there is no GPU (for ctest)");
  planted->add_option("--build-ahead", build_ahead,
                      "cases built while the GPU runs the current one (0: off)");
  std::vector<std::string> planted_gpus;
  planted
      ->add_option("--gpus", planted_gpus,
                   "grade one case on each of these GPUs at once, e.g. 0,0,0: three cases "
                   "share GPU 0, benchmarks one at a time")
      ->delimiter(',');
  planted->add_option("--cmake-arg", cmake_args, "extra configure argument (repeatable)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : rg::kExitUsage;
  }
  try {
    auto seed_of = [&](CLI::Option* opt) {
      return *opt ? std::optional<std::uint64_t>(seed_value) : std::nullopt;
    };
    if (*grade)
      return cmd_grade(common, submission, labs_spec, seed_of(grade_seed), out, jobs,
                       *grade_pass ? std::optional<double>(pass_mark_value) : std::nullopt,
                       build_dir, keep_build, no_gpu, cmake_args);
    if (*batch) {
      batch_args.seed = seed_of(batch_seed);
      return cmd_batch(common, batch_args);
    }
    if (*slurm) return cmd_slurm(common, slurm_args, argv[0]);
    if (*merge) return cmd_merge(merge_out);
    if (*release) return cmd_release(common, release_out);
    if (*calibrate)
      return cmd_calibrate(common, runs, labs_spec, calibrate_out, jobs, keep_build, cmake_args);
    if (*planted)
      return cmd_check_planted(common, planted_dir, cases_spec, planted_out, jobs,
                               seed_of(planted_seed), no_gpu, require_gpu, build_ahead,
                               planted_gpus, cmake_args);
  } catch (const rg::ConfigError& e) {
    std::fprintf(stderr, "reduce-grade: error: %s\n", e.what());
    return rg::kExitUsage;
  } catch (const rg::SubmissionVoid& e) {
    std::fprintf(stderr, "reduce-grade: not graded: %s\n", e.what());
    return rg::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reduce-grade: internal error: %s\n", e.what());
    return rg::kExitUsage;
  }
  return rg::kExitUsage;
}
