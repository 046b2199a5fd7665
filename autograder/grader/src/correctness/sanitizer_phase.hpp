/// \file
/// \brief The compute-sanitizer step of the correctness phase (inside the grader's core): the
/// labs' parts in groups of one checker each, run beside the tests and stopped for a lab that
/// hangs.
#pragma once

#include "checks.hpp"
#include "lab_runs.hpp"

#include <reduce_grade/base/course.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace reduce::grade {

/// One lab's operation under compute-sanitizer: where its runs go in LabFacts::sanitizer.
struct SanitizedMember {
  std::size_t lab;        ///< index into PreparedSubmission::labs
  OpPlan plan;            ///< the operation
  std::size_t slot;       ///< its place among the lab's sanitized operations
  std::size_t sanitized;  ///< the lab's sanitized operations (a tool's runs are that far apart)
};

/// The compute-sanitizer step of labs: every (lab, operation) with public tests of the labs that
/// still have a step (drop_after_hang()), of any operation, split into up to
/// limits.sanitizer_checkers groups; each group is one checker (run_sanitizer_group(): for each
/// tool one lab process serves the whole group, and a lab runs alone only where the group's
/// reports cannot say whose a finding is). A group can be stopped while it runs beside the tests
/// (stop_lab()): a lab that hangs in its tests would hang under the sanitizer as well.
struct SanitizerPlan {
  std::vector<SanitizedMember> members;
  std::vector<std::vector<std::size_t>> groups;  ///< indices into members
  std::unique_ptr<std::atomic<bool>[]> stop;     ///< per group: its results are not wanted

  SanitizerPlan(const PreparedSubmission& p, const std::vector<std::size_t>& labs,
                const LabRunContext& c) {
    if (c.sanitizer.empty()) return;
    for (std::size_t i : labs) {
      const LabFacts& f = p.labs[i];
      if (f.sanitizer.empty()) continue;
      const std::vector<OpPlan>& plans = c.course.plans(f.lab);
      const std::size_t sanitized = static_cast<std::size_t>(std::count_if(
          plans.begin(), plans.end(), [](const OpPlan& pl) { return pl.public_tests; }));
      std::size_t slot = 0;
      for (const OpPlan& plan : plans)
        if (plan.public_tests) members.push_back({i, plan, slot++, sanitized});
    }
    groups = balanced_groups(std::vector<double>(members.size(), 1.0),
                             static_cast<std::size_t>(c.rubric.limits.sanitizer_checkers));
    stop = std::make_unique<std::atomic<bool>[]>(groups.size());
  }

  /// Stops every group that holds lab \p lab (an index into PreparedSubmission::labs).
  void stop_lab(std::size_t lab) {
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (std::size_t k : groups[g])
        if (members[k].lab == lab) stop[g] = true;
  }

  /// The labs of the groups stopped, each once.
  std::vector<std::size_t> stopped_labs() const {
    std::vector<std::size_t> labs;
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (std::size_t k : groups[g])
        if (stop[g] && std::find(labs.begin(), labs.end(), members[k].lab) == labs.end())
          labs.push_back(members[k].lab);
    return labs;
  }
};

/// Runs \p plan's groups, up to parallel_checks at once, and stores their runs in the labs'
/// facts.
void run_sanitizer_plan(PreparedSubmission& p, const SanitizerPlan& plan, const LabRunContext& c);

/// compute-sanitizer on its own thread, beside the tests (run_sanitizer_plan()); joined by
/// finish() or, whatever happened, by the destructor.
class SanitizerBeside {
 public:
  /// Starts \p plan's groups on a thread of their own.
  SanitizerBeside(PreparedSubmission& p, const SanitizerPlan& plan, const LabRunContext& c);
  SanitizerBeside(const SanitizerBeside&) = delete;
  SanitizerBeside& operator=(const SanitizerBeside&) = delete;
  ~SanitizerBeside();

  /// Waits for the sanitizer; throws what escaped it.
  void finish();

 private:
  std::string failure_;
  std::thread thread_;  // last: started once failure_ exists
};

}  // namespace reduce::grade
