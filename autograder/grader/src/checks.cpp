// The correctness phase of a grading: every lab's public and hidden suites (checkers over several
// labs of any operations, then a checker over one lab where its part was not a whole pass), then
// compute-sanitizer (checkers over several labs of any operations).
#include "checks.hpp"

#include <reduce_grade/gtest_suite.hpp>
#include <reduce_grade/pipeline.hpp>
#include <reduce_grade/sanitizer.hpp>
#include <reduce_grade/util.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace reduce::grade {

namespace fs = std::filesystem;

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

std::vector<OpPlan> lab_plans(const LabRunContext& c, const std::string& lab) {
  const CourseLab* cl = c.course.find(lab);
  return cl != nullptr ? plan_ops(c.course, *cl) : std::vector<OpPlan>{};
}

/// The checker's arguments that name the lab under test (the checker starts its runner) and
/// select its operation's suites of \p kind.
std::vector<std::string> lab_args(const LabRunContext& c, const std::string& lab,
                                  const OpPlan& plan, SuiteKind kind) {
  const CourseLab* cl = c.course.find(lab);
  std::vector<std::string> args = {
      "--lab=" + c.p.build.manifest.library(lab, plan.op).string(),
      "--lab-order=" + (cl != nullptr ? cl->order : std::string("tree")), "--lab-name=" + lab};
  for (std::string& arg : c.p.course->manifest.suites(plan.op, kind).args())
    args.push_back(std::move(arg));
  return args;
}

SuiteOptions suite_options(const LabRunContext& c, const std::string& lab, const OpPlan& plan,
                           bool hidden) {
  const Limits& limits = c.rubric.limits;
  const SuiteKind kind = hidden ? SuiteKind::kHidden : SuiteKind::kPublic;
  SuiteOptions so;
  so.binary = c.p.course->manifest.suites(plan.op, kind).checker;
  so.args = lab_args(c, lab, plan, kind);
  so.env = c.env;
  so.timeout_s = hidden ? limits.hidden_timeout_s : limits.test_timeout_s;
  so.output_cap = limits.output_cap_bytes;
  so.max_restarts = limits.max_restarts;
  so.log_dir = c.logs / lab;
  so.log_stem = plan.op + (hidden ? "_hidden" : "_tests");
  return so;
}

/// The public and hidden suites of \p plan in one checker process (the graded checker).
SuiteOptions graded_suite_options(const LabRunContext& c, const std::string& lab,
                                  const OpPlan& plan) {
  SuiteOptions so = suite_options(c, lab, plan, false);
  so.binary = c.p.course->manifest.suites(plan.op, SuiteKind::kGraded).checker;
  so.args = lab_args(c, lab, plan, SuiteKind::kGraded);
  // The larger limit, not the sum: the hidden suites add seconds to a run, and a lab that hangs
  // would otherwise hold its slot for both limits.
  so.timeout_s = std::max(c.rubric.limits.test_timeout_s, c.rubric.limits.hidden_timeout_s);
  so.log_stem = plan.op + "_graded";
  return so;
}

/// \p lab's part of a several-lab checker: its library of \p plan's operation and the filter of
/// that operation's suites of \p kind.
PlannedLab planned_part(const LabRunContext& c, const std::string& lab, const OpPlan& plan,
                        SuiteKind kind) {
  const CourseLab* cl = c.course.find(lab);
  const SuiteSelection suites = c.p.course->manifest.suites(plan.op, kind);
  return {lab,
          plan.op,
          cl != nullptr ? cl->order : std::string("tree"),
          suites.entry,
          c.p.build.manifest.library(lab, plan.op),
          {suites.filter}};
}

/// One process of the tests' phase: a public or hidden suite of one of a lab's operations, or
/// both at once (kGraded: one CUDA context and one runner start fewer). Its result goes to
/// LabFacts::tests or hidden at \p slot (kGraded: hidden at \p hidden_slot), so the lists keep
/// the plans' order however the steps finish. (compute-sanitizer runs after every lab's tests:
/// sanitize_labs().)
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
         !c.p.course->manifest.suites(plan.op, SuiteKind::kGraded).checker.empty();
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

/// Stores the run of \p step's part in a several-lab checker (run_test_groups()) in \p f: a
/// graded step's public and hidden tests apart (split_hidden()).
void store_group_run(const CheckStep& step, const SuiteRun& run, LabFacts& f,
                     const LabRunContext& c) {
  if (step.kind != CheckStep::Kind::kGraded) {
    c.progress.line(fmt::format("{}{} ({}): public tests {}", c.tag, f.lab, step.plan.op,
                                suite_line(run, false)));
    f.tests[step.slot] = run;
    return;
  }
  auto [pub, hidden] = split_hidden(run);
  c.progress.line(fmt::format("{}{} ({}): public tests {}; hidden tests {}", c.tag, f.lab,
                              step.plan.op, suite_line(pub, false), suite_line(hidden)));
  f.tests[step.slot] = std::move(pub);
  f.hidden[step.hidden_slot] = std::move(hidden);
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

/// Splits the indices of \p weights into up to \p count groups of about equal total weight: the
/// heaviest first, each into the lightest group so far. No group is empty.
std::vector<std::vector<std::size_t>> balanced_groups(const std::vector<double>& weights,
                                                      std::size_t count) {
  std::vector<std::size_t> heaviest(weights.size());
  for (std::size_t i = 0; i < heaviest.size(); ++i) heaviest[i] = i;
  std::stable_sort(heaviest.begin(), heaviest.end(),
                   [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
  std::vector<std::vector<std::size_t>> groups(
      std::min(std::max<std::size_t>(count, 1), weights.size()));
  std::vector<double> load(groups.size(), 0.0);
  for (std::size_t i : heaviest) {
    const std::size_t g =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    groups[g].push_back(i);
    load[g] += weights[i];
  }
  return groups;
}

/// One lab's operation under compute-sanitizer: where its runs go in LabFacts::sanitizer.
struct SanitizedMember {
  std::size_t lab;        ///< index into PreparedSubmission::labs
  OpPlan plan;            ///< the operation
  std::size_t slot;       ///< its place among the lab's sanitized operations
  std::size_t sanitized;  ///< the lab's sanitized operations (a tool's runs are that far apart)
};

/// The sanitizer group of \p members (labs of any operations) for run_sanitizer_group(): its
/// checker's log logs/sanitizer/<name>.log; each part runs its operation's public tests at the
/// rubric's sizes for that operation; each lab's own spec (for a run alone) has the log it
/// always had.
SanitizerGroupSpec sanitizer_group_spec(const PreparedSubmission& p, const std::string& name,
                                        const std::vector<SanitizedMember>& members,
                                        const LabRunContext& c) {
  const Limits& limits = c.rubric.limits;
  SanitizerGroupSpec spec;
  SanitizerSpec& common = spec.common;
  common.sanitizer = c.sanitizer;
  common.tools = c.rubric.sanitizer.tools;
  common.checker = c.p.course->manifest.public_checker;
  common.env = c.env;
  common.runner_prefix = c.sandbox;
  common.timeout_s = limits.sanitizer_timeout_s;
  common.output_cap = limits.output_cap_bytes;
  common.log_file = c.logs / "sanitizer" / (name + ".log");
  for (const SanitizedMember& m : members) {
    const LabFacts& f = p.labs[m.lab];
    const std::string& op = m.plan.op;
    SanitizedLab lab;
    lab.part = planned_part(c, f.lab, m.plan, SuiteKind::kPublic);
    lab.part.filters.push_back(c.rubric.sanitizer.filter_for(op));
    lab.alone = common;
    lab.alone.checker = c.p.course->manifest.suites(op, SuiteKind::kPublic).checker;
    lab.alone.args = lab_args(c, f.lab, m.plan, SuiteKind::kPublic);
    lab.alone.filter = c.rubric.sanitizer.filter_for(op);
    lab.alone.log_file =
        c.logs / f.lab / (m.sanitized > 1 ? op + "_sanitizer.log" : std::string("sanitizer.log"));
    spec.labs.push_back(std::move(lab));
  }
  return spec;
}

/// Stores the runs of \p members (one list per member, one run per tool, or \p problem where
/// the group gave none) in their labs' facts.
void store_sanitizer_runs(PreparedSubmission& p, const std::vector<SanitizedMember>& members,
                          std::vector<std::vector<SanitizerRun>>& runs, const std::string& problem,
                          const LabRunContext& c) {
  const std::vector<std::string>& tools = c.rubric.sanitizer.tools;
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
      if (m.sanitized > 1) run.op = m.plan.op;
      c.progress.line(fmt::format("{}{}: {}{} ({:.1f} s){}", c.tag, f.lab, run.describe(),
                                  run.clean() ? " - clean" : "", run.seconds,
                                  run.unconfined.empty() ? "" : "; " + run.unconfined));
      f.sanitizer[t * m.sanitized + m.slot] = std::move(run);
    }
  }
}

/// The compute-sanitizer step of every lab of \p labs that still has one (drop_after_hang()):
/// every (lab, operation) with public tests, of any operation, split into up to
/// limits.sanitizer_checkers groups; each group is one checker (run_sanitizer_group(): for each
/// tool one lab process serves the whole group, and a lab runs alone only where the group's
/// reports cannot say whose a finding is).
void sanitize_labs(PreparedSubmission& p, const std::vector<std::size_t>& labs,
                   const LabRunContext& c) {
  if (c.sanitizer.empty()) return;
  std::vector<SanitizedMember> members;
  for (std::size_t i : labs) {
    const LabFacts& f = p.labs[i];
    if (f.sanitizer.empty()) continue;
    const std::vector<OpPlan> plans = lab_plans(c, f.lab);
    const std::size_t sanitized = static_cast<std::size_t>(std::count_if(
        plans.begin(), plans.end(), [](const OpPlan& pl) { return pl.public_tests; }));
    std::size_t slot = 0;
    for (const OpPlan& plan : plans)
      if (plan.public_tests) members.push_back({i, plan, slot++, sanitized});
  }
  const Limits& limits = c.rubric.limits;
  const auto groups = balanced_groups(std::vector<double>(members.size(), 1.0),
                                      static_cast<std::size_t>(limits.sanitizer_checkers));
  std::mutex facts;  // the labs' facts, written by several groups
  run_in_parallel(groups.size(), limits.parallel_checks, [&](std::size_t g) {
    std::vector<SanitizedMember> group;
    std::vector<std::string> names;
    for (std::size_t k : groups[g]) {
      group.push_back(members[k]);
      names.push_back(fmt::format("{} ({})", p.labs[members[k].lab].lab, members[k].plan.op));
    }
    const SanitizerGroupSpec spec = sanitizer_group_spec(p, fmt::format("group_{}", g), group, c);
    c.progress.line(fmt::format("{}compute-sanitizer --tool {}: {}", c.tag,
                                join(c.rubric.sanitizer.tools, ", then "), join(names, ", ")));
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
    store_sanitizer_runs(p, group, runs, problem, c);
  });
}

/// One part of the tests' several-lab checkers: a lab's suites of one operation.
struct TestMember {
  std::size_t lab;  ///< index into PreparedSubmission::labs
  OpPlan plan;      ///< the operation
  SuiteKind kind;   ///< kGraded (public and hidden in one process) or kPublic
};

/// The tests' several-lab checkers: every (lab, operation) with public tests, of any operation,
/// in up to parallel_checks checkers of about equal numbers of tests (run_gtest_suite_labs():
/// one checker and one lab process per group instead of one of each per lab and operation).
/// Returns, per (lab index, operation), the run of a part whose tests all passed there; every
/// other part runs alone afterwards, with every rule of a lone run.
std::map<std::pair<std::size_t, std::string>, SuiteRun> run_test_groups(
    const PreparedSubmission& p, const std::vector<std::size_t>& order, const LabRunContext& c) {
  std::vector<TestMember> members;
  std::vector<PlannedLab> parts;
  for (std::size_t i : order)
    for (const OpPlan& plan : lab_plans(c, p.labs[i].lab)) {
      if (!plan.public_tests) continue;
      members.push_back(
          {i, plan, graded_together(c, plan) ? SuiteKind::kGraded : SuiteKind::kPublic});
      parts.push_back(planned_part(c, p.labs[i].lab, plan, members.back().kind));
    }
  std::map<std::pair<std::size_t, std::string>, SuiteRun> results;
  if (members.size() < 2) return results;
  SuiteOptions options = graded_suite_options(c, p.labs[members[0].lab].lab, members[0].plan);
  options.binary = c.p.course->manifest.grading_checker();
  options.log_dir = c.logs / "tests";
  options.log_stem = "plan";
  std::string problem;
  const std::vector<std::vector<std::string>> tests = list_lab_tests(options, parts, &problem);
  if (tests.empty()) {  // every part runs alone, and says why
    c.progress.line(fmt::format("{}tests: {}", c.tag, clip(problem, 1, 200)));
    return results;
  }
  std::vector<double> weights;
  for (const std::vector<std::string>& t : tests) weights.push_back(static_cast<double>(t.size()));
  const auto groups =
      balanced_groups(weights, static_cast<std::size_t>(c.rubric.limits.parallel_checks));
  std::mutex mutex;
  run_in_parallel(groups.size(), c.rubric.limits.parallel_checks, [&](std::size_t g) {
    std::vector<PlannedLab> group;
    std::vector<std::vector<std::string>> group_tests;
    std::vector<std::string> names;
    for (std::size_t k : groups[g]) {
      group.push_back(parts[k]);
      group_tests.push_back(tests[k]);
      names.push_back(fmt::format("{} ({})", parts[k].name, parts[k].op));
    }
    SuiteOptions mine = options;
    mine.log_stem = fmt::format("group_{}", g);
    c.progress.line(fmt::format("{}tests in one checker: {}", c.tag, join(names, ", ")));
    LabsRun run;
    try {
      run = run_gtest_suite_labs(mine, group, group_tests);
    } catch (const std::exception&) {
      return;  // every part of the group runs alone
    }
    const std::lock_guard<std::mutex> lock(mutex);
    c.counts.checkers += run.startups.contexts;
    c.counts.lab_processes += run.startups.lab_processes;
    for (std::size_t k = 0; k < groups[g].size(); ++k)
      if (run.labs[k]) {
        const TestMember& m = members[groups[g][k]];
        SuiteRun part = std::move(*run.labs[k]);
        part.op = m.plan.op;
        results[{m.lab, m.plan.op}] = std::move(part);
      }
  });
  return results;
}

/// Every step of the labs \p order, public suites first, queued to run alone but for those whose
/// part passed in the several-lab checkers (run_test_groups(), which run first: their results go
/// to the labs' facts). \p public_left counts each lab's public steps left in the queue.
std::deque<CheckStep> queue_steps(PreparedSubmission& p, const std::vector<std::size_t>& order,
                                  std::map<std::size_t, std::size_t>& public_left,
                                  const LabRunContext& c) {
  std::deque<CheckStep> queue;
  for (std::size_t i : order) {
    std::vector<CheckStep> steps = public_steps(i, p.labs[i], c);
    public_left[i] = steps.size();
    for (CheckStep& s : steps) queue.push_back(std::move(s));
  }
  for (std::size_t i : order)
    for (CheckStep& s : other_steps(i, p.labs[i], c)) queue.push_back(std::move(s));
  const auto grouped = run_test_groups(p, order, c);
  for (auto it = queue.begin(); it != queue.end();) {
    const auto found = it->is_public() ? grouped.find({it->lab, it->plan.op}) : grouped.end();
    if (found == grouped.end()) {
      ++it;
      continue;
    }
    store_group_run(*it, found->second, p.labs[it->lab], c);
    --public_left[it->lab];
    it = queue.erase(it);
  }
  return queue;
}

}  // namespace

/// The correctness phase of the labs \p runnable: up to rubric.limits.parallel_checks processes
/// at once; within them, at most parallel_labs tests at once hold inputs of several GiB (the
/// checkers share that many large-memory slots, REDUCE_MEMORY_SLOTS). Every lab's tests run
/// first in several-lab checkers (run_test_groups()); every step they did not pass is queued,
/// the public suites first (labs with more operations, then serial-order labs, since their
/// suites take longest), then hidden suites that run apart, and runs alone. A lab whose public
/// suite hangs loses its queued steps. Then compute-sanitizer (sanitize_labs()). Returns false
/// when the tests say there is no CUDA device after all.
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
  std::map<std::size_t, std::size_t> public_left;
  std::deque<CheckStep> queue = queue_steps(p, order, public_left, c);
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

}  // namespace reduce::grade
