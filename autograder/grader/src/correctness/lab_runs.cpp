// What the correctness phase's steps share (lab_runs.hpp).
#include "lab_runs.hpp"

#include <reduce/keyed_hash.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <thread>
#include <utility>

namespace reduce::grade {

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

void use_tests_key(SuiteOptions& so, const LabRunContext& c, std::string_view use) {
  so.env.erase(std::remove_if(so.env.begin(), so.env.end(),
                              [](const auto& v) { return v.first == "REDUCE_SEED"; }),
               so.env.end());
  so.env.emplace_back("REDUCE_SEED", std::to_string(derive_key(c.p.seed, use)));
}

SuiteOptions suite_options(const LabRunContext& c, const std::string& lab, const OpPlan& plan,
                           bool hidden) {
  const Limits& limits = c.rubric.limits;
  const SuiteKind kind = hidden ? SuiteKind::kHidden : SuiteKind::kPublic;
  SuiteOptions so;
  so.binary = c.p.course->manifest.suites(plan.op, kind).checker;
  so.args = lab_args(c, lab, plan, kind);
  so.env = c.env;
  use_tests_key(so, c, "tests alone");
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

namespace {

/// balanced_groups(), where the items of one \p owner go to different groups while there is one
/// without them (the heaviest first, each into the lightest such group).
std::vector<std::vector<std::size_t>> balanced_apart(const std::vector<double>& weights,
                                                     std::size_t count,
                                                     const std::vector<std::size_t>& owner) {
  std::vector<std::size_t> heaviest(weights.size());
  for (std::size_t i = 0; i < heaviest.size(); ++i) heaviest[i] = i;
  std::stable_sort(heaviest.begin(), heaviest.end(),
                   [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
  std::vector<std::vector<std::size_t>> groups(
      std::min(std::max<std::size_t>(count, 1), weights.size()));
  std::vector<double> load(groups.size(), 0.0);
  for (std::size_t i : heaviest) {
    const auto holds_owner = [&](const std::vector<std::size_t>& g) {
      return std::any_of(g.begin(), g.end(), [&](std::size_t j) { return owner[j] == owner[i]; });
    };
    std::size_t g = groups.size();
    for (std::size_t j = 0; j < groups.size(); ++j)
      if (!holds_owner(groups[j]) && (g == groups.size() || load[j] < load[g])) g = j;
    if (g == groups.size())
      g = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    groups[g].push_back(i);
    load[g] += weights[i];
  }
  return groups;
}

}  // namespace

/// Splits the indices of \p weights into up to \p count groups of about equal total weight: the
/// heaviest first, each into the lightest group so far. No group is empty.
std::vector<std::vector<std::size_t>> balanced_groups(const std::vector<double>& weights,
                                                      std::size_t count) {
  std::vector<std::size_t> own(weights.size());
  for (std::size_t i = 0; i < own.size(); ++i) own[i] = i;
  return balanced_apart(weights, count, own);
}

std::vector<std::vector<PartPiece>> checker_groups(const PartSeconds& table,
                                                   const std::vector<PartJob>& jobs,
                                                   std::size_t count) {
  std::vector<double> weights;
  double total = 0;
  for (const PartJob& job : jobs) {
    weights.push_back(table.weight(job.lab, job.op, job.tests));
    total += weights.back();
  }
  const std::size_t groups = std::max<std::size_t>(count, 1);
  const double share = total / static_cast<double>(groups);
  // The phase cannot end before its heaviest part does: a part heavier than an equal share is
  // cut into pieces of at most a share each. Its tests are dealt out in turn, so that neighbours
  // (a suite's largest sizes) land apart; the table has no seconds per test, so each piece
  // weighs an equal part of the whole.
  std::vector<PartPiece> pieces;
  std::vector<double> piece_weights;
  std::vector<std::size_t> owner;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    std::size_t n = 1;
    if (share > 0 && weights[k] > share)
      n = std::min({static_cast<std::size_t>(std::ceil(weights[k] / share)), groups,
                    std::max<std::size_t>(jobs[k].tests, 1)});
    for (std::size_t p = 0; p < n; ++p) {
      PartPiece piece{k, {}};
      for (std::size_t t = p; t < jobs[k].tests; t += n) piece.tests.push_back(t);
      pieces.push_back(std::move(piece));
      piece_weights.push_back(weights[k] / static_cast<double>(n));
      owner.push_back(k);
    }
  }
  std::vector<std::vector<PartPiece>> result;
  for (const std::vector<std::size_t>& g : balanced_apart(piece_weights, count, owner)) {
    result.emplace_back();
    for (std::size_t i : g) result.back().push_back(pieces[i]);
  }
  return result;
}

std::optional<SuiteRun> merge_pieces(const std::vector<std::optional<SuiteRun>>& pieces,
                                     const std::vector<std::string>& tests) {
  if (pieces.empty() || std::any_of(pieces.begin(), pieces.end(),
                                    [](const std::optional<SuiteRun>& r) { return !r; }))
    return std::nullopt;
  SuiteRun run = *pieces.front();
  run.tests.clear();
  run.logs.clear();
  run.seconds = 0;
  run.checker_contexts = run.lab_process_starts = run.unexplained_skips = 0;
  std::map<std::string, TestOutcome> done;
  for (const std::optional<SuiteRun>& piece : pieces) {
    for (const TestOutcome& t : piece->tests) done[t.name] = t;
    for (const std::string& log : piece->logs)
      if (std::find(run.logs.begin(), run.logs.end(), log) == run.logs.end())
        run.logs.push_back(log);
    run.not_implemented = run.not_implemented || piece->not_implemented;
    run.attempts = std::max(run.attempts, piece->attempts);  // each test ran once
    run.checker_contexts += piece->checker_contexts;
    run.lab_process_starts += piece->lab_process_starts;
    run.unexplained_skips += piece->unexplained_skips;
    run.seconds += piece->seconds;
  }
  for (const std::string& name : tests)
    if (const auto it = done.find(name); it != done.end()) run.tests.push_back(it->second);
  return run;
}

}  // namespace reduce::grade
