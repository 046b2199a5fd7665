// The correctness phase of a grading: every lab's public and hidden suites (checkers over several
// labs of any operations, then a checker over one lab where its part was not settled there), then
// compute-sanitizer (checkers over several labs of any operations).
#include "checks.hpp"

#include "lab_runs.hpp"
#include "sanitizer_phase.hpp"

#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/gtest_suite.hpp>
#include <reduce_grade/observations/sanitizer.hpp>
#include <reduce_grade/processes/gpu_share.hpp>
#include <reduce_grade/submission/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
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

/// One process of the tests' phase: a public or hidden suite of one of a lab's operations, or
/// both at once (kGraded: one CUDA context and one runner start fewer). Its result goes to
/// LabFacts::tests or hidden at \p slot (kGraded: hidden at \p hidden_slot), so the lists keep
/// the plans' order however the steps finish. (compute-sanitizer runs beside them:
/// run_sanitizer_plan().)
struct CheckStep {
  enum class Kind { kPublic, kHidden, kGraded };
  Kind kind = Kind::kPublic;
  std::size_t lab = 0;  ///< index into PreparedSubmission::labs
  OpPlan plan;
  std::size_t slot = 0;
  std::size_t hidden_slot = 0;  ///< kGraded: where its hidden part goes in LabFacts::hidden
  /// Tests that failed in the lab's part of a several-lab checker: they fail here too.
  std::vector<TestOutcome> first_failures;

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
  for (const OpPlan& plan : c.course.plans(f.lab)) {
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
  const std::vector<OpPlan>& plans = c.course.plans(f.lab);
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
  // Sized here, before any step runs; filled by run_sanitizer_plan(), beside the tests.
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
    keep_first_failures(step.first_failures, run);
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
  keep_first_failures(step.first_failures, run);
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

/// One part of the tests' several-lab checkers: a lab's suites of one operation.
struct TestMember {
  std::size_t lab;  ///< index into PreparedSubmission::labs
  OpPlan plan;      ///< the operation
  SuiteKind kind;   ///< kGraded (public and hidden in one process) or kPublic
};

/// The tests' several-lab checkers planned: every (lab, operation) of the labs \p order with
/// public tests, of any operation, a part; the tests each part lists; and the parts of each of up
/// to `parallel_checks - sanitizer_checkers` checkers, of about equal measured seconds
/// (checker_groups(): the course's autograder/part_seconds.toml).
struct GroupsPlan {
  std::vector<TestMember> members;
  std::vector<PlannedLab> parts;
  std::vector<std::vector<std::string>> tests;
  std::vector<std::vector<std::size_t>> groups;
  SuiteOptions options;
};

/// The parts of the labs \p order and the options of their checkers (GroupsPlan, not yet listed).
GroupsPlan plan_groups(const PreparedSubmission& p, const std::vector<std::size_t>& order,
                       const LabRunContext& c) {
  GroupsPlan plan;
  for (std::size_t i : order)
    for (const OpPlan& op : c.course.plans(p.labs[i].lab)) {
      if (!op.public_tests) continue;
      plan.members.push_back(
          {i, op, graded_together(c, op) ? SuiteKind::kGraded : SuiteKind::kPublic});
      plan.parts.push_back(planned_part(c, p.labs[i].lab, op, plan.members.back().kind));
    }
  if (plan.members.empty()) return plan;
  const TestMember& first = plan.members[0];
  plan.options = graded_suite_options(c, p.labs[first.lab].lab, first.plan);
  plan.options.binary = c.p.course->manifest.grading_checker();
  plan.options.log_dir = c.logs / "tests";
  use_tests_key(plan.options, c, "tests in groups");
  return plan;
}

/// Lists \p plan's tests (logs `plan.*`) and splits its parts into up to \p checkers groups
/// (GroupsPlan). False where fewer than two parts are planned (each then runs alone), or, with the
/// progress saying why, where the checker does not list them.
bool list_and_split(GroupsPlan& plan, int checkers, const LabRunContext& c) {
  if (plan.members.size() < 2) return false;
  plan.options.log_stem = "plan";
  std::string problem;
  plan.tests = list_lab_tests(plan.options, plan.parts, &problem);
  if (plan.tests.empty()) {  // every part runs alone, and says why
    c.progress.line(fmt::format("{}tests: {}", c.tag, clip(problem, 1, 200)));
    return false;
  }
  std::vector<PartJob> jobs;
  for (std::size_t k = 0; k < plan.tests.size(); ++k)
    jobs.push_back({plan.parts[k].name, plan.parts[k].op, plan.tests[k].size()});
  plan.groups = checker_groups(c.course.part_seconds, jobs, static_cast<std::size_t>(checkers));
  return true;
}

/// How held checkers wait (check_held()): the hold folder, their limit, and when the grader
/// released the labs of a group (now_seconds()'s clock; infinite until all are told), from which
/// that group's tests' limit counts.
struct Hold {
  fs::path folder;
  double limit_s = 0;
  std::function<double(const std::vector<std::string>&)> released_at;
};

/// Runs \p plan's groups, one checker and one lab process each (run_gtest_suite_labs()), their
/// logs `group_N`; with \p hold, each waits in its folder before each lab's parts once its
/// contexts are made, and is killed where its tests outlast their limit counted from its labs'
/// last release (a watchdog beside them).
/// Returns, per (lab index, operation), the run of a part whose tests all passed there; every
/// other part runs alone afterwards, with every rule of a lone run and fresh inputs, and its
/// tests that failed in the group (GroupedRuns::failures) fail there too.
GroupedRuns run_groups(const GroupsPlan& plan, const LabRunContext& c, const Hold* hold = nullptr) {
  GroupedRuns results;
  results.started = !plan.groups.empty();
  // Each held group's tests' limit counts from the last release of its labs.
  std::vector<std::vector<std::string>> group_labs(plan.groups.size());
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    for (std::size_t k : plan.groups[g]) group_labs[g].push_back(plan.parts[k].name);
  std::vector<std::atomic<bool>> overdue(plan.groups.size());
  std::atomic<bool> running{true};
  std::thread watchdog;
  if (hold != nullptr)
    watchdog = std::thread([&] {
      while (running) {
        for (std::size_t g = 0; g < overdue.size(); ++g)
          if (!overdue[g])
            overdue[g] = now_seconds() > hold->released_at(group_labs[g]) + plan.options.timeout_s;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  const auto stop_watchdog = [&] {
    running = false;
    if (watchdog.joinable()) watchdog.join();
  };
  std::mutex mutex;
  const auto run_group = [&](std::size_t g) {
    std::vector<PlannedLab> group;
    std::vector<std::vector<std::string>> group_tests;
    std::vector<std::string> names;
    for (std::size_t k : plan.groups[g]) {
      group.push_back(plan.parts[k]);
      group_tests.push_back(plan.tests[k]);
      names.push_back(fmt::format("{} ({})", plan.parts[k].name, plan.parts[k].op));
    }
    SuiteOptions mine = plan.options;
    mine.log_stem = fmt::format("group_{}", g);
    if (hold != nullptr) {
      mine.launch.hold = hold->folder.string();
      mine.launch.hold_limit_s = hold->limit_s;
      mine.cancel = &overdue[g];
    }
    c.progress.line(fmt::format("{}tests in one checker: {}", c.tag, join(names, ", ")));
    LabsRun run;
    try {
      run = run_gtest_suite_labs(mine, group, group_tests);
    } catch (const std::exception&) {
      return;  // every part of the group runs alone
    }
    const std::lock_guard<std::mutex> lock(mutex);
    results.counts.checkers += run.startups.contexts;
    results.counts.lab_processes += run.startups.lab_processes;
    for (std::size_t k = 0; k < plan.groups[g].size(); ++k) {
      const TestMember& m = plan.members[plan.groups[g][k]];
      if (!run.failures[k].empty()) results.failures[{m.lab, m.plan.op}] = run.failures[k];
      if (run.labs[k]) {
        SuiteRun part = std::move(*run.labs[k]);
        part.op = m.plan.op;
        results.passed[{m.lab, m.plan.op}] = std::move(part);
      }
    }
  };
  try {
    run_in_parallel(plan.groups.size(), static_cast<int>(plan.groups.size()), run_group);
  } catch (...) {
    stop_watchdog();
    throw;
  }
  stop_watchdog();
  return results;
}

/// The tests' several-lab checkers of the labs \p order, planned (plan_groups()) and run
/// (run_groups()) in up to \p checkers checkers.
GroupedRuns run_test_groups(const PreparedSubmission& p, const std::vector<std::size_t>& order,
                            int checkers, const LabRunContext& c) {
  GroupsPlan plan = plan_groups(p, order, c);
  if (!list_and_split(plan, checkers, c)) return {};
  return run_groups(plan, c);
}

/// Every step of the labs \p order, public suites first, queued to run alone. \p public_left
/// counts each lab's public steps left in the queue.
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
  return queue;
}

/// Takes out of \p queue the steps whose part passed in the several-lab checkers
/// (run_test_groups(): \p grouped), their results stored in the labs' facts.
void take_grouped(std::deque<CheckStep>& queue, const GroupedRuns& grouped, PreparedSubmission& p,
                  std::map<std::size_t, std::size_t>& public_left, const LabRunContext& c) {
  const auto& failures = grouped.failures;
  for (auto it = queue.begin(); it != queue.end();) {
    const auto found =
        it->is_public() ? grouped.passed.find({it->lab, it->plan.op}) : grouped.passed.end();
    if (found == grouped.passed.end()) {
      if (const auto failed = failures.find({it->lab, it->plan.op});
          it->is_public() && failed != failures.end())
        it->first_failures = failed->second;
      ++it;
      continue;
    }
    store_group_run(*it, found->second, p.labs[it->lab], c);
    --public_left[it->lab];
    it = queue.erase(it);
  }
}

/// The labs \p runnable in the order their steps are queued: labs with more operations first,
/// then serial-order labs (their suites take longest); otherwise as given.
std::vector<std::size_t> checking_order(const PreparedSubmission& p,
                                        const std::vector<std::size_t>& runnable,
                                        const LabRunContext& c) {
  std::vector<std::size_t> order = runnable;
  const auto weight = [&](std::size_t i) {
    const CourseLab* cl = c.course.find(p.labs[i].lab);
    const std::size_t ops = c.course.plans(p.labs[i].lab).size();
    return 2 * ops + (cl != nullptr && cl->order == "serial" ? 1 : 0);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return weight(a) > weight(b); });
  return order;
}

/// The tests' checkers at once: limits.parallel_checks less the sanitizer's (at least one of each
/// where compute-sanitizer was found).
int tests_checkers(const LabRunContext& c) {
  const Limits& limits = c.rubric.limits;
  const int sanitizer_checkers = c.sanitizer.empty() ? 0 : std::max(1, limits.sanitizer_checkers);
  return std::max(1, limits.parallel_checks - sanitizer_checkers);
}

/// The several-lab checkers' runs of the labs \p order: \p held's, every lab not released yet
/// told "stop" (a part of such a lab that is runnable after all runs alone), or, where none was
/// held or their plan listed no tests, groups planned now (run_test_groups()).
GroupedRuns held_or_new_groups(const PreparedSubmission& p, const std::vector<std::size_t>& order,
                               int checkers, const LabRunContext& c, HeldChecks* held) {
  if (!held || !held->runs.valid()) return run_test_groups(p, order, checkers, c);
  held->release_rest();
  GroupedRuns runs = held->runs.get();
  if (runs.started) return runs;
  GroupedRuns anew = run_test_groups(p, order, checkers, c);
  anew.counts.checkers += runs.counts.checkers;
  anew.counts.lab_processes += runs.counts.lab_processes;
  return anew;
}

/// Runs the sanitizer again for the labs that shared a group of \p sanitizing that was stopped
/// because another lab of it hung, each in a group of its own now.
void rerun_stopped_sanitizer_groups(PreparedSubmission& p, const SanitizerPlan& sanitizing,
                                    const LabRunContext& c) {
  std::vector<std::size_t> again;
  for (std::size_t i : sanitizing.stopped_labs())
    if (!p.labs[i].sanitizer.empty()) again.push_back(i);
  if (!again.empty()) run_sanitizer_plan(p, SanitizerPlan(p, again, c), c);
}

}  // namespace

/// The correctness phase of the labs \p runnable: up to rubric.limits.parallel_checks processes
/// at once; within them, at most parallel_labs tests at once hold inputs of several GiB (the
/// checkers share that many large-memory slots, REDUCE_MEMORY_SLOTS). Every lab's tests run
/// first in several-lab checkers (run_test_groups()); every step they did not pass is queued,
/// the public suites first (labs with more operations, then serial-order labs, since their
/// suites take longest), then hidden suites that run apart, and runs alone. A lab whose public
/// suite hangs loses its queued steps. compute-sanitizer runs beside all of them, in
/// limits.sanitizer_checkers of the parallel_checks processes (SanitizerPlan): a lab that hangs
/// in its tests stops its sanitizer group and loses its sanitizer result (drop_after_hang()),
/// the other labs of that group run again afterwards, and the whole phase is dropped when the
/// tests find no CUDA device. Returns false when the tests say there is no CUDA
/// device after all.
bool check_labs(PreparedSubmission& p, const std::vector<std::size_t>& runnable,
                const LabRunContext& c, HeldChecks* held) {
  const std::vector<std::size_t> order = checking_order(p, runnable, c);
  std::map<std::size_t, std::size_t> public_left;
  std::deque<CheckStep> queue = queue_steps(p, order, public_left, c);
  const int checkers = tests_checkers(c);
  SanitizerPlan sanitizing(p, order, c);
  SanitizerBeside sanitizer(p, sanitizing, c);
  const GroupedRuns grouped = held_or_new_groups(p, order, checkers, c, held);
  c.counts.checkers += grouped.counts.checkers;
  c.counts.lab_processes += grouped.counts.lab_processes;
  take_grouped(queue, grouped, p, public_left, c);
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
        if (assess(f).hung) {  // its other steps would hang as well: not started, or stopped
          queue.erase(std::remove_if(queue.begin(), queue.end(),
                                     [&](const CheckStep& s) { return s.lab == step.lab; }),
                      queue.end());
          sanitizing.stop_lab(step.lab);
        }
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
      1, std::min<std::size_t>(static_cast<std::size_t>(checkers), queue.size()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  sanitizer.finish();
  if (!failure.empty()) throw std::runtime_error(failure);
  for (std::size_t i : order) drop_after_hang(p.labs[i]);
  if (!no_cuda) rerun_stopped_sanitizer_groups(p, sanitizing, c);
  return !no_cuda;
}

GroupedRuns check_held(const PreparedSubmission& p, const std::vector<std::size_t>& labs,
                       const LabRunContext& c, const fs::path& hold, double hold_limit_s,
                       const std::function<double(const std::vector<std::string>&)>& released_at) {
  std::vector<std::size_t> built_order = labs;  // ninja links the labs in their order
  std::sort(built_order.begin(), built_order.end());
  GroupsPlan plan = plan_groups(p, built_order, c);
  if (!list_and_split(plan, tests_checkers(c), c)) return {};
  // Each group tests its parts in the labs' order, each as soon as it is released.
  for (std::vector<std::size_t>& group : plan.groups) std::sort(group.begin(), group.end());
  const Hold waits{hold, hold_limit_s, released_at};
  return run_groups(plan, c, &waits);
}

void start_held_checkers(const PreparedSubmission& p, const std::vector<std::size_t>& labs,
                         const LabRunContext& c, TimingLock& timing, double hold_limit_s,
                         HeldChecks& held) {
  if (labs.size() < 2) return;
  held.labs = labs;
  for (std::size_t i : labs) held.names.push_back(p.labs[i].lab);
  held.hold = c.logs / "tests" / "held";
  std::error_code ec;
  fs::remove_all(held.hold, ec);  // an earlier grading's words into the same folder must not count
  fs::create_directories(held.hold, ec);
  held.runs = std::async(std::launch::async, [&p, &c, &timing, &held, hold_limit_s] {
    const std::shared_lock<TimingLock> sharing(timing);
    return check_held(
        p, held.labs, c, held.hold, hold_limit_s,
        [&held](const std::vector<std::string>& labs) { return held.released_at(labs); });
  });
}

HeldChecks::~HeldChecks() {
  release_rest();  // then the future's end waits for the checkers
}

double HeldChecks::released_at(const std::vector<std::string>& labs) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  double last = 0;
  for (const std::string& lab : labs) {
    const auto found = released_.find(lab);
    if (found == released_.end()) return std::numeric_limits<double>::infinity();
    last = std::max(last, found->second);
  }
  return last;
}

void HeldChecks::release(const std::string& lab, bool go) {
  if (hold.empty() || std::find(names.begin(), names.end(), lab) == names.end()) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!released_.emplace(lab, now_seconds()).second) return;  // told once
  }
  // Written whole, then renamed into place: a checker reads the one word or no file.
  const fs::path file = hold / lab, written = hold / (lab + ".new");
  try {
    write_file(written, go ? "go\n" : "stop\n");
  } catch (const std::exception&) {
    return;  // its parts stay untested: they run alone where the lab is runnable
  }
  std::error_code ec;
  fs::rename(written, file, ec);
}

void HeldChecks::release_rest() {
  for (const std::string& lab : names) release(lab, false);
}

/// Runs again, alone on the GPU, every suite of the lab in which a test skipped itself.
void rerun_skipped_suites(LabFacts& f, const LabRunContext& c) {
  const std::vector<OpPlan>& plans = c.course.plans(f.lab);
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
      const std::vector<TestOutcome> earlier = own_failures(run.tests);  // they stand
      SuiteOptions again = suite_options(c, f.lab, plan, hidden);
      use_tests_key(again, c, "tests again");
      run = run_gtest_suite(again);
      run.op = plan.op;
      keep_first_failures(earlier, run);
      run.checker_contexts += contexts;  // the first run's processes count too
      run.lab_process_starts += lab_processes;
      c.progress.line(fmt::format("{}{}: {} tests {}", c.tag, f.lab, hidden ? "hidden" : "public",
                                  suite_line(run)));
    }
  }
}

}  // namespace reduce::grade
