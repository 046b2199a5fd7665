// The commands of reduce-grade (docs/grader.md); main.cpp parses the command line.
#include "commands.hpp"

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/grader.hpp>
#include <reduce_grade/grading/pipeline.hpp>
#include <reduce_grade/grading/planted.hpp>
#include <reduce_grade/grading/shared_course.hpp>
#include <reduce_grade/grading/slurm.hpp>
#include <reduce_grade/observations/facts.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/reports/gradescope.hpp>
#include <reduce_grade/reports/release.hpp>
#include <reduce_grade/reports/report.hpp>
#include <reduce_grade/submission/similar_sources.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace rg = reduce::grade;
namespace fs = std::filesystem;

namespace reduce::grade::cli {

namespace {

/// The course and its rubric, read once per command, and the labs it was asked for.
struct Loaded {
  rg::Course course;
  rg::Rubric rubric;
  std::vector<std::string> labs;  ///< --labs resolved (every lab without it)
};

/// Reads the course and the rubric; with \p labs_spec, selects those labs and requires a rubric
/// entry for each.
Loaded load(const Common& common, const std::optional<std::string>& labs_spec = std::nullopt) {
  Loaded l;
  l.course = rg::load_course(rg::find_course_root(common.root));
  if (labs_spec) l.labs = rg::select_labs(l.course, *labs_spec);
  l.rubric = rg::load_rubric(common.rubric.empty() ? l.course.root / "autograder" / "rubric.toml"
                                                   : fs::path(common.rubric));
  std::vector<std::string> all;
  for (const rg::CourseLab& lab : l.course.labs) all.push_back(lab.folder);
  for (const std::string& problem : rg::check_rubric_against_labs(l.rubric, all))
    std::fprintf(stderr, "reduce-grade: warning: %s\n", problem.c_str());
  for (const std::string& lab : l.labs)
    if (l.rubric.find(lab) == nullptr)
      throw rg::ConfigError("the rubric has no entry for lab " + lab + " ([labs." + lab + "])");
  return l;
}

/// What one grading of a command grades, and where its reports go.
struct Graded {
  fs::path submission;                   ///< the lab tree
  std::vector<std::string> labs;         ///< the labs graded
  fs::path out;                          ///< the report folder
  std::optional<std::uint64_t> seed;     ///< fixed seed (else a fresh one)
  std::vector<fs::path> protected_dirs;  ///< a batch's other folders, which the lab may not change
  /// One of many (a batch's student, a planted case): its progress lines start with it, and
  /// it prints no summary table.
  std::string label;
};

/// Every GradeOptions of the commands is made here: how to build (\p b) and what is graded
/// (\p g; nothing for the course's checkers, which a batch builds once for every submission).
rg::GradeOptions grade_options(const BuildArgs& b, Graded g = {}) {
  rg::GradeOptions o;
  o.jobs = b.jobs;
  o.no_gpu = b.no_gpu;
  o.cmake_args = b.cmake_args;
  o.keep_build = b.keep_build;
  o.submission = std::move(g.submission);
  o.labs = std::move(g.labs);
  o.out = std::move(g.out);
  o.seed = g.seed;
  o.protected_dirs = std::move(g.protected_dirs);
  o.print_summary = g.label.empty();
  o.label = std::move(g.label);
  return o;
}

/// `grade`'s options: grade_options() and what only `grade` is asked.
rg::GradeOptions grade_options(const GradeArgs& a, Graded g) {
  rg::GradeOptions o = grade_options(static_cast<const BuildArgs&>(a), std::move(g));
  o.pass_mark = a.pass_mark;
  o.build_dir = a.build_dir;
  o.keep_configure = !a.build_dir.empty();  // a student's own folder (docs/grader.md)
  o.verbose = a.verbose;
  o.submission_name = a.submission_name;
  return o;
}

}  // namespace

int cmd_grade(const Common& common, const GradeArgs& a) {
  const Loaded l = load(common, a.labs_spec);
  const fs::path submission =
      a.submission.empty() ? l.course.root / "labs" : fs::path(a.submission);
  std::error_code ec;
  if (!fs::is_directory(submission, ec))
    throw rg::ConfigError("submission folder not found: " + submission.string());
  const rg::GradeOptions o = grade_options(a, {submission, l.labs, a.out, a.seed, {}, ""});
  rg::Progress progress(common.quiet);
  rg::GradeReport report;
  try {
    report = rg::grade_submission(l.course, l.rubric, o, progress);
  } catch (...) {
    const std::string why = rg::handled_exception_message();
    if (!rg::is_internal_error(why)) throw;
    // A bug of the grader: nothing the submission started survives it, and the report folder
    // says what happened (Gradescope's run_autograder writes its own results.json).
    rg::kill_stray_processes();
    try {
      rg::write_file(fs::path(o.out) / "error.txt", why + "\n");
    } catch (const std::exception&) {
    }
    std::fprintf(stderr, "reduce-grade: %s\n", rg::inert_text(why).c_str());
    return rg::kExitInternal;
  }
  std::printf("reports: %s (report.json, junit.xml, results.json, summary.txt); exit code %d\n",
              fs::absolute(o.out, ec).c_str(), report.exit_code);
  return report.exit_code;
}

namespace {

/// The subfolders of \p folder (one student each), or those named in \p only, in order.
std::vector<std::string> list_students(const std::string& folder, const std::string& only) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw rg::ConfigError("batch folder not found: " + folder);
  std::vector<std::string> students;
  if (!only.empty()) {
    for (const std::string& name : rg::split(only, ",")) {
      if (!fs::is_directory(fs::path(folder) / name, ec))
        throw rg::ConfigError("--only: no submission folder " + rg::inert_name(name) + " in " +
                              folder);
      students.push_back(name);
    }
    return students;
  }
  std::vector<std::string> not_folders;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name[0] == '.') continue;
    if (entry.is_directory(ec))
      students.push_back(name);
    else
      not_folders.push_back(name);
  }
  std::sort(students.begin(), students.end());
  // A file beside the folders is most often a submission still packed (a zip): say so, loudly.
  std::sort(not_folders.begin(), not_folders.end());
  for (const std::string& name : not_folders)
    std::fprintf(stderr,
                 "! batch: %s is not a folder, so it is not graded (an archive not yet "
                 "extracted? extract it into a folder of its own and grade it with --only)\n",
                 rg::inert_name(name).c_str());
  if (students.empty())
    throw rg::ConfigError("batch folder " + folder + " has no submission folders");
  return students;
}

}  // namespace

namespace {

/// The gradebook of a batch: one row per student in the students' order, whatever order the
/// GPUs finish them in, written again after every submission.
struct Gradebook {
  fs::path file;
  std::vector<std::string> labs;
  std::vector<std::optional<rg::GradebookRow>> rows;
  bool any_no_gpu = false;

  void write() const {
    std::vector<rg::GradebookRow> done;
    for (const auto& row : rows)
      if (row) done.push_back(*row);
    rg::write_file(file, rg::gradebook_csv(labs, done));
  }

  void graded(std::size_t i, const std::string& student, const rg::GradeReport& report) {
    rg::GradebookRow row;
    row.student = student;
    row.total = report.score;
    row.max = report.max_score;
    for (const rg::LabReport& lab : report.labs) row.lab_points.push_back(lab.score.score);
    row.seed = report.seed;
    row.status = report.gpu_available ? "graded" : "graded (no GPU)";
    row.reason = rg::gradebook_reason(rg::report_json(report));
    any_no_gpu = any_no_gpu || !report.gpu_available;
    rows[i] = row;
    write();
  }

  void not_graded(std::size_t i, const std::string& student, const std::string& error,
                  const rg::Rubric& rubric) {
    rg::GradebookRow row;
    row.student = student;
    row.status = "error: " + error;
    for (const std::string& lab : labs) {
      const rg::LabRubric* lr = rubric.find(lab);
      row.max += lr != nullptr ? lr->points.total() : 0;
      row.lab_points.push_back(0);
    }
    rows[i] = row;
    write();
  }
};

}  // namespace

namespace {

/// similar_sources.txt in \p out: the students of \p folder whose lab folders hold the same
/// changed files (a hint for the instructor). A student folder that is a link is not its own
/// (refuse_linked_submission()) and is left out.
void write_similar_sources(const Loaded& l, const fs::path& folder,
                           const std::vector<std::string>& students, const fs::path& out) {
  const std::vector<std::pair<std::string, fs::path>> trees =
      rg::batch_trees(l.course, folder, students);
  const std::vector<rg::SimilarGroup> groups =
      rg::find_similar_sources(trees, l.labs, l.course.root / "labs");
  rg::write_file(out / "similar_sources.txt", rg::similar_sources_text(groups, trees.size()));
  std::printf("identical lab sources: %zu group%s (%s; a hint, not a grade)\n", groups.size(),
              groups.size() == 1 ? "" : "s", (out / "similar_sources.txt").c_str());
}

}  // namespace

int cmd_batch(const Common& common, const BatchArgs& a) {
  const Loaded l = load(common, a.labs_spec);
  const std::vector<std::string>& labs = l.labs;
  const std::vector<std::string> students = list_students(a.folder, a.only);
  const fs::path folder = a.folder, out = a.out;
  std::error_code ec;
  fs::create_directories(out, ec);
  Gradebook book{a.gradebook.empty() ? out / "gradebook.csv" : fs::path(a.gradebook), labs,
                 std::vector<std::optional<rg::GradebookRow>>(students.size())};
  rg::Progress progress(common.quiet);
  const rg::GpuProbe gpu = a.no_gpu ? rg::GpuProbe{false, "", "--no-gpu"} : rg::probe_gpu();
  rg::SharedCourse checkers(l.course, l.rubric, labs, gpu.present, grade_options(a), progress,
                            a.course_build);
  rg::PipelineCallbacks callbacks;
  // A name reaches the terminal made inert (escape sequences shown, not obeyed; clipped).
  callbacks.options = [&](std::size_t i) {
    return grade_options(a, {folder / students[i],
                             labs,
                             out / students[i],
                             a.seed,
                             {folder, out},
                             rg::inert_name(students[i])});
  };
  // "student k of N, eta": the callbacks run one at a time, under the pipeline's lock.
  const double started = rg::now_seconds();
  std::size_t finished = 0;
  bool internal_error = false;  // a submission not graded for a bug of the grader
  const auto count_line = [&] {
    ++finished;
    const double per = (rg::now_seconds() - started) / static_cast<double>(finished);
    const double left = per * static_cast<double>(students.size() - finished);
    return fmt::format("student {} of {}, eta {:.0f} min", finished, students.size(), left / 60);
  };
  callbacks.report = [&](std::size_t i, const rg::GradeReport& report) {
    book.graded(i, students[i], report);
    progress.line(fmt::format("{}: {}/{} points ({})", rg::inert_name(students[i]),
                              rg::points_text(report.score), rg::points_text(report.max_score),
                              count_line()));
  };
  callbacks.error = [&](std::size_t i, const std::string& error,
                        bool /*withheld: an error row too*/) {
    try {
      rg::write_file(out / students[i] / "error.txt", error + "\n");
    } catch (const std::exception&) {
    }
    internal_error = internal_error || rg::is_internal_error(error);
    book.not_graded(i, students[i], error, l.rubric);
    progress.line(
        fmt::format("{}: not graded ({}): {}", rg::inert_name(students[i]), count_line(), error));
  };
  rg::grade_pipeline(students.size(), a.build_ahead, a.gpus, l.course, l.rubric, gpu, progress,
                     checkers, callbacks);
  std::printf("gradebook: %s (%zu submissions)\n", book.file.c_str(), students.size());
  // A part of the class (--only, as each Slurm task) would list only its own part.
  if (a.only.empty()) write_similar_sources(l, folder, students, out);
  // Not made here: it needs python3 with matplotlib, which a grading host may lack.
  std::printf("class report (one HTML page with charts): reduce-grade report %s\n",
              rg::shell_quote(out.string()).c_str());
  // The gradebook is complete either way; exit 4 says that some row holds an internal error.
  if (internal_error) {
    std::printf(
        "some submissions could not be graded for an internal error of the grader (exit code "
        "4): their gradebook rows and error.txt say which; please report it\n");
    return rg::kExitInternal;
  }
  return book.any_no_gpu ? rg::kExitNoGpu : rg::kExitGraded;
}

namespace {

/// The first python3 that imports matplotlib: the one in PATH, else the system's (a pyenv or
/// virtual environment in PATH often lacks it). Throws ConfigError naming what is missing.
fs::path python_with_matplotlib() {
  std::vector<fs::path> candidates;
  if (const auto in_path = rg::find_program("python3")) candidates.push_back(*in_path);
  std::error_code ec;
  if (fs::exists("/usr/bin/python3", ec) &&
      (candidates.empty() || !fs::equivalent(candidates.front(), "/usr/bin/python3", ec)))
    candidates.push_back("/usr/bin/python3");
  if (candidates.empty())
    throw rg::ConfigError(
        "python3 not found: the class report needs python3 with matplotlib (Debian/Ubuntu: "
        "apt-get install python3-matplotlib)");
  std::vector<std::string> tried;
  for (const fs::path& python : candidates) {
    rg::ProcessSpec probe;
    probe.argv = {python.string(), "-c", "import matplotlib.pyplot"};
    probe.timeout_s = 60;
    if (rg::run_process(probe).succeeded()) return python;
    tried.push_back(python.string());
  }
  throw rg::ConfigError("matplotlib is missing for " + rg::join(tried, " and ") +
                        ": the class report draws its charts with it (Debian/Ubuntu: apt-get "
                        "install python3-matplotlib; else pip install matplotlib)");
}

}  // namespace

int cmd_report(const Common& common, const ReportArgs& a) {
  const fs::path script = rg::find_course_root(common.root) / "tools" / "class_report.py";
  std::error_code ec;
  if (!fs::is_regular_file(script, ec))
    throw rg::ConfigError("the class report script is missing: " + script.string());
  rg::ProcessSpec run;
  run.argv = {python_with_matplotlib().string(), script.string(), a.batch_out};
  if (!a.out.empty()) run.argv.insert(run.argv.end(), {"--out", a.out});
  run.timeout_s = 1800;  // a class of hundreds draws its charts in seconds; this is a backstop
  const rg::ProcessResult r = rg::run_process(run);
  std::fputs(r.output.c_str(), r.succeeded() ? stdout : stderr);
  if (r.succeeded()) return rg::kExitGraded;
  // The script's exit 2: bad input or matplotlib missing, which it has explained.
  if (r.exited() && r.exit_code == rg::kExitUsage) return rg::kExitUsage;
  throw std::runtime_error("tools/class_report.py failed: " + r.describe());
}

int cmd_slurm(const Common& common, const SlurmArgs& a, const char* argv0) {
  const Loaded l = load(common, a.labs_spec);
  const std::vector<std::string>& labs = l.labs;
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
  if (a.cpus_per_task) plan.cpus_per_task = *a.cpus_per_task;
  plan.minutes_per_submission = rg::submission_minutes(l.rubric, labs.size());
  plan.sbatch_options = a.sbatch_options;
  if (!common.rubric.empty()) plan.rubric = fs::absolute(common.rubric, ec);
  for (const std::string& arg : a.cmake_args) plan.batch_args.push_back("--cmake-arg=" + arg);
  rg::Progress progress(common.quiet);
  if (plan.gpu) {
    // The course's binaries, built once here for every task (they compile without a GPU).
    plan.course_build = plan.out / "course-build";
    BuildArgs build = a;
    build.no_gpu = false;  // the tasks' GPUs run what is built here
    rg::remove_all_quietly(plan.course_build / rg::kCourseBuildDone);
    rg::SharedCourse built(l.course, l.rubric, labs, true, grade_options(build), progress,
                           plan.course_build, true);
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
  for (const std::string& e : m.errors)
    std::printf("  not graded: %s\n", rg::inert_text(e).c_str());
  for (const std::string& s : m.missing) std::printf("  missing: %s\n", rg::inert_name(s).c_str());
  if (!m.rerun.empty()) std::printf("rerun only the tasks that failed: %s\n", m.rerun.c_str());
  return m.failed_tasks.empty() ? rg::kExitGraded : rg::kExitBelowPass;
}

int cmd_release(const Common& common, const std::string& out_dir, const std::string& ref) {
  const rg::ReleaseResult r =
      rg::write_release_from_git(rg::find_course_root(common.root), ref, out_dir);
  for (const std::string& w : r.warnings)
    std::fprintf(stderr, "reduce-grade: warning: %s\n", w.c_str());
  std::printf(
      "release: %zu files of %s written to %s (no solutions/, hidden tests or planted bugs; the "
      "grader and its rubric are included so students can see their score)\n",
      r.files.size(), ref.c_str(), out_dir.c_str());
  return rg::kExitGraded;
}

int cmd_gradescope(const Common& common, const GradescopeArgs& a) {
  rg::GradescopeOptions o;
  o.course_root = rg::find_course_root(common.root);
  o.ref = a.ref;
  o.labs_spec = a.labs_spec;
  o.out_zip = a.out;
  const rg::GradescopeZip z = rg::write_gradescope_zip(o);
  std::printf(
      "gradescope: %s written by %s: %zu files of commit %.12s with setup.sh and run_autograder "
      "at its top level; labs graded: %s\n"
      "Upload it as the assignment's autograder. Base image: Ubuntu 22.04 or 24.04, variant "
      "Base (setup.sh installs the CUDA toolkit where the image has none). Without a GPU, "
      "Gradescope gives build points only (docs/grader.md, \"Gradescope\").\n",
      a.out.c_str(), z.tool.c_str(), z.files, z.commit.c_str(),
      z.labs.empty() ? "all" : z.labs.c_str());
  return rg::kExitGraded;
}

namespace {

/// Every lab's benchmark results over the calibration runs.
struct Calibration {
  std::map<std::string, std::vector<double>> fractions, gbps;
  std::map<std::string, std::string> problems;
};

Calibration measure_references(const Loaded& l, rg::PreparedSubmission& p, int runs,
                               const fs::path& out, rg::Progress& progress) {
  Calibration c;
  for (int run = 0; run < runs; ++run) {
    const std::uint64_t seed = rg::random_seed();
    for (const rg::LabFacts& f : p.labs) {
      if (!f.build.ok || !p.build.benchmark_ok) {
        c.problems[f.lab] = f.build.ok ? "benchmark did not build" : "did not build";
        continue;
      }
      progress.line(fmt::format("calibrate: run {}/{}: {}", run + 1, runs, f.lab));
      const rg::PerfFacts perf =
          rg::run_benchmark(p.course->manifest, p.build.manifest, f.lab, l.course.plans(f.lab),
                            l.rubric, seed, out / "logs" / fmt::format("run{}", run + 1) / f.lab);
      if (perf.ran) {
        c.fractions[f.lab].push_back(perf.fraction);
        c.gbps[f.lab].push_back(perf.gbps);
      } else {
        c.problems[f.lab] = rg::clip(perf.problem, 1, 200);
      }
    }
  }
  return c;
}

}  // namespace

int cmd_calibrate(const Common& common, const CalibrateArgs& a) {
  const Loaded l = load(common, a.labs_spec);
  const std::vector<std::string>& labs = l.labs;
  rg::Progress progress(common.quiet);
  const rg::GpuProbe gpu = rg::probe_gpu();
  if (!gpu.present) {
    std::printf("calibrate needs a GPU (%s): nothing measured\n", gpu.detail.c_str());
    return rg::kExitNoGpu;
  }
  const rg::GradeOptions o =
      grade_options(a, {l.course.root / "solutions", labs, a.out, {}, {}, "calibrate"});
  rg::PreparedSubmission p = rg::prepare_submission(l.course, l.rubric, o, gpu, progress);
  Calibration c = measure_references(l, p, a.runs, a.out, progress);
  if (p.temporary_build && !a.keep_build) rg::remove_all_quietly(p.build_dir);
  std::string table =
      fmt::format("calibrate: {} run(s) of the reference solutions on {}, n = {}, ceiling = {}\n\n",
                  a.runs, gpu.name, l.rubric.performance.size, l.rubric.performance.ceiling);
  table += fmt::format("{:<26} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9} {:>10}  {}\n", "lab", "min",
                       "median", "max", "GB/s med.", "thresh.", "margin", "suggested", "verdict");
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  bool below = false;
  for (const std::string& lab : labs) {
    const rg::LabRubric* lr = l.rubric.find(lab);
    std::vector<double> v = c.fractions[lab];
    if (v.empty()) {
      table += fmt::format("{:<26} {}\n", lab,
                           c.problems.count(lab) ? c.problems[lab] : "no measurement");
      below = true;
      continue;
    }
    std::sort(v.begin(), v.end());
    std::vector<double> g = c.gbps[lab];
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
  rg::write_file(fs::path(a.out) / "calibrate.txt", table);
  rg::write_file(fs::path(a.out) / "calibrate.json",
                 rg::dump_json({{"gpu", gpu.name}, {"runs", a.runs}, {"labs", json}}));
  return below ? rg::kExitBelowPass : rg::kExitGraded;
}

namespace {

/// The expectation of a planted case as the table shows it ("= 0", ">= 7, <= 8.5").
std::string expected_text(const rg::PlantedExpectation& c) {
  if (c.points) return "= " + rg::points_text(*c.points);
  std::string t;
  if (c.min_points) t += ">= " + rg::points_text(*c.min_points);
  if (c.max_points)
    t += std::string(t.empty() ? "" : ", ") + "<= " + rg::points_text(*c.max_points);
  return t;
}

std::string planted_line(const rg::PlantedExpectation& c, const std::string& points,
                         const std::string& verdict) {
  return fmt::format("{:<24} {:<26} {:>8} {:<22} {}", c.name, c.lab, points, expected_text(c),
                     verdict);
}

/// The corpus's cases, or those --cases names; every one with a known lab.
std::vector<rg::PlantedExpectation> chosen_cases(const rg::Course& course, const fs::path& planted,
                                                 const std::string& cases_spec) {
  std::vector<rg::PlantedExpectation> cases = rg::load_planted(planted);
  for (const auto& c : cases)
    for (const std::string& w : c.warnings)
      std::fprintf(stderr, "reduce-grade: warning: %s\n", w.c_str());
  if (!cases_spec.empty()) {
    std::vector<rg::PlantedExpectation> chosen;
    for (const std::string& w : rg::split(cases_spec, ",; ")) {
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
    if (course.find(c.lab) == nullptr)
      throw rg::ConfigError(c.name + "/expected.toml: unknown lab " + c.lab);
  return cases;
}

/// The verdicts of the graded cases, as the pipeline reports them.
struct PlantedVerdicts {
  std::vector<std::string> lines;
  int failures = 0;

  void graded(const rg::PlantedExpectation& c, const rg::GradeReport& report,
              rg::Progress& progress) {
    std::vector<std::string> problems;
    const auto lab = std::find_if(report.labs.begin(), report.labs.end(),
                                  [&](const rg::LabReport& r) { return r.facts.lab == c.lab; });
    if (lab == report.labs.end())
      problems.push_back("no lab graded");
    else
      problems = rg::check_expectation(c, *lab);
    const double got = lab == report.labs.end() ? 0 : lab->score.score;
    if (!problems.empty()) ++failures;
    const std::string verdict = problems.empty() ? "ok" : "FAILED: " + rg::join(problems, "; ");
    lines.push_back(planted_line(c, rg::points_text(got), verdict));
    progress.line(fmt::format("{}: {}", c.name, verdict));
  }

  void not_graded(const rg::PlantedExpectation& c, const std::string& error, bool withheld,
                  rg::Progress& progress) {
    // A case that attacks the grading may be caught by the withheld grade itself.
    const bool expected = withheld && c.may_be_withheld;
    if (!expected) ++failures;
    const std::string verdict =
        (expected ? "ok, grade withheld: " : "FAILED: not graded: ") + rg::clip(error, 1, 300);
    lines.push_back(planted_line(c, "-", verdict));
    progress.line(fmt::format("{}: {}", c.name, verdict));
  }
};

}  // namespace

int cmd_check_planted(const Common& common, const PlantedArgs& a) {
  const Loaded l = load(common);
  if (a.require_gpu && !rg::probe_gpu().present) {
    std::printf("check-planted: no GPU here (--require-gpu): nothing checked\n");
    return rg::kExitNoGpu;
  }
  const fs::path planted =
      a.dir.empty() ? l.course.root / "autograder" / "planted" : fs::path(a.dir);
  const std::vector<rg::PlantedExpectation> cases = chosen_cases(l.course, planted, a.cases_spec);
  rg::Progress progress(common.quiet);
  const rg::GpuProbe gpu = a.no_gpu ? rg::GpuProbe{false, "", "--no-gpu"} : rg::probe_gpu();
  PlantedVerdicts verdicts;
  std::vector<rg::PlantedExpectation> runnable;
  for (const auto& c : cases) {
    if (c.needs_gpu && !gpu.present)
      verdicts.lines.push_back(planted_line(c, "-", "skipped: needs a GPU"));
    else
      runnable.push_back(c);
  }
  const std::uint64_t seed = a.seed.value_or(rg::random_seed());
  std::vector<std::string> case_labs;
  for (const auto& c : runnable)
    for (const std::string& lab : c.graded_labs())
      if (std::find(case_labs.begin(), case_labs.end(), lab) == case_labs.end())
        case_labs.push_back(lab);
  rg::SharedCourse checkers(l.course, l.rubric, case_labs, gpu.present, grade_options(a), progress);
  const fs::path out = a.out;
  // The cases graded side by side (--gpus), then those that must be alone, one at a time.
  std::vector<rg::PlantedExpectation> side_by_side, alone;
  for (const auto& c : runnable) (c.alone ? alone : side_by_side).push_back(c);
  const auto grade_group = [&](const std::vector<rg::PlantedExpectation>& group,
                               const std::vector<std::string>& gpus) {
    rg::PipelineCallbacks callbacks;
    callbacks.options = [&](std::size_t i) {
      const rg::PlantedExpectation& c = group[i];
      // A case holds only the files its bug changes; the rest comes from solutions/.
      return grade_options(
          a, {rg::materialize_case(c, l.course.root / "solutions", out / "submissions"),
              c.graded_labs(),
              out / c.name,
              seed,
              {out},
              c.name});
    };
    callbacks.report = [&](std::size_t i, const rg::GradeReport& report) {
      verdicts.graded(group[i], report, progress);
    };
    callbacks.error = [&](std::size_t i, const std::string& error, bool withheld) {
      verdicts.not_graded(group[i], error, withheld, progress);
    };
    rg::grade_pipeline(group.size(), a.build_ahead, gpus, l.course, l.rubric, gpu, progress,
                       checkers, callbacks);
  };
  grade_group(side_by_side, a.gpus);
  if (!alone.empty())
    grade_group(alone, a.gpus.empty() ? a.gpus : std::vector<std::string>{a.gpus.front()});
  std::string table = fmt::format(
      "planted-bug corpus: {} case(s), seed {}, GPU {}\n\n{:<24} {:<26} {:>8} {:<22} {}\n",
      cases.size(), seed, gpu.present ? gpu.name : "none", "case", "lab", "points", "expected",
      "verdict");
  std::sort(verdicts.lines.begin(), verdicts.lines.end());
  for (const std::string& line : verdicts.lines) table += line + "\n";
  table += fmt::format("\n{} failed, {} checked, {} skipped\n", verdicts.failures, runnable.size(),
                       cases.size() - runnable.size());
  std::fputs(("\n" + table).c_str(), stdout);
  std::error_code ec;
  fs::create_directories(out, ec);
  rg::write_file(out / "planted.txt", table);
  if (verdicts.failures > 0) return rg::kExitBelowPass;
  return gpu.present ? rg::kExitGraded : rg::kExitNoGpu;
}

}  // namespace reduce::grade::cli
