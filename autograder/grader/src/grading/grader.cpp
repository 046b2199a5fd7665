#include <reduce/keyed_hash.hpp>
#include <reduce_grade/base/bench_results.hpp>
#include <reduce_grade/base/parse.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/grader.hpp>
#include <reduce_grade/grading/pipeline.hpp>
#include <reduce_grade/observations/library_check.hpp>
#include <reduce_grade/observations/sanitizer.hpp>
#include <reduce_grade/processes/gpu_share.hpp>
#include <reduce_grade/processes/isolation.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/submission/build.hpp>
#include <reduce_grade/submission/built_lab_check.hpp>
#include <reduce_grade/submission/staging.hpp>

#include "correctness/checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
#include <system_error>

namespace reduce::grade {

std::string grader_version() {
  return REDUCE_GRADE_VERSION;  // project(reduce_course VERSION ...) of the top CMakeLists.txt
}

void Progress::line(const std::string& text) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (start_ < 0) start_ = now_seconds();
  std::fprintf(stdout, "[%7.1fs] %s\n", now_seconds() - start_, inert_text(text).c_str());
  std::fflush(stdout);
}

GpuProbe probe_gpu() {
  GpuProbe probe;
  const auto smi = find_program("nvidia-smi");
  if (!smi) {
    probe.detail = "nvidia-smi not found";
    return probe;
  }
  ProcessSpec spec;
  spec.argv = {smi->string(), "-L"};
  spec.timeout_s = 60;
  spec.output_cap = 1 << 20;
  const ProcessResult r = run_process(spec);
  for (const std::string& line : split_lines(r.output)) {
    if (!starts_with(line, "GPU ")) continue;
    probe.present = true;
    const auto colon = line.find(": ");
    const auto uuid = line.find(" (UUID");
    if (colon != std::string::npos)
      probe.name =
          line.substr(colon + 2, uuid == std::string::npos ? std::string::npos : uuid - colon - 2);
    break;
  }
  if (!probe.present) probe.detail = "nvidia-smi -L lists no GPU (" + r.describe() + ")";
  return probe;
}

namespace {

/// Which of the requested labs the submission holds; \p plans gets every requested lab's plans.
void find_labs(PreparedSubmission& p, const Course& course,
               std::map<std::string, std::vector<OpPlan>>& plans, Progress& progress,
               const std::string& tag) {
  std::error_code ec;
  for (const std::string& lab : p.options.labs) {
    LabFacts f;
    f.lab = lab;
    const CourseLab* cl = course.find(lab);
    if (cl == nullptr) throw ConfigError("unknown lab " + lab);
    plans[lab] = cl->plans;
    f.present = true;
    if (!fs::is_directory(p.tree / lab, ec)) {
      f.present = false;
      f.missing_what = lab + "/ (the lab folder)";
    } else {
      for (const OpPlan& plan : plans[lab]) {
        // Present is whatever the name holds, a link included: staging then says what is
        // wrong with it ("is a symbolic link") instead of calling it missing.
        if (!fs::exists(fs::symlink_status(p.tree / lab / (plan.op + ".cu"), ec))) {
          f.present = false;
          f.missing_what = lab + "/" + plan.op + ".cu";
          break;
        }
      }
    }
    if (!f.present) progress.line(fmt::format("{}{}: missing {}", tag, lab, f.missing_what));
    p.labs.push_back(f);
  }
}

/// The build folder: a fresh temporary one, or --build-dir cleared (clear_build_dir()). Returns
/// what became of an old one, for the progress lines (empty: nothing was there).
std::string prepare_build_dir(PreparedSubmission& p) {
  std::error_code ec;
  if (p.options.build_dir.empty()) {
    p.build_dir = make_temp_dir("reduce-grade-");
    p.temporary_build = true;
    return "";
  }
  p.build_dir = fs::absolute(p.options.build_dir, ec);
  std::string what;
  if (!is_empty_dir(p.build_dir)) {
    if (!fs::is_regular_file(p.build_dir / "CMakeCache.txt", ec) &&
        !fs::is_regular_file(p.build_dir / "course" / "CMakeCache.txt", ec))  // no lab configured
      throw ConfigError("--build-dir " + p.build_dir.string() +
                        " is not empty and not a build folder: refusing to clear it");
    what = clear_build_dir(p.build_dir, p.options.keep_configure);
  }
  fs::create_directories(p.build_dir, ec);
  return what;
}

/// The options of the build of \p p's labs \p present (build_labs(), build_deferred_labs()),
/// confined by p.build_sandbox: each lab built is checked (inspect_built_lab()), its facts kept in
/// p.labs.
BuildOptions lab_build_options(PreparedSubmission& p, const Course& course, const Rubric& rubric,
                               const std::vector<std::string>& present, bool gpu,
                               Progress& progress, const std::string& tag) {
  BuildOptions bo;
  bo.course_root = course.root;
  bo.submission = p.tree;
  bo.build_dir = p.build_dir;
  bo.labs = present;
  for (const std::string& lab : present) bo.plans[lab] = course.plans(lab);
  bo.jobs = p.options.jobs;
  bo.benchmark = gpu;
  bo.hidden = true;
  bo.cmake_args = p.options.cmake_args;
  bo.limits = rubric.limits;
  bo.log_dir = p.options.out / "logs";
  bo.progress = [&progress, tag](const std::string& line) { progress.line(tag + line); };
  bo.sandbox = p.build_sandbox;
  bo.keep_lab = [&p, &rubric, &progress, tag, plans = bo.plans](
                    const std::string& lab, const BuildManifest& built, const std::string& deps) {
    const LibraryCheck check =
        inspect_built_lab(p.build_dir, built, deps, p.tree, lab, plans.at(lab), rubric);
    for (LabFacts& f : p.labs)
      if (f.lab == lab) f.library = check;
    if (!check.forbidden.empty())
      progress.line(fmt::format("{}{}: {}", tag, lab, check.describe()));
    return check.forbidden.empty();
  };
  return bo;
}

/// Each built lab's build facts, from p.build into p.labs.
void keep_build_facts(PreparedSubmission& p) {
  for (LabFacts& f : p.labs) {
    const auto it = p.build.labs.find(f.lab);
    if (f.present && it != p.build.labs.end()) f.build = it->second;
  }
}

/// Step "build" (with "inspect": the library check runs as soon as a lab's library exists, and
/// a lab that uses a library reduction scores nothing, so its tests are not built). Of the
/// course's build, which may still run (start_course_build()), it reads only its folder's name.
/// Where \p defer says so once the labs are configured, their build is left to
/// build_deferred_labs().
void build_labs(PreparedSubmission& p, const Course& course, const Rubric& rubric,
                const std::vector<std::string>& present, bool gpu, const fs::path& course_dir,
                Progress& progress, const std::string& tag, const std::function<bool()>& defer) {
  std::error_code ec;
  std::vector<fs::path> hidden = {fs::absolute(p.options.out, ec), course_dir};
  for (const fs::path& dir : p.options.protected_dirs) hidden.push_back(fs::absolute(dir, ec));
  const Isolation isolation =
      detect_isolation(build_view(course.root, hidden, p.build_dir), "the build");
  p.build_sandbox = isolation.runner_prefix;
  progress.line(tag + "isolation of the build: " + isolation.description);
  BuildOptions bo = lab_build_options(p, course, rubric, present, gpu, progress, tag);
  bo.defer_build = defer;
  p.build = build_submission(bo);
  p.build.isolation = isolation.description;
  if (!p.build.configured) p.messages.push_back(clip(p.build.configure_problem, 15, 3000));
  if (p.build.deferred.empty())
    progress.line(fmt::format("{}build finished in {:.1f} s", tag, p.build.seconds));
  else  // the libraries' folders now: the lab's process sees only folders there at isolate()
    for (const fs::path& lib : {p.build_dir / "lib", p.build_dir / "submission" / "lib"})
      fs::create_directories(lib, ec);
  keep_build_facts(p);
}

/// Step "course build" where the grading builds the course's binaries (in \p dir): on a thread of
/// its own, beside the labs' build, which never reads them; a progress line tells when it ended.
/// Both get every job: the labs' build is small, and ends well inside the course's.
std::future<CourseBuild> start_course_build(const fs::path& dir, const Course& course,
                                            const Rubric& rubric, const GradeOptions& options,
                                            const std::vector<std::string>& present,
                                            const std::map<std::string, std::vector<OpPlan>>& plans,
                                            Progress& progress, const std::string& tag) {
  std::vector<OpPlan> all;
  for (const std::string& lab : present)
    for (const OpPlan& plan : plans.at(lab)) all.push_back(plan);
  CourseBuildOptions co = course_build_options(
      course, rubric, all, dir, options, options.out / "logs", true,
      [&progress, tag](const std::string& line) { progress.line(tag + line); });
  add_references(co, course, rubric, present);
  return std::async(std::launch::async, [co = std::move(co), &progress, tag] {
    CourseBuild built = build_course(co);
    progress.line(fmt::format("{}course's binaries {} in {:.1f} s", tag,
                              built.ok ? "built" : "failed to build", built.seconds));
    return built;
  });
}

}  // namespace

PreparedSubmission prepare_submission(const Course& course, const Rubric& rubric,
                                      const GradeOptions& options, const GpuProbe& gpu,
                                      Progress& progress) {
  PreparedSubmission p;
  p.options = options;
  p.started = now_seconds();
  p.started_at = utc_timestamp();
  p.seed = options.seed.value_or(random_seed());
  const std::string tag = options.label.empty() ? "" : options.label + ": ";
  std::error_code ec;
  refuse_linked_submission(options.submission);  // before anything resolves the link
  const fs::path submission = fs::weakly_canonical(fs::absolute(options.submission, ec), ec);
  if (!fs::is_directory(submission, ec))
    throw ConfigError("submission folder not found: " + options.submission.string());
  p.tree = resolve_submission_tree(course, submission);
  if (p.tree != submission) {
    // Named as the reports name the submission (--submission-name), not by a temporary copy.
    const fs::path shown =
        options.submission_name.empty() ? submission : fs::path(options.submission_name);
    p.messages.push_back("graded the lab folders in " +
                         (shown / p.tree.lexically_relative(submission)).string());
  }
  fs::create_directories(options.out, ec);
  if (!fs::is_directory(options.out, ec))
    throw ConfigError("cannot create the report folder " + options.out.string());
  fs::create_directories(options.out / "logs", ec);

  std::map<std::string, std::vector<OpPlan>> plans;
  find_labs(p, course, plans, progress, tag);
  std::vector<std::string> present;
  for (const LabFacts& f : p.labs)
    if (f.present) present.push_back(f.lab);
  if (const std::string kept = prepare_build_dir(p); !kept.empty())
    progress.line(tag + "build folder " + p.build_dir.string() + ": " + kept);
  const bool runs = gpu.present && !options.no_gpu;
  std::future<CourseBuild> building;  // the course's binaries, where built here
  if (options.course_build) {
    p.course = options.course_build;
  } else if (!runs || present.empty()) {
    // Nothing will run: the course's binaries are not needed.
    CourseBuild none;
    none.dir = p.build_dir / "course";
    none.ok = true;
    p.course = std::make_shared<const CourseBuild>(none);
  } else {
    // Made first: the sandbox of the labs' build hides only a folder that exists.
    fs::create_directories(p.build_dir / "course", ec);
    building = start_course_build(p.build_dir / "course", course, rubric, options, present, plans,
                                  progress, tag);
  }
  if (p.course && !p.course->ok) throw ConfigError(p.course->problem);
  // Should the labs' build throw, the future's destructor waits for the course's build.
  // One submission, the course built: the labs build in finish_submission(), where each lab's
  // tests start once it is linked and checked. A course still building is the longer build.
  const bool beside = runs && options.tests_beside_build && present.size() > 1;
  const auto defer = [&building, beside] {
    return beside && (!building.valid() ||
                      building.wait_for(std::chrono::seconds(2)) == std::future_status::ready);
  };
  if (!present.empty())
    build_labs(p, course, rubric, present, runs, p.course ? p.course->dir : p.build_dir / "course",
               progress, tag, defer);
  if (building.valid()) {
    p.course = std::make_shared<const CourseBuild>(building.get());  // rethrows what it threw
    if (!p.course->ok) throw ConfigError(p.course->problem);
  }
  if (!present.empty()) {
    p.build.benchmark_ok = p.course->benchmark_ok;
    p.build.benchmark_problem = p.course->benchmark_ok ? "" : "not built";
  }
  return p;
}

namespace {

/// What the steps of finish_submission() share.
struct GradeRun {
  PreparedSubmission& p;
  const Course& course;
  const Rubric& rubric;
  Progress& progress;
  std::string tag;   ///< "<label>: " in front of every progress line
  bool gpu = false;  ///< tests and benchmarks run (a GPU answered and --no-gpu is off)
  GradeReport report;
  double deferred_build_s = 0;  ///< build_deferred_labs()'s seconds, which are the build's
};

/// The report's header: what is graded, with what, when.
void start_report(GradeRun& g, const GpuProbe& gpu_probe) {
  const GradeOptions& o = g.p.options;
  GradeReport& r = g.report;
  r.grader_version = grader_version();
  r.submission = o.submission_name.empty() ? g.p.tree.string() : o.submission_name;
  r.course_root = g.course.root.string();
  r.rubric = g.rubric.source.string();
  r.seed = g.p.seed;
  r.started_at = g.p.started_at;
  r.labs_requested = o.labs;
  r.messages = g.p.messages;
  r.build_isolation = g.p.build.isolation;
  g.gpu = gpu_probe.present && !o.no_gpu;
  r.gpu = g.gpu ? gpu_probe.name : "";
  r.cuda_device = g.gpu ? o.cuda_device : "";
  r.cpus = g.gpu ? o.cpus : "";
  r.timing_lock = g.rubric.limits.host_wide_timing_lock ? "host" : "gpu";
  // The checkers are the course's: they must be the files built (a submission graded before
  // this one could have written them).
  if (g.gpu) {
    if (const std::string changed = g.p.course->changes(); !changed.empty())
      throw ConfigError("the course's binaries changed after they were built (" + changed +
                        "): nothing was graded; grade again with a fresh course build");
  }
}

/// Step "isolate": the lab's process (runner) sees none of the course but what it needs to run,
/// and no report.
Isolation isolate(GradeRun& g) {
  const GradeOptions& o = g.p.options;
  std::error_code ec;
  fs::create_directories(o.out / "logs", ec);
  std::vector<fs::path> guarded = {g.course.root, fs::absolute(o.out, ec), g.p.build_dir,
                                   g.p.course->dir};
  for (const fs::path& dir : o.protected_dirs) guarded.push_back(fs::absolute(dir, ec));
  const fs::path& runner = g.p.course->manifest.runner;
  // No writable folder but a private /tmp: every log and verdict is written by course code
  // outside the sandbox (a sanitizer's report through a pipe, sanitizer.cpp).
  Isolation isolation =
      g.gpu ? detect_isolation(runner_view(guarded,
                                           {runner, g.p.course->dir / "lib", g.p.build_dir / "lib",
                                            g.p.build_dir / "submission" / "lib"},
                                           {}),
                               "the lab's process")
            : Isolation{false, "not needed: no lab code ran", {}};
  if (g.gpu) isolation.description += "; walls: " + probe_walls(isolation, runner);
  g.report.isolation = isolation.description;
  g.progress.line(g.tag + "isolation of the lab's process: " + isolation.description);
  return isolation;
}

/// The rubric of the correctness phase: its limits.parallel_checks and sanitizer_checkers as
/// many as the GPU's memory holds (checkers_for_memory()), in the report and on the terminal.
Rubric checking_rubric(GradeRun& g) {
  Rubric checking = g.rubric;
  Limits& l = checking.limits;
  const CheckerCounts asked{l.parallel_checks, l.sanitizer_checkers};
  const std::optional<std::uint64_t> memory =
      usable_gpu_memory(gpu_total_memory(g.p.options.cuda_device), l.gpu_memory_gib);
  const CheckerCounts used = checkers_for_memory(memory, asked);
  l.parallel_checks = g.report.parallel_checks = used.parallel_checks;
  l.sanitizer_checkers = g.report.sanitizer_checkers = used.sanitizer_checkers;
  g.progress.line(g.tag + "tests and sanitizer: " + checkers_text(memory, asked, used) +
                  (l.gpu_memory_gib > 0 ? ", as limits.gpu_memory_gib allows" : ""));
  return checking;
}

/// The labs that may run: present, built, with no forbidden finding, and a GPU to run on.
std::vector<std::size_t> runnable_labs(const GradeRun& g) {
  std::vector<std::size_t> runnable;
  for (std::size_t i = 0; i < g.p.labs.size(); ++i) {
    const LabFacts& f = g.p.labs[i];
    if (g.gpu && f.present && f.build.ok && f.library.forbidden.empty()) runnable.push_back(i);
  }
  return runnable;
}

/// Step "build" where build_labs() left it (GradeOptions::tests_beside_build): each lab is checked
/// as soon as ninja has linked it and told to \p lab_checked (BuildOptions::lab_checked).
void build_deferred_labs(GradeRun& g,
                         const std::function<void(const std::string&, bool)>& lab_checked) {
  std::vector<std::string> present;
  for (const LabFacts& f : g.p.labs)
    if (f.present) present.push_back(f.lab);
  BuildOptions bo = lab_build_options(g.p, g.course, g.rubric, present, g.gpu, g.progress, g.tag);
  bo.lab_checked = lab_checked;
  const double started = now_seconds();
  build_later_labs(bo, g.p.build);
  g.deferred_build_s = now_seconds() - started;
  g.progress.line(fmt::format("{}build finished in {:.1f} s", g.tag, g.p.build.seconds));
  keep_build_facts(g.p);
}

/// Steps "test", "hidden" and "sanitize", several processes at once (they share the GPU; none of
/// them is timed). Returns the labs that ran; none when CUDA turned out to be missing.
std::vector<std::size_t> check_runnable_labs(GradeRun& g, const Isolation& isolation) {
  const GradeOptions& o = g.p.options;
  const launch::LaunchSpec told =
      tests_launch(g.p.seed, isolation.runner_prefix, o.cuda_device, g.rubric.limits);
  std::vector<std::pair<std::string, std::string>> env;
  if (!o.cuda_device.empty()) env.emplace_back("CUDA_VISIBLE_DEVICES", o.cuda_device);
  const fs::path sanitizer = g.gpu ? find_compute_sanitizer() : fs::path();
  for (LabFacts& f : g.p.labs) f.gpu = g.gpu;
  std::vector<std::size_t> runnable = runnable_labs(g);
  const bool deferred = !g.p.build.deferred.empty();
  // Fitted to the GPU only where checkers run: a report without them says 0.
  const Rubric checking = g.gpu && (!runnable.empty() || deferred) ? checking_rubric(g) : g.rubric;
  const LabRunContext context{g.p,  g.course,       checking, env,        sanitizer,
                              told, o.out / "logs", g.tag,    g.progress, g.report.processes};
  TimingLock& timing = timing_lock(o.cuda_device, g.rubric.limits.host_wide_timing_lock);
  // Where the labs are still to build, their checkers make their CUDA contexts during that build
  // and test each lab as soon as it is built and checked.
  HeldChecks held;
  if (deferred) {
    const std::vector<std::string>& later = g.p.build.deferred;
    std::vector<std::size_t> labs;
    for (std::size_t i = 0; i < g.p.labs.size(); ++i)
      if (std::find(later.begin(), later.end(), g.p.labs[i].lab) != later.end()) labs.push_back(i);
    start_held_checkers(g.p, labs, context, timing, g.rubric.limits.build_timeout_s + 60, held);
    build_deferred_labs(g, [&](const std::string& lab, bool passed) {
      held.release(lab, passed);
      if (passed) g.progress.line(g.tag + lab + ": built and checked; its tests start");
    });
    runnable = runnable_labs(g);
  }
  bool cuda_missing = false;
  {
    const std::shared_lock<TimingLock> sharing(timing);
    cuda_missing = !check_labs(g.p, runnable, context, &held);
  }
  const std::unique_lock<TimingLock> alone(timing);
  if (cuda_missing) {
    // nvidia-smi saw a GPU but CUDA does not: grade as without a GPU.
    g.gpu = false;
    for (LabFacts& f : g.p.labs) {
      f.tests.clear();
      f.hidden.clear();
      f.sanitizer.clear();
      f.hidden_step = {};
      f.sanitizer_step = {};
    }
    g.report.messages.push_back(
        "the test binaries report \"no CUDA device\" although nvidia-smi "
        "lists a GPU: graded as without a GPU");
    return {};
  }
  if (g.rubric.limits.parallel_labs > 1 && runnable.size() > 1) {
    // A test that skipped itself (too little free device memory for 2^31 elements, say) may
    // only have met the other labs' tests: it runs again with the GPU to itself.
    for (std::size_t i : runnable) rerun_skipped_suites(g.p.labs[i], context);
  }
  return runnable;
}

/// The labs of \p runnable that earn a benchmark; the others get the reason in perf_step.
std::vector<BenchTarget> bench_targets(GradeRun& g, const std::vector<std::size_t>& runnable) {
  std::vector<BenchTarget> targets;
  for (std::size_t i : runnable) {
    LabFacts& f = g.p.labs[i];
    const std::vector<OpPlan>& plans = g.course.plans(f.lab);
    const LabState state = assess(f);
    if (std::none_of(plans.begin(), plans.end(),
                     [](const OpPlan& pl) { return !pl.bench_op.empty(); })) {
      f.perf_step = StepOutcome::not_applicable("no benchmark for this lab's operations");
    } else if (state.hung) {
      f.perf_step = StepOutcome::skipped(state.hung_why);
    } else if (state.tests_failed) {
      f.perf_step = StepOutcome::skipped("the lab fails tests, so the benchmark was not run");
    } else if (!g.p.build.benchmark_ok) {
      f.perf_step = StepOutcome::skipped("the benchmark did not build (a grading problem): " +
                                         g.p.build.benchmark_problem);
    } else {
      targets.push_back({f.lab, plans});
    }
  }
  return targets;
}

/// The facts of a lab benchmarked again alone (\p again) after a shared run that never reached
/// its row (\p first): the findings of both runs add up, none replaces another.
PerfFacts after_rerun(const PerfFacts& first, PerfFacts again) {
  again.wrong_results += first.wrong_results;
  again.clocks_disagree = again.clocks_disagree || first.clocks_disagree;
  again.lab_text = first.lab_text + (first.lab_text.empty() ? "" : "\n") + again.lab_text;
  return again;
}

/// Step "benchmark": one process for every lab that passed its tests, alone on the GPU, from
/// the grading's benchmark key; a lab whose row that process never reached (it died in another
/// lab's code) again, alone, from a key of its own (fresh inputs), its findings added to the
/// first run's.
void benchmark_labs(GradeRun& g, const std::vector<std::size_t>& runnable,
                    const Isolation& isolation) {
  const std::vector<BenchTarget> targets = bench_targets(g, runnable);
  if (targets.empty()) return;
  const GradeOptions& o = g.p.options;
  const std::unique_lock<TimingLock> alone(
      timing_lock(o.cuda_device, g.rubric.limits.host_wide_timing_lock));
  g.progress.line(fmt::format("{}benchmark of {} lab(s) at n = {}", g.tag, targets.size(),
                              g.rubric.performance.size));
  std::map<std::string, PerfFacts> perf = run_benchmarks(
      g.p.course->manifest, g.p.build.manifest, targets, g.rubric, benchmark_key(g.p.seed, 0),
      o.out / "logs" / "benchmark", isolation, o.cuda_device, &g.report.processes);
  for (const BenchTarget& target : targets) {
    LabFacts& f = *std::find_if(g.p.labs.begin(), g.p.labs.end(),
                                [&](const LabFacts& l) { return l.lab == target.lab; });
    f.perf = perf[target.lab];
    // The first evidence stands: only a lab that the shared run never reached runs again.
    if (f.perf.unattributed && targets.size() > 1) {
      g.progress.line(fmt::format("{}{}: benchmark again, alone, on fresh inputs", g.tag, f.lab));
      f.perf = after_rerun(
          f.perf, run_benchmark(g.p.course->manifest, g.p.build.manifest, f.lab, target.plans,
                                g.rubric, benchmark_key(g.p.seed, 1), o.out / "logs" / f.lab,
                                isolation, o.cuda_device, &g.report.processes));
    }
    if (f.perf.ran) {
      const LabRubric* lr = g.rubric.find(f.lab);
      const bool reference = f.perf.timed_measure();
      g.progress.line(fmt::format("{}{}: {} GB/s = {} of {} {} GB/s (threshold {}){}", g.tag, f.lab,
                                  fixed(f.perf.gbps, 1), fraction_text(f.perf.fraction),
                                  f.perf.measure_words(), fixed(f.perf.measure_gbps(), 1),
                                  lr ? fraction_text(lr->threshold_for(reference)) : "-",
                                  target.plans.size() > 1 ? "; " + f.perf.detail : ""));
    } else {
      g.progress.line(
          fmt::format("{}{}: benchmark: {}", g.tag, f.lab, clip(f.perf.problem, 1, 200)));
    }
    if (g.report.ceiling_gbps <= 0 && f.perf.ran) g.report.ceiling_gbps = f.perf.ceiling_gbps;
  }
}

/// Nothing the submission started may outlive its grading, or touch the reports; a grade whose
/// checkers changed under it is withheld.
void end_submission_processes(GradeRun& g) {
  if (const int strays = kill_stray_processes(); strays > 0) {
    g.report.messages.push_back(fmt::format(
        "{} process(es) the submission left running were killed before the reports were "
        "written",
        strays));
    g.progress.line(g.tag + g.report.messages.back());
  }
  if (g.gpu) {
    if (const std::string changed = g.p.course->changes(); !changed.empty())
      throw SubmissionVoid("the course's binaries changed while this submission's code ran (" +
                           changed + "): no grade can be trusted, so none is given");
  }
}

/// Adds the checker processes of the labs' correctness steps, and the lab processes they
/// started, to \p counts.
void count_check_processes(const std::vector<LabFacts>& labs, ProcessCounts& counts) {
  for (const LabFacts& f : labs) {
    for (const std::vector<SuiteRun>* runs : {&f.tests, &f.hidden})
      for (const SuiteRun& run : *runs) {
        counts.checkers += run.checker_contexts;
        counts.lab_processes += run.lab_process_starts;
      }
    for (const SanitizerRun& run : f.sanitizer) {
      counts.checkers += run.checker_contexts;
      counts.lab_processes += run.lab_process_starts;
    }
  }
}

/// Step "score": every lab's points from its facts and its rubric entry.
void score_labs(GradeRun& g, const GpuProbe& gpu_probe) {
  const GradeOptions& o = g.p.options;
  GradeReport& r = g.report;
  r.gpu_available = g.gpu;
  count_check_processes(g.p.labs, r.processes);
  if (g.gpu) {
    const ProcessCounts& n = r.processes;
    g.progress.line(fmt::format(
        "{}{} CUDA contexts: {} checkers with {} lab processes, {} benchmark with {} lab processes",
        g.tag, n.contexts(), n.checkers, n.lab_processes, n.benchmarks, n.benchmark_lab_processes));
  }
  if (!g.gpu) {
    r.gpu.clear();
    r.messages.push_back(
        "no GPU (" +
        (o.no_gpu                   ? std::string("--no-gpu")
         : gpu_probe.detail.empty() ? "no CUDA device"
                                    : gpu_probe.detail) +
        "): correctness and timing need a GPU. The labs were built and given build points only; "
        "tests, sanitizer and benchmark were not run (exit code 3).");
  }
  for (LabFacts& f : g.p.labs) {
    f.gpu = g.gpu;
    LabReport lab;
    lab.facts = f;
    const LabRubric* lr = g.rubric.find(f.lab);
    LabRubric fallback;
    fallback.lab = f.lab;
    fallback.points = g.rubric.default_points;
    if (lr == nullptr) {
      r.messages.push_back("lab " + f.lab + " has no rubric entry: default points, no threshold");
      lr = &fallback;
    }
    // The threshold and floor of the measure the lab was judged by.
    const bool reference = f.perf.ran ? f.perf.timed_measure() : lr->timed_measure();
    lab.threshold = lr->threshold_for(reference);
    lab.floor = lr->floor_for(reference);
    lab.score = score_lab(f, *lr, g.rubric);
    r.labs.push_back(std::move(lab));
  }
  r.total();
  r.pass_mark = o.pass_mark.value_or(g.rubric.pass_mark);
  if (!g.p.build.configured && !g.p.build.configure_problem.empty() &&
      g.p.build.configure_problem != "no labs to build") {
    r.exit_code = kExitUsage;
  } else if (!g.gpu) {
    r.exit_code = kExitNoGpu;
  } else {
    const double percent = r.max_score > 0 ? 100.0 * r.score / r.max_score : 0;
    r.exit_code = percent + 1e-9 >= r.pass_mark ? kExitGraded : kExitBelowPass;
  }
}

/// Step "report": the report files, the terminal summary, and the build folder's clean-up.
void write_submission_reports(GradeRun& g) {
  const GradeOptions& o = g.p.options;
  GradeReport& r = g.report;
  r.reproduce = fmt::format("reduce-grade grade {} --labs {} --seed {}", shell_quote(r.submission),
                            join(o.labs, ","), g.p.seed);
  r.seconds = now_seconds() - g.p.started;
  try {
    write_reports(r, o.out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reduce-grade: cannot write the reports: %s\n", e.what());
    r.exit_code = kExitUsage;
  }
  if (o.print_summary) {
    std::fputs(("\n" + summary_text(r, o.verbose)).c_str(), stdout);
    std::fflush(stdout);
  }
  if (g.p.temporary_build && !o.keep_build) {
    remove_all_quietly(g.p.build_dir);
  } else if (!g.p.build_dir.empty()) {
    g.progress.line(g.tag + "build folder kept: " + g.p.build_dir.string());
  }
}

}  // namespace

GradeReport finish_submission(PreparedSubmission& p, const Course& course, const Rubric& rubric,
                              const GpuProbe& gpu_probe, Progress& progress) {
  inject_test_fault(p.options);
  const std::string tag = p.options.label.empty() ? "" : p.options.label + ": ";
  GradeRun g{p, course, rubric, progress, tag, false, {}, 0};
  const double graded_from = now_seconds();
  start_report(g, gpu_probe);
  const Isolation isolation = isolate(g);
  const std::vector<std::size_t> runnable = check_runnable_labs(g, isolation);
  benchmark_labs(g, runnable, isolation);
  end_submission_processes(g);
  score_labs(g, gpu_probe);
  g.report.build_seconds = p.build.seconds;
  g.report.graded_seconds = now_seconds() - graded_from - g.deferred_build_s;
  write_submission_reports(g);
  return g.report;
}

GradeReport grade_submission(const Course& course, const Rubric& rubric,
                             const GradeOptions& options, Progress& progress) {
  const GpuProbe gpu = options.no_gpu ? GpuProbe{false, "", "--no-gpu"} : probe_gpu();
  GradeOptions alone = options;
  alone.tests_beside_build = true;  // one submission: nothing else uses the GPU while it builds
  PreparedSubmission prepared = prepare_submission(course, rubric, alone, gpu, progress);
  return finish_submission(prepared, course, rubric, gpu, progress);
}

}  // namespace reduce::grade
