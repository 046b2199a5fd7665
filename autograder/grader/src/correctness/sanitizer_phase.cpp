// The compute-sanitizer step of the correctness phase (sanitizer_phase.hpp).
#include "sanitizer_phase.hpp"

#include "lab_runs.hpp"

#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/sanitizer.hpp>
#include <reduce_grade/processes/gpu_share.hpp>
#include <reduce_grade/submission/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <stdexcept>

namespace reduce::grade {

namespace {

/// The sanitizer group of \p members (labs of any operations) for run_sanitizer_group(): its
/// checker's log logs/sanitizer/<name>.log; each part runs its operation's public tests at the
/// rubric's sizes for that operation; each lab's own spec (for a run alone) has the log it
/// always had.
SanitizerGroupSpec sanitizer_group_spec(const PreparedSubmission& p, const std::string& name,
                                        const std::vector<SanitizedMember>& members,
                                        const std::atomic<bool>* stop, const LabRunContext& c) {
  const Limits& limits = c.rubric.limits;
  SanitizerGroupSpec spec;
  SanitizerSpec& common = spec.common;
  common.sanitizer = c.sanitizer;
  common.tools = c.rubric.sanitizer.tools;
  common.checker = c.p.course->manifest.public_checker;
  common.env = c.env;
  common.launch = c.launch;
  common.timeout_s = limits.sanitizer_timeout_s;
  common.output_cap = limits.output_cap_bytes;
  common.log_file = c.logs / "sanitizer" / (name + ".log");
  common.cancel = stop;  // the labs' own runs too (copied below)
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

}  // namespace

/// Runs \p plan's groups, up to parallel_checks at once, and stores their runs in the labs'
/// facts.
void run_sanitizer_plan(PreparedSubmission& p, const SanitizerPlan& plan, const LabRunContext& c) {
  std::mutex facts;  // the labs' facts, written by several groups
  run_in_parallel(plan.groups.size(), c.rubric.limits.parallel_checks, [&](std::size_t g) {
    std::vector<SanitizedMember> group;
    std::vector<std::string> names;
    for (std::size_t k : plan.groups[g]) {
      group.push_back(plan.members[k]);
      names.push_back(
          fmt::format("{} ({})", p.labs[plan.members[k].lab].lab, plan.members[k].plan.op));
    }
    const SanitizerGroupSpec spec =
        sanitizer_group_spec(p, fmt::format("group_{}", g), group, &plan.stop[g], c);
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

SanitizerBeside::SanitizerBeside(PreparedSubmission& p, const SanitizerPlan& plan,
                                 const LabRunContext& c)
    : thread_([this, &p, &plan, &c] {
        try {
          run_sanitizer_plan(p, plan, c);
        } catch (const std::exception& e) {
          failure_ = e.what();
        } catch (...) {
          failure_ = "an exception that is not a std::exception";
        }
      }) {}

SanitizerBeside::~SanitizerBeside() {
  if (thread_.joinable()) thread_.join();
}

void SanitizerBeside::finish() {
  thread_.join();
  if (!failure_.empty()) throw std::runtime_error("compute-sanitizer phase: " + failure_);
}

}  // namespace reduce::grade
