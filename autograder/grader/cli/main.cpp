// reduce-grade: the grader of the CUDA reduction course (docs/grader.md): the command line;
// the commands are in commands.cpp, the grading in the grader's library (include/reduce_grade/).
//
//   reduce-grade grade [SUBMISSION] [--labs 01,04] [--seed N] [--out DIR] ...
//   reduce-grade batch FOLDER [--out DIR] [--gpus 0,1] ...
//   reduce-grade report BATCH_OUT [--out DIR]
//   reduce-grade slurm FOLDER --out DIR [--per-task N] ...   then   reduce-grade merge DIR
//   reduce-grade release OUT_DIR
//   reduce-grade gradescope OUT.zip [--labs 04]
//   reduce-grade calibrate [--runs 3]
//   reduce-grade check-planted [PLANTED_DIR] [--cases a,b]
//
// Exit codes: 0 graded (at or above the pass mark), 1 below the pass mark (check-planted: a case
// missed its expectation; calibrate: a reference below its threshold), 2 usage or
// configuration error, 3 graded without a GPU (build points only), 4 an internal error of the
// grader (a bug: please report it).
#include "commands.hpp"

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/grader.hpp>
#include <reduce_grade/processes/confine.hpp>
#include <reduce_grade/processes/process.hpp>

#include <sys/prctl.h>

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>

namespace rg = reduce::grade;

using namespace reduce::grade::cli;

namespace {

CLI::App* add_grade(CLI::App& app, GradeArgs& a) {
  auto* c = app.add_subcommand("grade", "grade one submission (default: <root>/labs)");
  c->add_option("submission", a.submission,
                "submission folder: a copy of labs/ with the stubs filled in");
  c->add_option("--labs", a.labs_spec, "labs to grade, e.g. 01,04 or 04_sequential (default: all)");
  c->add_option("--seed", a.seed, "seed of every test and benchmark input (default: fresh)");
  c->add_option("--out", a.out, "report folder (default: grade-out)");
  c->add_option("-j,--jobs", a.jobs, "parallel compile jobs (default: all cores)");
  c->add_option("--pass-mark", a.pass_mark, "percent; exit 1 below it (default: the rubric's)")
      ->check(CLI::Range(0.0, 100.0));
  c->add_option("--build-dir", a.build_dir, "build folder (default: a fresh temporary one)");
  c->add_flag("--keep-build", a.keep_build, "keep the build folder");
  c->add_flag("--no-gpu", a.no_gpu, "build only, even where a GPU is present (exit code 3)");
  c->add_option("--submission-name", a.submission_name,
                "the submission's path in the reports and their reproduce command (default: the "
                "folder graded; Gradescope: /autograder/submission, not its temporary copy)");
  c->add_flag("-v,--verbose", a.verbose,
              "every note in the summary (default: the first per lab; all are in summary.txt)");
  c->add_option("--cmake-arg", a.cmake_args,
                "extra configure argument, e.g. -DCMAKE_CUDA_ARCHITECTURES=80 (repeatable)");
  return c;
}

CLI::App* add_batch(CLI::App& app, BatchArgs& a) {
  auto* c = app.add_subcommand("batch", "grade every subfolder of FOLDER (one student each)");
  c->add_option("folder", a.folder, "folder of submissions")->required();
  c->add_option("--out", a.out,
                "report folder: <out>/<student>/, <out>/gradebook.csv (default: batch-out)");
  c->add_option("--labs", a.labs_spec, "labs to grade (default: all)");
  c->add_option("--seed", a.seed, "one seed for every student (default: fresh per student)");
  c->add_option("--only", a.only, "only these students, e.g. alice,bob");
  c->add_option("--gradebook", a.gradebook, "gradebook file (default: <out>/gradebook.csv)");
  c->add_option("--course-build", a.course_build,
                "the course's checkers: built there and kept, or used as they are where "
                "`slurm` built them (default: a temporary build)");
  c->add_option("-j,--jobs", a.jobs, "parallel compile jobs");
  c->add_flag("--no-gpu", a.no_gpu, "build only");
  c->add_option("--build-ahead", a.build_ahead,
                "submissions built while the GPU runs the current one (0: off)");
  c->add_option("--gpus", a.gpus,
                "grade one submission on each of these GPUs at once, e.g. 0,2,3 "
                "(default: one at a time on the default GPU)")
      ->delimiter(',');
  c->add_option("--cmake-arg", a.cmake_args, "extra configure argument (repeatable)");
  return c;
}

CLI::App* add_slurm(CLI::App& app, SlurmArgs& a) {
  auto* c = app.add_subcommand(
      "slurm", "write a Slurm job array that grades every subfolder of FOLDER (OUT/slurm/)");
  c->add_option("folder", a.folder, "folder of submissions")->required();
  c->add_option("--out", a.out, "the class's report folder")->required();
  c->add_option("--labs", a.labs_spec, "labs to grade (default: all)");
  c->add_option("--per-task", a.per_task, "submissions per array task (default 1)")
      ->check(CLI::Range(1, 1000));
  c->add_flag("--no-gpu", a.no_gpu, "build only (no --gres=gpu:1)");
  c->add_option("--cpus-per-task", a.cpus_per_task,
                "CPUs per array task, also its builds' -j (default 8: the rubric's checkers at "
                "once; a --sbatch-option that asks for CPUs wins)")
      ->check(CLI::Range(1, 4096));
  c->add_option("--sbatch-option", a.sbatch_options,
                "an #SBATCH line, e.g. --partition=gpu (repeatable)");
  c->add_option("-j,--jobs", a.jobs, "parallel compile jobs of the course build");
  c->add_option("--cmake-arg", a.cmake_args, "extra configure argument (repeatable)");
  return c;
}

CLI::App* add_report(CLI::App& app, ReportArgs& a) {
  auto* c = app.add_subcommand(
      "report",
      "the class report of a batch: one static HTML page with charts (python3 and "
      "matplotlib; <root>/tools/class_report.py)");
  c->add_option("batch_out", a.batch_out, "the --out folder of batch (or of slurm, merged)")
      ->required();
  c->add_option("--out", a.out, "the report's folder (default: BATCH_OUT/class-report)");
  return c;
}

CLI::App* add_gradescope(CLI::App& app, GradescopeArgs& a) {
  auto* c = app.add_subcommand("gradescope",
                               "write the Gradescope autograder zip (setup.sh and run_autograder "
                               "at its top level, the course of a commit below them)");
  c->add_option("out", a.out, "the zip to write, e.g. autograder.zip")->required();
  c->add_option("--ref", a.ref, "the commit to zip (default HEAD): committed history only");
  c->add_option("--labs", a.labs_spec,
                "labs the assignment grades, e.g. 04 or 01,02 (default: the commit's "
                "autograder/gradescope/labs, else all)");
  return c;
}

CLI::App* add_calibrate(CLI::App& app, CalibrateArgs& a) {
  auto* c =
      app.add_subcommand("calibrate", "measure the reference solutions' fraction of the ceiling");
  c->add_option("--runs", a.runs, "benchmark runs per lab (default 3)")->check(CLI::Range(1, 100));
  c->add_option("--labs", a.labs_spec, "labs (default: all)");
  c->add_option("--out", a.out, "report folder (default: calibrate-out)");
  c->add_option("-j,--jobs", a.jobs, "parallel compile jobs");
  c->add_flag("--keep-build", a.keep_build, "keep the build folder");
  c->add_option("--cmake-arg", a.cmake_args, "extra configure argument (repeatable)");
  return c;
}

CLI::App* add_check_planted(CLI::App& app, PlantedArgs& a) {
  auto* c = app.add_subcommand("check-planted",
                               "grade the planted-bug corpus and check every expected.toml");
  c->add_option("planted_dir", a.dir, "corpus folder (default: <root>/autograder/planted)");
  c->add_option("--cases", a.cases_spec, "only these cases, e.g. compile_error,cub_call");
  c->add_option("--out", a.out, "report folder (default: planted-out)");
  c->add_option("-j,--jobs", a.jobs, "parallel compile jobs");
  c->add_option("--seed", a.seed, "seed (default: fresh)");
  c->add_flag("--no-gpu", a.no_gpu, "check only the cases that need no GPU");
  c->add_flag("--require-gpu", a.require_gpu, "exit 3 at once when there is no GPU (for ctest)");
  c->add_option("--build-ahead", a.build_ahead,
                "cases built while the GPU runs the current one (0: off)");
  c->add_option("--gpus", a.gpus,
                "grade one case on each of these GPUs at once, e.g. 0,0,0: three cases "
                "share GPU 0, benchmarks one at a time")
      ->delimiter(',');
  c->add_option("--cmake-arg", a.cmake_args, "extra configure argument (repeatable)");
  return c;
}

/// After a usage error: "did you mean --labs?" for an option typed for one that exists.
void suggest_options(int argc, char** argv) {
  static const std::pair<const char*, const char*> kMeant[] = {
      {"--lab", "--labs"}, {"--lab=", "--labs="}, {"--gpu", "--gpus"}, {"--case", "--cases"}};
  for (int i = 1; i < argc; ++i)
    for (const auto& [typed, meant] : kMeant)
      if (std::string(argv[i]) == typed ||
          (std::string(typed).back() == '=' && std::string(argv[i]).rfind(typed, 0) == 0))
        std::fprintf(stderr, "did you mean %s?\n", meant);
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything starts a thread: a process with several cannot enter a user namespace.
  if (argc > 1 && std::string(argv[1]) == "confine") return rg::confine_main(argc - 1, argv + 1);
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
  app.footer(
      "reduce-grade confine [--hide=FOLDER | --show=PATH | --writable=FOLDER]... -- COMMAND: "
      "COMMAND in a read-only view of this machine with those folders hidden or shown again "
      "(what the grader puts around a submission's build and its lab runner)");
  Common common;
  app.add_option("--root", common.root,
                 "course root (default: found from the working folder or the executable)");
  app.add_option("--rubric", common.rubric, "rubric file (default: <root>/autograder/rubric.toml)");
  app.add_flag("-q,--quiet", common.quiet, "no progress lines");
  GradeArgs grade_args;
  BatchArgs batch_args;
  SlurmArgs slurm_args;
  CalibrateArgs calibrate_args;
  PlantedArgs planted_args;
  GradescopeArgs gradescope_args;
  ReportArgs report_args;
  std::string merge_out, release_out, release_ref = "HEAD";
  auto* grade = add_grade(app, grade_args);
  auto* batch = add_batch(app, batch_args);
  auto* report = add_report(app, report_args);
  auto* slurm = add_slurm(app, slurm_args);
  auto* merge =
      app.add_subcommand("merge", "merge the reports of a Slurm job array into OUT/gradebook.csv");
  merge->add_option("out", merge_out, "the class's report folder given to slurm")->required();
  auto* release = app.add_subcommand("release", "write the student release into an empty folder");
  release->add_option("out_dir", release_out, "new or empty folder")->required();
  release->add_option("--ref", release_ref,
                      "the commit to release (default HEAD): committed history only, never the "
                      "working tree");
  auto* gradescope = add_gradescope(app, gradescope_args);
  auto* calibrate = add_calibrate(app, calibrate_args);
  auto* planted = add_check_planted(app, planted_args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    if (rc != 0) suggest_options(argc, argv);
    return rc == 0 ? 0 : rg::kExitUsage;
  }
  try {
    if (*grade) return cmd_grade(common, grade_args);
    if (*batch) return cmd_batch(common, batch_args);
    if (*report) return cmd_report(common, report_args);
    if (*slurm) return cmd_slurm(common, slurm_args, argv[0]);
    if (*merge) return cmd_merge(merge_out);
    if (*release) return cmd_release(common, release_out, release_ref);
    if (*gradescope) return cmd_gradescope(common, gradescope_args);
    if (*calibrate) return cmd_calibrate(common, calibrate_args);
    if (*planted) return cmd_check_planted(common, planted_args);
  } catch (const rg::ConfigError& e) {
    std::fprintf(stderr, "reduce-grade: error: %s\n", rg::inert_text(e.what()).c_str());
    return rg::kExitUsage;
  } catch (const rg::SubmissionVoid& e) {
    std::fprintf(stderr, "reduce-grade: not graded: %s\n", rg::inert_text(e.what()).c_str());
    return rg::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reduce-grade: internal error: %s\n", rg::inert_text(e.what()).c_str());
    return rg::kExitInternal;
  }
  return rg::kExitUsage;
}
