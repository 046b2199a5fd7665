#include <reduce_grade/bench_results.hpp>
#include <reduce_grade/build.hpp>
#include <reduce_grade/grader.hpp>
#include <reduce_grade/isolation.hpp>
#include <reduce_grade/library_check.hpp>
#include <reduce_grade/parse.hpp>
#include <reduce_grade/pipeline.hpp>
#include <reduce_grade/process.hpp>
#include <reduce_grade/sanitizer.hpp>
#include <reduce_grade/staging.hpp>
#include <reduce_grade/util.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>

namespace reduce::grade {
namespace {

std::string suite_line(const SuiteRun& run, bool with_time = true) {
  std::string text = fmt::format("{}/{} passed", run.passed(), run.counted());
  if (run.skipped() > 0) text += fmt::format(", {} skipped", run.skipped());
  if (run.timed_out) text += ", TIMED OUT";
  if (run.output_flood) text += ", OUTPUT FLOOD";
  if (run.crashed) text += ", crashed";
  if (run.attempts > 1) text += fmt::format(", {} runs", run.attempts);
  return with_time ? text + fmt::format(" ({:.1f} s)", run.seconds) : text;
}

bool all_skipped_no_gpu(const std::vector<SuiteRun>& runs) {
  if (runs.empty()) return false;
  for (const SuiteRun& r : runs)
    if (!r.no_gpu || r.passed() > 0 || r.failed() > 0) return false;
  return true;
}

/// Whether a lab's suites hung and whether any test failed, from the suites run so far.
struct LabState {
  bool hung = false;          ///< a suite timed out or flooded its output
  std::string hung_why;       ///< which, for the report
  bool tests_failed = false;  ///< a public or hidden test failed, or a suite counted none
};

/// The CUDA toolkit folders a lab's compile may read: those of the build's nvcc, and the usual
/// /usr/local/cuda ones.
std::vector<fs::path> toolkit_include_roots(const BuildManifest& built) {
  std::vector<fs::path> roots = DependencyPolicy{}.toolkit_roots;
  if (built.cuda_compiler.empty()) return roots;
  std::error_code ec;
  const fs::path toolkit =
      fs::weakly_canonical(built.cuda_compiler, ec).parent_path().parent_path();
  roots.push_back(toolkit / "include");
  for (const auto& target : fs::directory_iterator(toolkit / "targets", ec))
    roots.push_back(target.path() / "include");
  return roots;
}

/// The host compilers' own folders, where one is not installed under /usr (e.g. /opt/gcc):
/// `<prefix>/include`, `<prefix>/lib/gcc` and `<prefix>/lib64/gcc`.
std::vector<fs::path> compiler_system_roots(const BuildManifest& built) {
  std::vector<fs::path> roots = DependencyPolicy{}.system_roots;
  for (const fs::path& compiler : built.host_compilers) {
    std::error_code ec;
    const fs::path prefix = fs::weakly_canonical(compiler, ec).parent_path().parent_path();
    if (prefix.empty() || prefix == "/" || prefix == "/usr/local") continue;
    for (const fs::path& sub : {fs::path("include"), fs::path("lib/gcc"), fs::path("lib64/gcc")})
      roots.push_back(prefix / sub);
  }
  return roots;
}

/// Everything the grader checks about a built lab before running any of its code: library
/// reductions in the library and the sources, the files each compile read (the depfile: only
/// the staged lab folder, the contract headers, the toolkit less CUB and Thrust, the system's
/// headers), and the library's imports, exports and raw system calls. A part that could not be
/// checked is a finding too ("unchecked"): a lab is run only once all of it was.
LibraryCheck inspect_built_lab(const fs::path& build_dir, const BuildManifest& built,
                               const fs::path& tree, const std::string& lab,
                               const std::vector<OpPlan>& plans, const Rubric& rubric) {
  LibraryCheck check;
  check.inspected = true;
  const auto add = [&check](std::vector<LibraryFinding> found) {
    for (LibraryFinding& f : found) check.forbidden.push_back(std::move(f));
  };
  DependencyPolicy deps;
  deps.lab_dir = staging_tree(build_dir) / lab;
  deps.base_dir = build_dir;
  deps.toolkit_roots = toolkit_include_roots(built);
  deps.system_roots = compiler_system_roots(built);
  deps.contract_headers = built.contract_header_paths();
  const LibraryRules rules = rubric.library.for_lab(rubric.find(lab));
  deps.primitives_allowed = rules.primitives_allowed;
  for (const OpPlan& plan : plans) {
    const fs::path library = built.library(lab, plan.op);
    const LibraryCheck reductions = inspect_library(library, rules);
    check.stub = check.stub || reductions.stub;
    if (!reductions.problem.empty()) check.problem = reductions.problem;
    add(reductions.forbidden);
    const LibraryCheck symbols = inspect_symbols(library, contract_exports({plan}));
    if (!symbols.inspected)
      add({{"unchecked", "the grader could not inspect " + library.filename().string() + " (" +
                             symbols.problem + "): a grading problem, not yours"}});
    add(symbols.forbidden);
    const std::string depfile = lab_dependencies(build_dir, lab, plan.op);
    if (depfile.empty())
      add({{"unchecked", "the grader found no record of what " + plan.op +
                             ".cu's compile read (ninja's deps log): a grading problem, not "
                             "yours"}});
    add(check_dependencies(depfile, deps));
  }
  add(scan_sources(tree / lab, rules));
  return check;
}

}  // namespace

CourseBuildOptions course_build_options(const Course& course, const Rubric& rubric,
                                        const std::vector<OpPlan>& plans, const fs::path& build_dir,
                                        const GradeOptions& options, const fs::path& log_dir,
                                        bool benchmark,
                                        std::function<void(const std::string&)> progress) {
  CourseBuildOptions co;
  co.course_root = course.root;
  co.build_dir = build_dir;
  co.plans = plans;
  co.jobs = options.jobs;
  co.benchmark = benchmark;
  co.hidden = true;
  co.cmake_args = options.cmake_args;
  co.limits = rubric.limits;
  co.log_dir = log_dir;
  co.progress = std::move(progress);
  return co;
}

namespace {

LabState assess(const LabFacts& f) {
  LabState s;
  for (const std::vector<SuiteRun>* runs : {&f.tests, &f.hidden}) {
    const bool hidden = runs == &f.hidden;
    for (const SuiteRun& r : *runs) {
      if (r.timed_out || r.output_flood) {
        s.hung = true;
        if (s.hung_why.empty())
          s.hung_why = fmt::format("the {} tests {}", hidden ? "hidden" : "public",
                                   r.timed_out ? "timed out" : "flooded their output");
      }
      s.tests_failed = s.tests_failed || r.failed() > 0 || r.counted() == 0;
    }
  }
  return s;
}

/// What every lab's correctness runs share.
struct LabRunContext {
  const PreparedSubmission& p;
  const Course& course;
  const Rubric& rubric;
  const std::vector<std::pair<std::string, std::string>>& env;
  const fs::path& sanitizer;                ///< compute-sanitizer (empty: not found)
  const std::vector<std::string>& sandbox;  ///< the runner's sandbox command (empty: none)
  fs::path logs;                            ///< <out>/logs
  const std::string& tag;
  Progress& progress;
  ProcessCounts& counts;  ///< the processes of checkers whose runs no lab keeps
};

std::vector<OpPlan> lab_plans(const LabRunContext& c, const std::string& lab) {
  const CourseLab* cl = c.course.find(lab);
  return cl != nullptr ? plan_ops(c.course, *cl) : std::vector<OpPlan>{};
}

/// The checker's arguments that name the lab under test (the checker starts its runner).
std::vector<std::string> lab_args(const LabRunContext& c, const std::string& lab,
                                  const OpPlan& plan) {
  const CourseLab* cl = c.course.find(lab);
  return {"--lab=" + c.p.build.manifest.library(lab, plan.op).string(),
          "--lab-order=" + (cl != nullptr ? cl->order : std::string("tree")), "--lab-name=" + lab};
}

SuiteOptions suite_options(const LabRunContext& c, const std::string& lab, const OpPlan& plan,
                           bool hidden) {
  const Limits& limits = c.rubric.limits;
  SuiteOptions so;
  so.binary = c.p.course->manifest.checker(plan.op, hidden);
  so.args = lab_args(c, lab, plan);
  so.env = c.env;
  so.timeout_s = hidden ? limits.hidden_timeout_s : limits.test_timeout_s;
  so.output_cap = limits.output_cap_bytes;
  so.max_restarts = limits.max_restarts;
  so.log_dir = c.logs / lab;
  so.log_stem = plan.op + (hidden ? "_hidden" : "_tests");
  return so;
}

/// The public and hidden suites of \p plan in one checker process (its graded checker).
SuiteOptions graded_suite_options(const LabRunContext& c, const std::string& lab,
                                  const OpPlan& plan) {
  SuiteOptions so = suite_options(c, lab, plan, false);
  so.binary = c.p.course->manifest.graded_checker(plan.op);
  // The larger limit, not the sum: the hidden suites add seconds to a run, and a lab that hangs
  // would otherwise hold its slot for both limits.
  so.timeout_s = std::max(c.rubric.limits.test_timeout_s, c.rubric.limits.hidden_timeout_s);
  so.log_stem = plan.op + "_graded";
  return so;
}

/// One process of the tests' phase: a public or hidden suite of one of a lab's operations, or
/// both at once (kGraded: one CUDA context and one runner start fewer). Its result goes to
/// LabFacts::tests or hidden at \p slot (kGraded: hidden at \p hidden_slot), so the lists keep
/// the plans' order however the steps finish. (compute-sanitizer runs after every lab's tests,
/// one checker per operation: sanitize_labs().)
struct CheckStep {
  enum class Kind { kPublic, kHidden, kGraded };
  Kind kind = Kind::kPublic;
  std::size_t lab = 0;  ///< index into PreparedSubmission::labs
  OpPlan plan;
  std::size_t slot = 0;
  std::size_t hidden_slot = 0;  ///< kGraded: where its hidden part goes in LabFacts::hidden

  /// Runs the public tests (whose results decide whether the lab hung or has a GPU at all).
  bool is_public() const { return kind == Kind::kPublic || kind == Kind::kGraded; }
};

/// True when \p plan's public and hidden suites run in one process.
bool graded_together(const LabRunContext& c, const OpPlan& plan) {
  return plan.public_tests && plan.hidden_tests &&
         !c.p.course->manifest.graded_checker(plan.op).empty();
}

/// The first steps of a lab: its public suites (with its hidden ones where the course built
/// them into one checker).
std::vector<CheckStep> public_steps(std::size_t index, LabFacts& f, const LabRunContext& c) {
  std::error_code ec;
  fs::create_directories(c.logs / f.lab, ec);
  std::vector<CheckStep> steps;
  std::size_t hidden_slot = 0;
  for (const OpPlan& plan : lab_plans(c, f.lab)) {
    if (plan.public_tests) {
      CheckStep step{CheckStep::Kind::kPublic, index, plan, steps.size()};
      if (graded_together(c, plan)) {
        step.kind = CheckStep::Kind::kGraded;
        step.hidden_slot = hidden_slot;
      }
      steps.push_back(step);
    }
    if (plan.hidden_tests) ++hidden_slot;
  }
  f.tests.resize(steps.size());  // f.hidden: sized by other_steps, queued before any step runs
  if (steps.empty())
    f.tests_step = StepOutcome::not_applicable(
        "the course has no public test suite for this lab's operations");
  return steps;
}

/// A lab's other steps, queued with its public suites: its hidden suites and compute-sanitizer,
/// one step per tool and tested operation.
std::vector<CheckStep> other_steps(std::size_t index, LabFacts& f, const LabRunContext& c) {
  const std::vector<OpPlan> plans = lab_plans(c, f.lab);
  std::vector<CheckStep> steps;
  f.hidden_exists =
      std::any_of(plans.begin(), plans.end(), [](const OpPlan& pl) { return pl.hidden_tests; });
  std::size_t slot = 0;
  for (const OpPlan& plan : plans) {
    if (!plan.hidden_tests) continue;
    if (!graded_together(c, plan)) steps.push_back({CheckStep::Kind::kHidden, index, plan, slot});
    ++slot;
  }
  f.hidden.resize(slot);
  if (c.sanitizer.empty()) {
    f.sanitizer_step = StepOutcome::skipped(
        "compute-sanitizer not found on the grading machine (a grading problem)");
    return steps;
  }
  // Sized here, filled by sanitize_labs() once every lab's tests are done.
  const std::size_t sanitized = static_cast<std::size_t>(
      std::count_if(plans.begin(), plans.end(), [](const OpPlan& pl) { return pl.public_tests; }));
  f.sanitizer.resize(sanitized * c.rubric.sanitizer.tools.size());
  return steps;
}

/// A lab whose public suites hung gets no hidden or sanitizer result: the same code would hang
/// there too, and a lab that hangs is not graded on what it did before.
void drop_after_hang(LabFacts& f) {
  const LabState state = assess(f);
  if (!state.hung) return;
  if (f.hidden_exists)
    f.hidden_step = StepOutcome::skipped(state.hung_why + "; the hidden tests were not run");
  f.hidden.clear();
  f.sanitizer_step = StepOutcome::skipped(state.hung_why);
  f.sanitizer.clear();
}

/// Runs one step and stores its result in \p f.
void run_step(const CheckStep& step, LabFacts& f, const LabRunContext& c) {
  if (step.kind == CheckStep::Kind::kGraded) {
    c.progress.line(fmt::format("{}{}: public and hidden tests ({})", c.tag, f.lab, step.plan.op));
    SuiteRun run = run_gtest_suite(graded_suite_options(c, f.lab, step.plan));
    run.op = step.plan.op;
    auto [pub, hidden] = split_hidden(run);
    c.progress.line(fmt::format("{}{}: public tests {}; hidden tests {}", c.tag, f.lab,
                                suite_line(pub, false), suite_line(hidden)));
    f.tests[step.slot] = std::move(pub);
    f.hidden[step.hidden_slot] = std::move(hidden);
    return;
  }
  const bool hidden = step.kind == CheckStep::Kind::kHidden;
  const char* which = hidden ? "hidden" : "public";
  c.progress.line(fmt::format("{}{}: {} tests ({})", c.tag, f.lab, which, step.plan.op));
  SuiteRun run = run_gtest_suite(suite_options(c, f.lab, step.plan, hidden));
  run.op = step.plan.op;
  c.progress.line(fmt::format("{}{}: {} tests {}", c.tag, f.lab, which, suite_line(run)));
  (hidden ? f.hidden : f.tests)[step.slot] = std::move(run);
}

/// Stores what a step that threw leaves: its suites, not run, with \p what
/// as their problem. The lab loses what the step would have earned; nothing else does.
void fail_step(const CheckStep& step, LabFacts& f, const LabRunContext& c,
               const std::string& what) {
  const std::string problem = internal_error_message(what);
  c.progress.line(fmt::format("{}{}: {}", c.tag, f.lab, problem));
  SuiteRun run;
  run.op = step.plan.op;
  run.problem = problem;
  switch (step.kind) {
    case CheckStep::Kind::kGraded:
      f.hidden[step.hidden_slot] = run;
      f.tests[step.slot] = run;
      break;
    case CheckStep::Kind::kPublic:
      f.tests[step.slot] = run;
      break;
    case CheckStep::Kind::kHidden:
      f.hidden[step.slot] = run;
      break;
  }
}

/// run_step(), with anything it throws turned into that step's problem (fail_step()).
void run_step_safely(const CheckStep& step, LabFacts& f, const LabRunContext& c) {
  try {
    run_step(step, f, c);
  } catch (const std::exception& e) {
    fail_step(step, f, c, e.what());
  } catch (...) {
    fail_step(step, f, c, "an exception that is not a std::exception");
  }
}

/// Runs \p job(0) ... job(count - 1) on up to \p threads threads; what a job throws is its own
/// business (jobs catch their exceptions).
void run_in_parallel(std::size_t count, int threads, const std::function<void(std::size_t)>& job) {
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) job(i);
  };
  std::vector<std::thread> pool;
  const std::size_t extra =
      std::min<std::size_t>(count, static_cast<std::size_t>(std::max(1, threads)));
  for (std::size_t t = 1; t < extra; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

/// One operation's labs under compute-sanitizer: where each lab's runs go in LabFacts::sanitizer.
struct SanitizedMember {
  std::size_t lab;        ///< index into PreparedSubmission::labs
  std::size_t slot;       ///< its place among the lab's sanitized operations
  std::size_t sanitized;  ///< the lab's sanitized operations (a tool's runs are that far apart)
};

/// The group of \p op's labs \p members for run_sanitizer_group(): its checker's log in
/// logs/sanitizer/, each lab's own spec (for a run alone) with the log it always had.
SanitizerGroupSpec sanitizer_group_spec(const PreparedSubmission& p, const std::string& op,
                                        const std::vector<SanitizedMember>& members,
                                        const LabRunContext& c) {
  const Limits& limits = c.rubric.limits;
  SanitizerGroupSpec spec;
  SanitizerSpec& common = spec.common;
  common.sanitizer = c.sanitizer;
  common.tools = c.rubric.sanitizer.tools;
  common.checker = c.p.course->manifest.checker(op, false);
  common.filter = c.rubric.sanitizer.filter_for(op);
  common.env = c.env;
  common.runner_prefix = c.sandbox;
  common.timeout_s = limits.sanitizer_timeout_s;
  common.output_cap = limits.output_cap_bytes;
  common.log_file = c.logs / "sanitizer" / (op + ".log");
  for (const SanitizedMember& m : members) {
    const LabFacts& f = p.labs[m.lab];
    const CourseLab* cl = c.course.find(f.lab);
    OpPlan plan;
    plan.op = op;
    SanitizerSpec alone = common;
    alone.args = lab_args(c, f.lab, plan);
    alone.log_file =
        c.logs / f.lab / (m.sanitized > 1 ? op + "_sanitizer.log" : std::string("sanitizer.log"));
    spec.labs.push_back({f.lab, cl != nullptr ? cl->order : std::string("tree"),
                         c.p.build.manifest.library(f.lab, op), std::move(alone)});
  }
  return spec;
}

/// The compute-sanitizer step of every lab of \p labs that still has one (drop_after_hang()):
/// one checker per operation over all its labs (run_sanitizer_group(): for each tool one lab
/// process serves them all, and a lab runs alone only where the group's reports cannot say
/// whose a finding is), up to parallel_checks operations at once.
void sanitize_labs(PreparedSubmission& p, const std::vector<std::size_t>& labs,
                   const LabRunContext& c) {
  if (c.sanitizer.empty()) return;
  std::map<std::string, std::vector<SanitizedMember>> groups;
  for (std::size_t i : labs) {
    const LabFacts& f = p.labs[i];
    if (f.sanitizer.empty()) continue;
    const std::vector<OpPlan> plans = lab_plans(c, f.lab);
    const std::size_t sanitized = static_cast<std::size_t>(std::count_if(
        plans.begin(), plans.end(), [](const OpPlan& pl) { return pl.public_tests; }));
    std::size_t slot = 0;
    for (const OpPlan& plan : plans)
      if (plan.public_tests) groups[plan.op].push_back({i, slot++, sanitized});
  }
  std::vector<std::pair<std::string, std::vector<SanitizedMember>>> order(groups.begin(),
                                                                          groups.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second.size() > b.second.size();  // the longest first
  });
  const Limits& limits = c.rubric.limits;
  const std::vector<std::string>& tools = c.rubric.sanitizer.tools;
  std::mutex facts;  // the labs' facts, written by several groups
  run_in_parallel(order.size(), limits.parallel_checks, [&](std::size_t g) {
    const std::string& op = order[g].first;
    const std::vector<SanitizedMember>& members = order[g].second;
    const SanitizerGroupSpec spec = sanitizer_group_spec(p, op, members, c);
    std::vector<std::string> names;
    for (const SanitizedLab& lab : spec.labs) names.push_back(lab.name);
    c.progress.line(fmt::format("{}compute-sanitizer --tool {} ({}): {}", c.tag,
                                join(tools, ", then "), op, join(names, ", ")));
    std::vector<std::vector<SanitizerRun>> runs;
    std::string problem;
    try {
      runs = run_sanitizer_group(spec);
    } catch (const std::exception& e) {
      problem = internal_error_message(e.what());
    } catch (...) {
      problem = internal_error_message("an exception that is not a std::exception");
    }
    const std::lock_guard<std::mutex> lock(facts);
    for (std::size_t k = 0; k < members.size(); ++k) {
      const SanitizedMember& m = members[k];
      LabFacts& f = p.labs[m.lab];
      for (std::size_t t = 0; t < tools.size(); ++t) {
        SanitizerRun run;
        if (k < runs.size() && t < runs[k].size()) run = std::move(runs[k][t]);
        if (run.tool.empty()) {
          run.tool = tools[t];
          run.problem = problem.empty() ? "the sanitizer's run gave no result" : problem;
        }
        if (m.sanitized > 1) run.op = op;
        c.progress.line(fmt::format("{}{}: {}{} ({:.1f} s){}", c.tag, f.lab, run.describe(),
                                    run.clean() ? " - clean" : "", run.seconds,
                                    run.unconfined.empty() ? "" : "; " + run.unconfined));
        f.sanitizer[t * m.sanitized + m.slot] = std::move(run);
      }
    }
  });
}

/// Labs of one operation per several-lab checker: fewer start more processes, more run longer
/// one after another while the other checkers are done.
constexpr std::size_t kLabsPerChecker = 4;

/// The graded checkers of operations that several labs share, each over up to kLabsPerChecker
/// of them (run_gtest_suite_labs(): one checker and one lab process instead of one of each per
/// lab). Returns, per (lab index, operation), the run of a lab whose tests all passed there;
/// every other lab runs alone afterwards, as a lab of its own operation does.
std::map<std::pair<std::size_t, std::string>, SuiteRun> run_graded_groups(
    const PreparedSubmission& p, const std::vector<std::size_t>& order, const LabRunContext& c) {
  std::map<std::string, std::vector<std::size_t>> by_op;
  for (std::size_t i : order)
    for (const OpPlan& plan : lab_plans(c, p.labs[i].lab))
      if (plan.public_tests && graded_together(c, plan)) by_op[plan.op].push_back(i);
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;
  for (const auto& [op, labs] : by_op) {
    if (labs.size() < 2) continue;
    const std::size_t count = (labs.size() + kLabsPerChecker - 1) / kLabsPerChecker;
    for (std::size_t g = 0; g < count; ++g) {
      groups.push_back({op, {}});
      for (std::size_t k = g; k < labs.size(); k += count) groups.back().second.push_back(labs[k]);
    }
  }
  std::map<std::pair<std::size_t, std::string>, SuiteRun> results;
  std::mutex mutex;
  run_in_parallel(groups.size(), c.rubric.limits.parallel_checks, [&](std::size_t g) {
    const auto& [op, members] = groups[g];
    OpPlan plan;
    plan.op = op;
    SuiteOptions options = graded_suite_options(c, p.labs[members.front()].lab, plan);
    options.log_dir = c.logs / "tests";
    options.log_stem = fmt::format("{}_graded_{}", op, g);
    std::vector<PlannedLab> planned;
    std::vector<std::string> names;
    for (std::size_t i : members) {
      const std::string& lab = p.labs[i].lab;
      const CourseLab* cl = c.course.find(lab);
      planned.push_back({lab, cl != nullptr ? cl->order : std::string("tree"),
                         c.p.build.manifest.library(lab, op)});
      names.push_back(lab);
    }
    c.progress.line(
        fmt::format("{}public and hidden tests ({}): {}", c.tag, op, join(names, ", ")));
    LabsRun run;
    try {
      run = run_gtest_suite_labs(options, planned);
    } catch (const std::exception&) {
      return;  // every lab of the group runs alone
    }
    const std::lock_guard<std::mutex> lock(mutex);
    c.counts.checkers += run.startups.contexts;
    c.counts.lab_processes += run.startups.lab_processes;
    for (std::size_t k = 0; k < members.size(); ++k)
      if (run.labs[k]) {
        SuiteRun lab_run = std::move(*run.labs[k]);
        lab_run.op = op;
        results[{members[k], op}] = std::move(lab_run);
      }
  });
  return results;
}

/// The correctness phase of the labs \p runnable: up to rubric.limits.parallel_checks processes
/// at once; within them, at most parallel_labs tests at once hold inputs of several GiB (the
/// checkers share that many large-memory slots, REDUCE_MEMORY_SLOTS). Every step is queued at
/// the start, the public suites first (labs with more operations, then serial-order labs, since
/// their suites take longest), then hidden suites that run apart. A lab whose public suite hangs
/// loses its queued steps. Then compute-sanitizer, once per operation (sanitize_labs()). Returns
/// false when the tests say there is no CUDA device after all.
bool check_labs(PreparedSubmission& p, const std::vector<std::size_t>& runnable,
                const LabRunContext& c) {
  std::vector<std::size_t> order = runnable;
  const auto weight = [&](std::size_t i) {
    const CourseLab* cl = c.course.find(p.labs[i].lab);
    const std::size_t ops = lab_plans(c, p.labs[i].lab).size();
    return 2 * ops + (cl != nullptr && cl->order == "serial" ? 1 : 0);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return weight(a) > weight(b); });
  std::deque<CheckStep> queue;
  std::map<std::size_t, std::size_t> public_left;
  for (std::size_t i : order) {
    std::vector<CheckStep> steps = public_steps(i, p.labs[i], c);
    public_left[i] = steps.size();
    for (CheckStep& s : steps) queue.push_back(std::move(s));
  }
  for (std::size_t i : order)
    for (CheckStep& s : other_steps(i, p.labs[i], c)) queue.push_back(std::move(s));
  // Operations that several labs share go first, in checkers over several labs; what passed
  // there leaves the queue.
  const auto grouped = run_graded_groups(p, order, c);
  for (auto it = queue.begin(); it != queue.end();) {
    const auto found =
        it->kind == CheckStep::Kind::kGraded ? grouped.find({it->lab, it->plan.op}) : grouped.end();
    if (found == grouped.end()) {
      ++it;
      continue;
    }
    LabFacts& f = p.labs[it->lab];
    auto [pub, hidden] = split_hidden(found->second);
    c.progress.line(fmt::format("{}{}: public tests {}; hidden tests {}", c.tag, f.lab,
                                suite_line(pub, false), suite_line(hidden)));
    f.tests[it->slot] = std::move(pub);
    f.hidden[it->hidden_slot] = std::move(hidden);
    --public_left[it->lab];
    it = queue.erase(it);
  }
  const Limits& limits = c.rubric.limits;
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t active = 0;
  bool no_cuda = false;
  std::string failure;  // what escaped a worker (its steps' own exceptions do not)
  auto work = [&] {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      std::deque<CheckStep>::iterator next;
      changed.wait(lock, [&] {
        next = queue.begin();
        return no_cuda || !failure.empty() || next != queue.end() || (queue.empty() && active == 0);
      });
      if (no_cuda || !failure.empty() || next == queue.end()) break;
      const CheckStep step = std::move(*next);
      queue.erase(next);
      const bool is_public = step.is_public();
      ++active;
      lock.unlock();
      run_step_safely(step, p.labs[step.lab], c);
      lock.lock();
      --active;
      LabFacts& f = p.labs[step.lab];
      if (is_public) {
        if (--public_left[step.lab] == 0 && all_skipped_no_gpu(f.tests)) no_cuda = true;
        if (assess(f).hung)  // its other steps would hang as well: not started
          queue.erase(std::remove_if(queue.begin(), queue.end(),
                                     [&](const CheckStep& s) { return s.lab == step.lab; }),
                      queue.end());
      }
      changed.notify_all();
    }
    changed.notify_all();
  };
  // An exception that leaves a std::thread's body ends the process (std::terminate): every
  // worker stops the others instead, and the submission's grading fails with the message.
  auto worker = [&] {
    std::string what;
    try {
      work();
      return;
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "an exception that is not a std::exception";
    }
    const std::lock_guard<std::mutex> lock(mutex);
    if (failure.empty()) failure = what.empty() ? std::string("unknown") : what;
    changed.notify_all();
  };
  const std::size_t threads = std::max<std::size_t>(
      1, std::min<std::size_t>(static_cast<std::size_t>(std::max(1, limits.parallel_checks)),
                               queue.size()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (!failure.empty()) throw std::runtime_error(failure);
  for (std::size_t i : order) drop_after_hang(p.labs[i]);
  if (!no_cuda) sanitize_labs(p, order, c);
  return !no_cuda;
}

/// Runs again, alone on the GPU, every suite of the lab in which a test skipped itself.
void rerun_skipped_suites(LabFacts& f, const LabRunContext& c) {
  const std::vector<OpPlan> plans = lab_plans(c, f.lab);
  for (bool hidden : {false, true}) {
    std::vector<SuiteRun>& runs = hidden ? f.hidden : f.tests;
    std::size_t k = 0;
    for (const OpPlan& plan : plans) {
      if (!(hidden ? plan.hidden_tests : plan.public_tests)) continue;
      if (k >= runs.size()) break;
      SuiteRun& run = runs[k++];
      if (run.skipped() == 0 || run.timed_out || run.output_flood) continue;
      c.progress.line(fmt::format("{}{}: {} tests ({}) again, alone: {} skipped beside other labs",
                                  c.tag, f.lab, hidden ? "hidden" : "public", plan.op,
                                  run.skipped()));
      const int contexts = run.checker_contexts, lab_processes = run.lab_process_starts;
      run = run_gtest_suite(suite_options(c, f.lab, plan, hidden));
      run.op = plan.op;
      run.checker_contexts += contexts;  // the first run's processes count too
      run.lab_process_starts += lab_processes;
      c.progress.line(fmt::format("{}{}: {} tests {}", c.tag, f.lab, hidden ? "hidden" : "public",
                                  suite_line(run)));
    }
  }
}

}  // namespace

std::string grader_version() {
  return "1.0.0";
}

void Progress::line(const std::string& text) {
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (start_ < 0) start_ = now_seconds();
  std::fprintf(stdout, "[%7.1fs] %s\n", now_seconds() - start_, text.c_str());
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
    plans[lab] = plan_ops(course, *cl);
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

/// The build folder: a fresh temporary one, or --build-dir emptied of everything but the
/// course's binaries (which never hold anything of a submission).
void prepare_build_dir(PreparedSubmission& p) {
  std::error_code ec;
  if (p.options.build_dir.empty()) {
    p.build_dir = make_temp_dir("reduce-grade-");
    p.temporary_build = true;
    return;
  }
  p.build_dir = fs::absolute(p.options.build_dir, ec);
  if (!is_empty_dir(p.build_dir)) {
    if (!fs::is_regular_file(p.build_dir / "CMakeCache.txt", ec))
      throw ConfigError("--build-dir " + p.build_dir.string() +
                        " is not empty and not a build folder: refusing to clear it");
    for (const auto& entry : fs::directory_iterator(p.build_dir, ec))
      if (entry.path().filename() != "course") remove_all_quietly(entry.path());
  }
  fs::create_directories(p.build_dir, ec);
}

/// Step "build" (with "inspect": the library check runs as soon as a lab's library exists, and
/// a lab that uses a library reduction scores nothing, so its tests are not built).
void build_labs(PreparedSubmission& p, const Course& course, const Rubric& rubric,
                const std::vector<std::string>& present,
                const std::map<std::string, std::vector<OpPlan>>& plans, bool gpu,
                Progress& progress, const std::string& tag) {
  BuildOptions bo;
  bo.course_root = course.root;
  bo.submission = p.tree;
  bo.build_dir = p.build_dir;
  bo.labs = present;
  bo.plans = plans;
  bo.jobs = p.options.jobs;
  bo.benchmark = gpu;
  bo.hidden = true;
  bo.cmake_args = p.options.cmake_args;
  bo.limits = rubric.limits;
  bo.log_dir = p.options.out / "logs";
  bo.progress = [&progress, tag](const std::string& line) { progress.line(tag + line); };
  std::error_code ec;
  std::vector<fs::path> hidden = {fs::absolute(p.options.out, ec), p.course->dir};
  for (const fs::path& dir : p.options.protected_dirs) hidden.push_back(fs::absolute(dir, ec));
  const Isolation isolation =
      detect_isolation(build_view(course.root, hidden, p.build_dir), "the build");
  bo.sandbox = isolation.runner_prefix;
  progress.line(tag + "isolation of the build: " + isolation.description);
  bo.keep_lab = [&](const std::string& lab, const BuildManifest& built) {
    const LibraryCheck check =
        inspect_built_lab(p.build_dir, built, p.tree, lab, plans.at(lab), rubric);
    for (LabFacts& f : p.labs)
      if (f.lab == lab) f.library = check;
    if (!check.forbidden.empty())
      progress.line(fmt::format("{}{}: {}", tag, lab, check.describe()));
    return check.forbidden.empty();
  };
  p.build = build_submission(bo);
  p.build.isolation = isolation.description;
  p.build.benchmark_ok = p.course->benchmark_ok;
  p.build.benchmark_problem = p.course->benchmark_ok ? "" : "not built";
  if (!p.build.configured) p.messages.push_back(clip(p.build.configure_problem, 15, 3000));
  progress.line(fmt::format("{}build finished in {:.1f} s", tag, p.build.seconds));
  for (LabFacts& f : p.labs) {
    const auto it = p.build.labs.find(f.lab);
    if (f.present && it != p.build.labs.end()) f.build = it->second;
  }
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
  prepare_build_dir(p);
  const bool runs = gpu.present && !options.no_gpu;
  if (options.course_build) {
    p.course = options.course_build;
  } else if (!runs || present.empty()) {
    // Nothing will run: the course's binaries are not needed.
    CourseBuild none;
    none.dir = p.build_dir / "course";
    none.ok = true;
    p.course = std::make_shared<const CourseBuild>(none);
  } else {
    std::vector<OpPlan> all;
    for (const std::string& lab : present)
      for (const OpPlan& plan : plans[lab]) all.push_back(plan);
    p.course = std::make_shared<const CourseBuild>(build_course(course_build_options(
        course, rubric, all, p.build_dir / "course", options, options.out / "logs", true,
        [&progress, tag](const std::string& line) { progress.line(tag + line); })));
  }
  if (p.course && !p.course->ok) throw ConfigError(p.course->problem);
  if (!present.empty()) build_labs(p, course, rubric, present, plans, runs, progress, tag);
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

/// Steps "test", "hidden" and "sanitize", several processes at once (they share the GPU; none of
/// them is timed). Returns the labs that ran; none when CUDA turned out to be missing.
std::vector<std::size_t> check_runnable_labs(GradeRun& g, const Isolation& isolation) {
  const GradeOptions& o = g.p.options;
  // The seed reaches the checkers only: the lab's runner gets a clean environment.
  std::vector<std::pair<std::string, std::string>> env = isolation.runner_env();
  env.emplace_back("REDUCE_SEED", std::to_string(g.p.seed));
  env.emplace_back("REDUCE_CALL_TIMEOUT_S", "60");
  if (!o.cuda_device.empty()) env.emplace_back("CUDA_VISIBLE_DEVICES", o.cuda_device);
  // The large-memory slots (MemoryLease in autograder/tests/gpu_test.hpp): lock files in the
  // build folder, which the lab's sandbox does not show, so no lab can hold one.
  std::error_code ec;
  const fs::path slots = g.p.build_dir / "memory-slots";
  fs::create_directories(slots, ec);
  env.emplace_back("REDUCE_MEMORY_SLOTS", fmt::format("{}:{}", slots.string(),
                                                      std::max(1, g.rubric.limits.parallel_labs)));
  const fs::path sanitizer = g.gpu ? find_compute_sanitizer() : fs::path();
  std::vector<std::size_t> runnable;
  for (std::size_t i = 0; i < g.p.labs.size(); ++i) {
    LabFacts& f = g.p.labs[i];
    f.gpu = g.gpu;
    if (g.gpu && f.present && f.build.ok && f.library.forbidden.empty()) runnable.push_back(i);
  }
  const LabRunContext context{
      g.p,   g.course,   g.rubric,          env, sanitizer, isolation.runner_prefix, o.out / "logs",
      g.tag, g.progress, g.report.processes};
  bool cuda_missing = false;
  {
    const std::shared_lock<TimingLock> sharing(host_timing_lock());
    cuda_missing = !check_labs(g.p, runnable, context);
  }
  const std::unique_lock<TimingLock> alone(host_timing_lock());
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
    const CourseLab* cl = g.course.find(f.lab);
    const std::vector<OpPlan> plans =
        cl != nullptr ? plan_ops(g.course, *cl) : std::vector<OpPlan>{};
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

/// Step "benchmark": one process for every lab that passed its tests, alone on the GPU; a lab
/// that got no result there (the process died in another lab's code) again, alone.
void benchmark_labs(GradeRun& g, const std::vector<std::size_t>& runnable,
                    const Isolation& isolation) {
  const std::vector<BenchTarget> targets = bench_targets(g, runnable);
  if (targets.empty()) return;
  const GradeOptions& o = g.p.options;
  const std::unique_lock<TimingLock> alone(host_timing_lock());
  g.progress.line(fmt::format("{}benchmark of {} lab(s) at n = {}", g.tag, targets.size(),
                              g.rubric.performance.size));
  std::map<std::string, PerfFacts> perf =
      run_benchmarks(g.p.course->manifest, g.p.build.manifest, targets, g.rubric, g.p.seed,
                     o.out / "logs" / "benchmark", isolation, o.cuda_device, &g.report.processes);
  for (const BenchTarget& target : targets) {
    LabFacts& f = *std::find_if(g.p.labs.begin(), g.p.labs.end(),
                                [&](const LabFacts& l) { return l.lab == target.lab; });
    f.perf = perf[target.lab];
    if (!f.perf.ran && targets.size() > 1) {
      g.progress.line(fmt::format("{}{}: benchmark again, alone", g.tag, f.lab));
      f.perf = run_benchmark(g.p.course->manifest, g.p.build.manifest, f.lab, target.plans,
                             g.rubric, g.p.seed, o.out / "logs" / f.lab, isolation, o.cuda_device,
                             &g.report.processes);
    }
    if (f.perf.ran) {
      const LabRubric* lr = g.rubric.find(f.lab);
      g.progress.line(fmt::format("{}{}: {} GB/s = {} of the ceiling {} GB/s (threshold {}){}",
                                  g.tag, f.lab, fixed(f.perf.gbps, 1),
                                  fraction_text(f.perf.fraction), fixed(f.perf.ceiling_gbps, 1),
                                  lr ? fraction_text(lr->threshold) : "-",
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
    lab.threshold = lr->threshold;
    lab.floor = lr->floor;
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
  GradeRun g{p, course, rubric, progress, tag, false, {}};
  const double graded_from = now_seconds();
  start_report(g, gpu_probe);
  const Isolation isolation = isolate(g);
  const std::vector<std::size_t> runnable = check_runnable_labs(g, isolation);
  benchmark_labs(g, runnable, isolation);
  end_submission_processes(g);
  score_labs(g, gpu_probe);
  g.report.build_seconds = p.build.seconds;
  g.report.graded_seconds = now_seconds() - graded_from;
  write_submission_reports(g);
  return g.report;
}

GradeReport grade_submission(const Course& course, const Rubric& rubric,
                             const GradeOptions& options, Progress& progress) {
  const GpuProbe gpu = options.no_gpu ? GpuProbe{false, "", "--no-gpu"} : probe_gpu();
  PreparedSubmission prepared = prepare_submission(course, rubric, options, gpu, progress);
  return finish_submission(prepared, course, rubric, gpu, progress);
}

}  // namespace reduce::grade
