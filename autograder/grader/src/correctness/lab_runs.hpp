/// \file
/// \brief What the correctness phase's steps share (inside the grader's core): a lab's
/// operations, the checker arguments and options that name a lab, a lab's part of a several-lab
/// checker, and running jobs side by side.
#pragma once

#include "checks.hpp"

#include <reduce_grade/base/manifest.hpp>
#include <reduce_grade/base/part_seconds.hpp>
#include <reduce_grade/observations/gtest_suite.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reduce::grade {

/// The checker's arguments that name the lab under test (the checker starts its runner) and
/// select its operation's suites of \p kind.
std::vector<std::string> lab_args(const LabRunContext& c, const std::string& lab,
                                  const OpPlan& plan, SuiteKind kind);

/// Gives \p so the checkers' key for one \p use of the grading secret (REDUCE_SEED, derived by
/// reduce::derive_key()): the tests of several-lab checkers, of a lab alone ("tests alone", the
/// default of suite_options()) and of suites run again each get inputs of their own, so a run
/// after another never meets the same inputs.
void use_tests_key(SuiteOptions& so, const LabRunContext& c, std::string_view use);

/// The options of one checker process for \p lab's public (or \p hidden) suites of \p plan.
SuiteOptions suite_options(const LabRunContext& c, const std::string& lab, const OpPlan& plan,
                           bool hidden);

/// The public and hidden suites of \p plan in one checker process (the graded checker).
SuiteOptions graded_suite_options(const LabRunContext& c, const std::string& lab,
                                  const OpPlan& plan);

/// \p lab's part of a several-lab checker: its library of \p plan's operation and the filter of
/// that operation's suites of \p kind.
PlannedLab planned_part(const LabRunContext& c, const std::string& lab, const OpPlan& plan,
                        SuiteKind kind);

/// Runs \p job(0) ... job(count - 1) on up to \p threads threads; what a job throws is its own
/// business (jobs catch their exceptions).
void run_in_parallel(std::size_t count, int threads, const std::function<void(std::size_t)>& job);

/// Splits the indices of \p weights into up to \p count groups of about equal total weight: the
/// heaviest first, each into the lightest group so far. No group is empty.
std::vector<std::vector<std::size_t>> balanced_groups(const std::vector<double>& weights,
                                                      std::size_t count);

/// One part of the tests' several-lab checkers, as their groups weigh it.
struct PartJob {
  std::string lab;        ///< lab folder
  std::string op;         ///< the operation
  std::size_t tests = 0;  ///< the number of tests it runs
};

/// One checker's share of a part: the part (an index into the jobs) and the tests of it that run
/// there (indices into the part's list, ascending): all of them, or a piece of a part split
/// across checkers.
struct PartPiece {
  std::size_t job = 0;             ///< index into the jobs
  std::vector<std::size_t> tests;  ///< indices into the part's list of tests

  /// Same part, same tests.
  bool operator==(const PartPiece& other) const { return job == other.job && tests == other.tests; }
};

/// Splits \p jobs into up to \p count groups of about equal measured seconds: balanced_groups()
/// over PartSeconds::weight(), each part's seconds in \p table, a part the table lacks its tests
/// times the table's median seconds per test (and so, with an empty table, by numbers of tests).
/// A part heavier than an equal share of the whole is cut into ceil(weight / share) pieces (at
/// most one per group and one per test), its tests dealt out in turn, each piece weighing an
/// equal part of it, and no two pieces of a part share a group. Every other part is one piece of
/// all its tests.
std::vector<std::vector<PartPiece>> checker_groups(const PartSeconds& table,
                                                   const std::vector<PartJob>& jobs,
                                                   std::size_t count);

/// The one run of a part from the runs of its \p pieces in several-lab checkers (each a
/// LabsRun::labs entry, empty where that piece was not kept), as one checker of all of them would
/// report it: empty unless every piece was kept; its tests in the order of \p tests (the part's
/// list); its seconds, logs, restarts and start-ups those of all the pieces.
std::optional<SuiteRun> merge_pieces(const std::vector<std::optional<SuiteRun>>& pieces,
                                     const std::vector<std::string>& tests);

}  // namespace reduce::grade
