// What the correctness phase's steps share (lab_runs.hpp).
#include "lab_runs.hpp"

#include <reduce/keyed_hash.hpp>
#include <reduce_grade/processes/gpu_share.hpp>

#include <algorithm>
#include <utility>

namespace reduce::grade {

launch::LaunchSpec tests_launch(std::uint64_t secret, const std::vector<std::string>& runner_prefix,
                                const std::string& cuda_device, const Limits& limits) {
  launch::LaunchSpec told;
  told.seed = derive_key(secret, "tests");
  told.runner.prefix = runner_prefix;
  told.runner.call_timeout_s = 60;
  // The large-memory slots (MemoryLease in autograder/tests/gpu_test.hpp): lock files of the
  // GPU, shared with every submission graded on it at once; no lab's sandbox shows them.
  told.memory_slots_dir = gpu_memory_slots(cuda_device).string();
  told.memory_slots = std::max(1, limits.parallel_labs);
  // The tests count on no more memory than the rubric lets the grading use (memory_shortfall(),
  // MemoryLease in autograder/tests/gpu_test.hpp).
  if (const auto usable = usable_gpu_memory(std::nullopt, limits.gpu_memory_gib))
    told.gpu_memory_bytes = *usable;
  return told;
}

/// The checker's arguments that name the lab under test (the checker starts its runner) and
/// select its operation's suites of \p kind.
std::vector<std::string> lab_args(const LabRunContext& c, const std::string& lab,
                                  const OpPlan& plan, SuiteKind kind) {
  const CourseLab* cl = c.course.find(lab);
  std::vector<std::string> args = {
      "--lab=" + c.p.build.manifest.library(lab, plan.op).string(),
      "--lab-order=" + (cl != nullptr ? cl->order : std::string("tree")), "--lab-name=" + lab};
  SuiteSelection suites = c.p.course->manifest.suites(plan.op, kind);
  if (cl != nullptr) suites.filter = filter_without(suites.filter, cl->left_out);
  for (std::string& arg : suites.args()) args.push_back(std::move(arg));
  return args;
}

void use_tests_key(SuiteOptions& so, const LabRunContext& c, std::string_view use) {
  so.launch.seed = derive_key(c.p.seed, use);
}

SuiteOptions suite_options(const LabRunContext& c, const std::string& lab, const OpPlan& plan,
                           bool hidden) {
  const Limits& limits = c.rubric.limits;
  const SuiteKind kind = hidden ? SuiteKind::kHidden : SuiteKind::kPublic;
  SuiteOptions so;
  so.binary = c.p.course->manifest.suites(plan.op, kind).checker;
  so.args = lab_args(c, lab, plan, kind);
  so.env = c.env;
  so.launch = c.launch;
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
          {cl != nullptr ? filter_without(suites.filter, cl->left_out) : suites.filter}};
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

std::vector<std::vector<std::size_t>> checker_groups(const PartSeconds& table,
                                                     const std::vector<PartJob>& jobs,
                                                     std::size_t count) {
  std::vector<double> weights;
  for (const PartJob& job : jobs) weights.push_back(table.weight(job.lab, job.op, job.tests));
  return balanced_groups(weights, count);
}

}  // namespace reduce::grade
