// reduce-grade: the grader of the CUDA reduction course (docs/grader.md).
//
//   reduce-grade grade [SUBMISSION] [--labs 01,04] [--seed N] [--out DIR] ...
//   reduce-grade batch FOLDER [--out DIR] ...
//   reduce-grade release OUT_DIR
//   reduce-grade calibrate [--runs 3]
//   reduce-grade check-planted [PLANTED_DIR] [--cases a,b]
//
// Exit codes: 0 graded (at or above the pass mark), 1 below the pass mark (check-planted: a case
// missed its expectation; calibrate: a reference below its threshold), 2 usage or
// configuration error, 3 graded without a GPU (build points only).
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

namespace {

struct Common {
  std::string root;
  std::string rubric;
  bool quiet = false;
};

struct Loaded {
  rg::Course course;
  rg::Rubric rubric;
};

Loaded load(const Common& common, const std::vector<std::string>& chosen_labs_for_check = {}) {
  Loaded l;
  l.course = rg::load_course(rg::find_course_root(common.root));
  l.rubric = rg::load_rubric(common.rubric.empty() ? l.course.root / "autograder" / "rubric.toml"
                                                   : fs::path(common.rubric));
  std::vector<std::string> all;
  for (const rg::CourseLab& lab : l.course.labs) all.push_back(lab.folder);
  for (const std::string& problem : rg::check_rubric_against_labs(l.rubric, all))
    std::fprintf(stderr, "reduce-grade: warning: %s\n", problem.c_str());
  for (const std::string& lab : chosen_labs_for_check)
    if (l.rubric.find(lab) == nullptr)
      throw rg::ConfigError("the rubric has no entry for lab " + lab + " ([labs." + lab + "])");
  return l;
}

int cmd_grade(const Common& common, const std::string& submission, const std::string& labs_spec,
              std::optional<std::uint64_t> seed, const std::string& out, int jobs,
              std::optional<double> pass_mark, const std::string& build_dir, bool keep_build,
              bool no_gpu, const std::vector<std::string>& cmake_args) {
  rg::Course course = rg::load_course(rg::find_course_root(common.root));
  const std::vector<std::string> labs = rg::select_labs(course, labs_spec);
  const Loaded l = load(common, labs);
  rg::GradeOptions o;
  o.submission = submission.empty() ? l.course.root / "labs" : fs::path(submission);
  std::error_code ec;
  if (!fs::is_directory(o.submission, ec))
    throw rg::ConfigError("submission folder not found: " + o.submission.string());
  o.labs = labs;
  o.seed = seed;
  o.out = out;
  o.jobs = jobs;
  o.pass_mark = pass_mark;
  o.build_dir = build_dir;
  o.keep_build = keep_build;
  o.no_gpu = no_gpu;
  o.cmake_args = cmake_args;
  rg::Progress progress(common.quiet);
  const rg::GradeReport report = rg::grade_submission(l.course, l.rubric, o, progress);
  std::printf("reports: %s (report.json, junit.xml, results.json, summary.txt); exit code %d\n",
              fs::absolute(o.out, ec).c_str(), report.exit_code);
  return report.exit_code;
}

/// What `batch` was asked (also what each task of a Slurm job array runs).
struct BatchArgs {
  std::string folder;                   ///< the submissions
  std::string labs_spec;                ///< --labs
  std::optional<std::uint64_t> seed;    ///< --seed
  std::string out = "batch-out";        ///< --out
  std::string only;                     ///< --only: these students (comma-separated)
  std::string gradebook;                ///< --gradebook (default: <out>/gradebook.csv)
  std::string course_build;             ///< --course-build (default: a temporary build)
  int jobs = 0;                         ///< -j
  bool no_gpu = false;                  ///< --no-gpu
  int build_ahead = 1;                  ///< --build-ahead
  std::vector<std::string> gpus;        ///< --gpus: one submission on each at once
  std::vector<std::string> cmake_args;  ///< --cmake-arg
};

/// The subfolders of \p folder (one student each), or those named in \p only, in order.
std::vector<std::string> list_students(const std::string& folder, const std::string& only) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw rg::ConfigError("batch folder not found: " + folder);
  std::vector<std::string> students;
  if (!only.empty()) {
    for (const std::string& name : rg::split(only, ",")) {
      if (!fs::is_directory(fs::path(folder) / name, ec))
        throw rg::ConfigError("--only: no submission folder " + name + " in " + folder);
      students.push_back(name);
    }
    return students;
  }
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.is_directory(ec) && entry.path().filename().string()[0] != '.')
      students.push_back(entry.path().filename().string());
  std::sort(students.begin(), students.end());
  if (students.empty())
    throw rg::ConfigError("batch folder " + folder + " has no submission folders");
  return students;
}

int cmd_batch(const Common& common, const BatchArgs& a) {
  rg::Course course = rg::load_course(rg::find_course_root(common.root));
  const std::vector<std::string> labs = rg::select_labs(course, a.labs_spec);
  const Loaded l = load(common, labs);
  const std::vector<std::string> students = list_students(a.folder, a.only);
  const std::string& folder = a.folder;
  const std::string& out = a.out;
  const bool no_gpu = a.no_gpu;
  std::error_code ec;
  fs::create_directories(out, ec);
  const fs::path gradebook =
      a.gradebook.empty() ? fs::path(out) / "gradebook.csv" : fs::path(a.gradebook);

  rg::Progress progress(common.quiet);
  const rg::GpuProbe gpu = no_gpu ? rg::GpuProbe{false, "", "--no-gpu"} : rg::probe_gpu();
  // Rows in the students' order, whatever order the GPUs finish them in.
  std::vector<std::optional<rg::GradebookRow>> rows(students.size());
  bool any_no_gpu = false;
  auto write_gradebook = [&] {
    std::vector<rg::GradebookRow> done;
    for (const auto& row : rows)
      if (row) done.push_back(*row);
    rg::write_file(gradebook, rg::gradebook_csv(labs, done));
  };
  rg::GradeOptions course_options;
  course_options.jobs = a.jobs;
  course_options.no_gpu = no_gpu;
  course_options.cmake_args = a.cmake_args;
  rg::SharedCourse checkers(l.course, l.rubric, labs, gpu.present, course_options, progress,
                            a.course_build);
  rg::PipelineCallbacks callbacks;
  callbacks.options = [&](std::size_t i) {
    rg::GradeOptions o;
    o.submission = fs::path(folder) / students[i];
    o.labs = labs;
    o.seed = a.seed;
    o.out = fs::path(out) / students[i];
    o.protected_dirs = {fs::path(folder), fs::path(out)};
    o.jobs = a.jobs;
    o.no_gpu = no_gpu;
    o.cmake_args = a.cmake_args;
    o.print_summary = false;
    o.label = students[i];
    return o;
  };
  callbacks.report = [&](std::size_t i, const rg::GradeReport& report) {
    rg::GradebookRow row;
    row.student = students[i];
    row.total = report.score;
    row.max = report.max_score;
    for (const rg::LabReport& lab : report.labs) row.lab_points.push_back(lab.score.score);
    row.seed = report.seed;
    row.status = report.gpu_available ? "graded" : "graded (no GPU)";
    any_no_gpu = any_no_gpu || !report.gpu_available;
    rows[i] = row;
    write_gradebook();
    progress.line(fmt::format("{}: {}/{} points", students[i], rg::points_text(report.score),
                              rg::points_text(report.max_score)));
  };
  callbacks.error = [&](std::size_t i, const std::string& error) {
    rg::GradebookRow row;
    row.student = students[i];
    row.status = "error: " + error;
    for (const std::string& lab : labs) {
      const rg::LabRubric* lr = l.rubric.find(lab);
      row.max += lr != nullptr ? lr->points.total() : 0;
      row.lab_points.push_back(0);
    }
    rows[i] = row;
    try {
      rg::write_file(fs::path(out) / students[i] / "error.txt", error + "\n");
    } catch (const std::exception&) {
    }
    write_gradebook();
    progress.line(fmt::format("{}: not graded: {}", students[i], error));
  };
  rg::grade_pipeline(students.size(), a.build_ahead, a.gpus, l.course, l.rubric, gpu, progress,
                     checkers, callbacks);
  std::printf("gradebook: %s (%zu submissions)\n", gradebook.c_str(), students.size());
  return any_no_gpu ? rg::kExitNoGpu : rg::kExitGraded;
}

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

int cmd_slurm(const Common& common, const SlurmArgs& a, const char* argv0) {
  rg::Course course = rg::load_course(rg::find_course_root(common.root));
  const std::vector<std::string> labs = rg::select_labs(course, a.labs_spec);
  const Loaded l = load(common, labs);
  std::error_code ec;
  rg::SlurmPlan plan;
  plan.grader = fs::canonical("/proc/self/exe", ec);
  if (plan.grader.empty()) plan.grader = fs::absolute(argv0, ec);
  plan.course_root = fs::absolute(l.course.root, ec);
  plan.submissions = fs::absolute(a.folder, ec);
  plan.out = fs::absolute(a.out, ec);
  plan.students = list_students(a.folder, "");
  plan.labs = labs;
  plan.per_task = a.per_task;
  plan.gpu = !a.no_gpu;
  plan.minutes_per_submission = rg::submission_minutes(l.rubric, labs.size());
  plan.sbatch_options = a.sbatch_options;
  if (!common.rubric.empty()) plan.rubric = fs::absolute(common.rubric, ec);
  for (const std::string& arg : a.cmake_args) plan.batch_args.push_back("--cmake-arg=" + arg);
  rg::Progress progress(common.quiet);
  if (plan.gpu) {
    // The course's binaries, built once here for every task (they compile without a GPU).
    plan.course_build = plan.out / "course-build";
    rg::GradeOptions options;
    options.jobs = a.jobs;
    options.cmake_args = a.cmake_args;
    rg::remove_all_quietly(plan.course_build / rg::kCourseBuildDone);
    rg::SharedCourse built(l.course, l.rubric, labs, true, options, progress, plan.course_build,
                           true);
    rg::write_file(plan.course_build / rg::kCourseBuildDone, "built by reduce-grade slurm\n");
  }
  const int tasks = rg::write_slurm_job(plan);
  std::printf(
      "slurm: %d task(s) for %zu submission(s): sbatch %s\n"
      "then, when they are done: %s merge %s\n",
      tasks, plan.students.size(), (plan.out / "slurm" / "grade.sbatch").c_str(),
      plan.grader.c_str(), plan.out.c_str());
  return rg::kExitGraded;
}

int cmd_merge(const std::string& out) {
  const rg::ClassMerge m = rg::merge_class(out);
  std::printf("gradebook: %s (%zu submissions, %zu not graded, %zu missing)\n",
              (fs::path(out) / "gradebook.csv").c_str(), m.rows.size(), m.errors.size(),
              m.missing.size());
  for (const std::string& e : m.errors) std::printf("  not graded: %s\n", e.c_str());
  for (const std::string& s : m.missing) std::printf("  missing: %s\n", s.c_str());
  if (!m.rerun.empty()) std::printf("rerun only the tasks that failed: %s\n", m.rerun.c_str());
  return m.failed_tasks.empty() ? rg::kExitGraded : rg::kExitBelowPass;
}

int cmd_release(const Common& common, const std::string& out_dir) {
  const rg::Course course = rg::load_course(rg::find_course_root(common.root));
  const rg::ReleaseResult r = rg::write_release(course, out_dir);
  for (const std::string& w : r.warnings)
    std::fprintf(stderr, "reduce-grade: warning: %s\n", w.c_str());
  std::printf(
      "release: %zu files written to %s (no solutions/, hidden tests or planted bugs; the "
      "grader and its rubric are included so students can see their score)\n",
      r.files.size(), out_dir.c_str());
  return rg::kExitGraded;
}

int cmd_calibrate(const Common& common, int runs, const std::string& labs_spec,
                  const std::string& out, int jobs, bool keep_build,
                  const std::vector<std::string>& cmake_args) {
  rg::Course course = rg::load_course(rg::find_course_root(common.root));
  const std::vector<std::string> labs = rg::select_labs(course, labs_spec);
  const Loaded l = load(common, labs);
  rg::Progress progress(common.quiet);
  const rg::GpuProbe gpu = rg::probe_gpu();
  if (!gpu.present) {
    std::printf("calibrate needs a GPU (%s): nothing measured\n", gpu.detail.c_str());
    return rg::kExitNoGpu;
  }
  rg::GradeOptions o;
  o.submission = l.course.root / "solutions";
  o.labs = labs;
  o.out = out;
  o.jobs = jobs;
  o.keep_build = keep_build;
  o.cmake_args = cmake_args;
  o.label = "calibrate";
  rg::PreparedSubmission p = rg::prepare_submission(l.course, l.rubric, o, gpu, progress);
  std::map<std::string, std::vector<double>> fractions;
  std::map<std::string, std::vector<double>> gbps;
  std::map<std::string, std::string> problems;
  for (int run = 0; run < runs; ++run) {
    const std::uint64_t seed = rg::random_seed();
    for (const rg::LabFacts& f : p.labs) {
      if (!f.build.ok) {
        problems[f.lab] = "did not build";
        continue;
      }
      if (!p.build.benchmark_ok) {
        problems[f.lab] = "benchmark did not build";
        continue;
      }
      progress.line(fmt::format("calibrate: run {}/{}: {}", run + 1, runs, f.lab));
      const rg::PerfFacts perf =
          rg::run_benchmark(p.course->manifest, p.build.manifest, f.lab,
                            rg::plan_ops(l.course, *l.course.find(f.lab)), l.rubric, seed,
                            fs::path(out) / "logs" / fmt::format("run{}", run + 1) / f.lab);
      if (perf.ran) {
        fractions[f.lab].push_back(perf.fraction);
        gbps[f.lab].push_back(perf.gbps);
      } else {
        problems[f.lab] = rg::clip(perf.problem, 1, 200);
      }
    }
  }
  if (p.temporary_build && !keep_build) rg::remove_all_quietly(p.build_dir);
  std::string table = fmt::format(
      "calibrate: {} run(s) of the reference solutions on {}, n = {}, "
      "ceiling = {}\n\n",
      runs, gpu.name, l.rubric.performance.size, l.rubric.performance.ceiling);
  table += fmt::format("{:<26} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9} {:>10}  {}\n", "lab", "min",
                       "median", "max", "GB/s med.", "thresh.", "margin", "suggested", "verdict");
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  bool below = false;
  for (const std::string& lab : labs) {
    const rg::LabRubric* lr = l.rubric.find(lab);
    std::vector<double> v = fractions[lab];
    if (v.empty()) {
      table +=
          fmt::format("{:<26} {}\n", lab, problems.count(lab) ? problems[lab] : "no measurement");
      below = true;
      continue;
    }
    std::sort(v.begin(), v.end());
    std::vector<double> g = gbps[lab];
    std::sort(g.begin(), g.end());
    const double median = v[v.size() / 2];
    const double margin = lr->threshold > 0 ? v.front() / lr->threshold : 0;
    const bool ok = v.front() >= lr->threshold;
    below = below || !ok;
    table += fmt::format(
        "{:<26} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9} {:>10}  {}\n", lab,
        rg::fraction_text(v.front()), rg::fraction_text(median), rg::fraction_text(v.back()),
        rg::fixed(g[g.size() / 2], 1), rg::fraction_text(lr->threshold), rg::fixed(margin, 2) + "x",
        rg::fraction_text(l.rubric.performance.margin * median), ok ? "ok" : "BELOW THRESHOLD");
    json.push_back({{"lab", lab},
                    {"fractions", v},
                    {"median", median},
                    {"threshold", lr->threshold},
                    {"floor", lr->floor},
                    {"min_over_threshold", margin},
                    {"suggested_threshold", l.rubric.performance.margin * median}});
  }
  table +=
      "\nmargin = slowest run / threshold (above 1: the reference earns full credit every run);\n"
      "suggested = performance.margin x median: copy into [labs.<lab>] threshold to recalibrate.\n";
  std::fputs(table.c_str(), stdout);
  rg::write_file(fs::path(out) / "calibrate.txt", table);
  rg::write_file(fs::path(out) / "calibrate.json",
                 rg::dump_json({{"gpu", gpu.name}, {"runs", runs}, {"labs", json}}));
  return below ? rg::kExitBelowPass : rg::kExitGraded;
}

int cmd_check_planted(const Common& common, const std::string& dir, const std::string& cases_spec,
                      const std::string& out, int jobs, std::optional<std::uint64_t> seed,
                      bool no_gpu, bool require_gpu, int build_ahead,
                      const std::vector<std::string>& cmake_args) {
  const Loaded l = load(common);
  if (require_gpu && !rg::probe_gpu().present) {
    std::printf("check-planted: no GPU here (--require-gpu): nothing checked\n");
    return rg::kExitNoGpu;
  }
  const fs::path planted = dir.empty() ? l.course.root / "autograder" / "planted" : fs::path(dir);
  std::vector<rg::PlantedExpectation> cases = rg::load_planted(planted);
  for (const auto& c : cases)
    for (const std::string& w : c.warnings)
      std::fprintf(stderr, "reduce-grade: warning: %s\n", w.c_str());
  if (!cases_spec.empty()) {
    const std::vector<std::string> wanted = rg::split(cases_spec, ",; ");
    std::vector<rg::PlantedExpectation> chosen;
    for (const std::string& w : wanted) {
      auto it =
          std::find_if(cases.begin(), cases.end(), [&](const auto& c) { return c.name == w; });
      if (it == cases.end()) throw rg::ConfigError("--cases: no planted case '" + w + "'");
      chosen.push_back(*it);
    }
    cases = chosen;
  }
  if (cases.empty())
    throw rg::ConfigError("no planted cases (with expected.toml) in " + planted.string());
  for (const auto& c : cases)
    if (l.course.find(c.lab) == nullptr)
      throw rg::ConfigError(c.name + "/expected.toml: unknown lab " + c.lab);
  rg::Progress progress(common.quiet);
  const rg::GpuProbe gpu = no_gpu ? rg::GpuProbe{false, "", "--no-gpu"} : rg::probe_gpu();
  auto expected_text = [](const rg::PlantedExpectation& c) {
    if (c.points) return "= " + rg::points_text(*c.points);
    std::string t;
    if (c.min_points) t += ">= " + rg::points_text(*c.min_points);
    if (c.max_points)
      t += std::string(t.empty() ? "" : ", ") + "<= " + rg::points_text(*c.max_points);
    return t;
  };
  std::vector<rg::PlantedExpectation> runnable;
  std::vector<std::string> lines;
  for (const auto& c : cases) {
    if (c.needs_gpu && !gpu.present) {
      lines.push_back(fmt::format("{:<24} {:<26} {:>8} {:<22} {}", c.name, c.lab, "-",
                                  expected_text(c), "skipped: needs a GPU"));
    } else {
      runnable.push_back(c);
    }
  }
  int failures = 0;
  const std::uint64_t fixed_seed = seed.value_or(rg::random_seed());
  rg::GradeOptions course_options;
  course_options.jobs = jobs;
  course_options.no_gpu = no_gpu;
  course_options.cmake_args = cmake_args;
  std::vector<std::string> case_labs;
  for (const auto& c : runnable)
    if (std::find(case_labs.begin(), case_labs.end(), c.lab) == case_labs.end())
      case_labs.push_back(c.lab);
  rg::SharedCourse checkers(l.course, l.rubric, case_labs, gpu.present, course_options, progress);
  rg::PipelineCallbacks callbacks;
  callbacks.options = [&](std::size_t i) {
    const rg::PlantedExpectation& c = runnable[i];
    rg::GradeOptions o;
    // A case holds only the files its bug changes; the rest comes from solutions/.
    o.submission =
        rg::materialize_case(c, l.course.root / "solutions", fs::path(out) / "submissions");
    o.labs = {c.lab};
    o.seed = fixed_seed;
    o.out = fs::path(out) / c.name;
    o.protected_dirs = {fs::path(out)};
    o.jobs = jobs;
    o.no_gpu = no_gpu;
    o.cmake_args = cmake_args;
    o.print_summary = false;
    o.label = c.name;
    return o;
  };
  callbacks.report = [&](std::size_t i, const rg::GradeReport& report) {
    const rg::PlantedExpectation& c = runnable[i];
    std::vector<std::string> problems;
    if (report.labs.empty())
      problems.push_back("no lab graded");
    else
      problems = rg::check_expectation(c, report.labs.front());
    const double got = report.labs.empty() ? 0 : report.labs.front().score.score;
    if (!problems.empty()) ++failures;
    std::string verdict = problems.empty() ? "ok" : "FAILED: ";
    for (std::size_t i = 0; i < problems.size(); ++i) verdict += (i ? "; " : "") + problems[i];
    lines.push_back(fmt::format("{:<24} {:<26} {:>8} {:<22} {}", c.name, c.lab,
                                rg::points_text(got), expected_text(c), verdict));
    progress.line(fmt::format("{}: {}", c.name, verdict));
  };
  callbacks.error = [&](std::size_t i, const std::string& error) {
    const rg::PlantedExpectation& c = runnable[i];
    // A case that attacks the grading may be caught by the withheld grade itself.
    const bool withheld = c.may_be_withheld && rg::contains(error, "no grade can be trusted");
    if (!withheld) ++failures;
    const std::string verdict =
        (withheld ? "ok, grade withheld: " : "FAILED: not graded: ") + rg::clip(error, 1, 300);
    lines.push_back(fmt::format("{:<24} {:<26} {:>8} {:<22} {}", c.name, c.lab, "-",
                                expected_text(c), verdict));
    progress.line(fmt::format("{}: {}", c.name, verdict));
  };
  rg::grade_pipeline(runnable.size(), build_ahead, {}, l.course, l.rubric, gpu, progress, checkers,
                     callbacks);
  std::string table = fmt::format(
      "planted-bug corpus: {} case(s), seed {}, GPU {}\n\n{:<24} {:<26} {:>8} {:<22} {}\n",
      cases.size(), fixed_seed, gpu.present ? gpu.name : "none", "case", "lab", "points",
      "expected", "verdict");
  std::sort(lines.begin(), lines.end());
  for (const std::string& line : lines) table += line + "\n";
  table += fmt::format("\n{} failed, {} checked, {} skipped\n", failures, runnable.size(),
                       cases.size() - runnable.size());
  std::fputs(("\n" + table).c_str(), stdout);
  std::error_code ec;
  fs::create_directories(out, ec);
  rg::write_file(fs::path(out) / "planted.txt", table);
  if (failures > 0) return rg::kExitBelowPass;
  return gpu.present ? rg::kExitGraded : rg::kExitNoGpu;
}

}  // namespace

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
                               seed_of(planted_seed), no_gpu, require_gpu, build_ahead, cmake_args);
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
