/// \file
/// \brief The correctness phase of a grading (inside the grader's core: not an interface of its
/// own): the public and hidden suites, compute-sanitizer, and what a lab's runs say of it.
#pragma once

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/observations/facts.hpp>
#include <reduce_grade/submission/submission.hpp>
#include <reduce_vocabulary/launch_spec.hpp>

#include <cstddef>
#include <filesystem>
#include <future>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// Whether a lab's suites hung and whether any test failed, from the suites run so far.
struct LabState {
  bool hung = false;          ///< a suite timed out or flooded its output
  std::string hung_why;       ///< which, for the report
  bool tests_failed = false;  ///< a public or hidden test failed, or a suite counted none
};

/// What the lab's suites run so far say of it.
LabState assess(const LabFacts& f);

/// What every lab's correctness runs share.
struct LabRunContext {
  const PreparedSubmission& p;
  const Course& course;
  const Rubric& rubric;
  const std::vector<std::pair<std::string, std::string>>& env;  ///< the checkers' environment
  const std::filesystem::path& sanitizer;  ///< compute-sanitizer (empty: not found)
  /// What every checker is told (its launch spec, SuiteOptions::launch): the runner's sandbox,
  /// its call timeout, the GPU's memory and its large-memory slots; each run sets its own key.
  const launch::LaunchSpec& launch;
  std::filesystem::path logs;  ///< <out>/logs
  const std::string& tag;
  Progress& progress;
  ProcessCounts& counts;  ///< the processes of checkers whose runs no lab keeps
};

/// What the parts of several-lab checkers found: per (lab index, operation), the run of a part
/// whose tests all passed there, and the tests that failed in a part that did not (that part runs
/// again alone).
struct GroupedRuns {
  std::map<std::pair<std::size_t, std::string>, SuiteRun> passed;
  std::map<std::pair<std::size_t, std::string>, std::vector<TestOutcome>> failures;
  ProcessCounts counts;  ///< the checkers' and lab processes' starts
};

/// The public and hidden tests of the labs \p labs (indices into p.labs) as the parts of one
/// several-lab checker of their own (logs/tests/early_0), even a single part: the grading starts
/// them while its other labs build (the longest part, lab 01's, is GPU time that the build leaves
/// idle). Hold the GPU's timing lock shared around it. check_labs() takes what it returns as its
/// own groups' runs.
GroupedRuns check_early(const PreparedSubmission& p, const std::vector<std::size_t>& labs,
                        const LabRunContext& c);

/// Parts that started before the correctness phase (check_early()): their labs, and their runs.
struct EarlyChecks {
  std::vector<std::size_t> labs;
  std::future<GroupedRuns> runs;
};

/// The correctness phase of the labs \p runnable (see checks.cpp); false when the tests say there
/// is no CUDA device after all. The labs of \p early (which \p runnable holds too) run in none of
/// its groups: their parts' runs are waited for once the groups end.
bool check_labs(PreparedSubmission& p, const std::vector<std::size_t>& runnable,
                const LabRunContext& c, EarlyChecks* early = nullptr);

/// Runs again, alone on the GPU, every suite of the lab in which a test skipped itself.
void rerun_skipped_suites(LabFacts& f, const LabRunContext& c);

}  // namespace reduce::grade
