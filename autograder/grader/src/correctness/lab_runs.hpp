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
#include <string>
#include <string_view>
#include <vector>

namespace reduce::grade {

/// The checker's arguments that name the lab under test (the checker starts its runner) and
/// select its operation's suites of \p kind.
std::vector<std::string> lab_args(const LabRunContext& c, const std::string& lab,
                                  const OpPlan& plan, SuiteKind kind);

/// Gives \p so the checkers' key for one \p use of the grading secret (its launch spec's seed,
/// derived by reduce::derive_key()): the tests of several-lab checkers, of a lab alone ("tests
/// alone", the default of suite_options()) and of suites run again each get inputs of their own, so
/// a run after another never meets the same inputs.
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

/// Splits \p jobs into up to \p count groups of about equal measured seconds: balanced_groups()
/// over PartSeconds::weight(), each part's seconds in \p table, a part the table lacks its tests
/// times the table's median seconds per test (and so, with an empty table, by numbers of tests).
/// A part heavier than an equal share of the whole gets a group of its own: the lightest group
/// is never above that share.
std::vector<std::vector<std::size_t>> checker_groups(const PartSeconds& table,
                                                     const std::vector<PartJob>& jobs,
                                                     std::size_t count);

}  // namespace reduce::grade
