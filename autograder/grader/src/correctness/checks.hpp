/// \file
/// \brief The correctness phase of a grading (inside the grader's core: not an interface of its
/// own): the public and hidden suites, compute-sanitizer, and what a lab's runs say of it.
#pragma once

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/observations/facts.hpp>
#include <reduce_grade/processes/gpu_share.hpp>
#include <reduce_grade/submission/submission.hpp>
#include <reduce_vocabulary/launch_spec.hpp>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// What every tests checker of a grading is told (LabRunContext::launch, written into its launch
/// spec in the grader's logs): the tests' key, derived from the grading secret \p secret like the
/// benchmark's (it reaches the checkers only; the lab's runner gets a clean environment), the
/// runner's sandbox \p runner_prefix and call timeout, the large-memory slots of \p cuda_device
/// and the memory \p limits let the tests use.
launch::LaunchSpec tests_launch(std::uint64_t secret, const std::vector<std::string>& runner_prefix,
                                const std::string& cuda_device, const Limits& limits);

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
  bool started = false;  ///< check_held(): its checkers were started (the plan listed tests)
};

/// The public and hidden tests of the labs \p labs (indices into p.labs) as the parts of one
/// several-lab checker of their own (logs/tests/early_0), even a single part: the grading starts
/// them while its other labs build (the longest part, lab 01's, is GPU time that the build leaves
/// idle). Hold the GPU's timing lock shared around it. check_labs() takes what it returns as its
/// own groups' runs.
GroupedRuns check_early(const PreparedSubmission& p, const std::vector<std::size_t>& labs,
                        const LabRunContext& c);

/// The several-lab tests checkers of the labs \p labs (indices into p.labs, none of them built
/// yet), started at once: each makes its CUDA contexts while the labs build, then waits at the
/// hold file \p hold (LaunchSpec::hold, at most \p hold_limit_s) for check_labs() to release it
/// (EarlyChecks::release()). Their tests' limit counts from \p released_at (now_seconds()'s clock,
/// infinite until the release): past it, those still running are killed and their parts run
/// alone. Hold the GPU's timing lock shared around it.
GroupedRuns check_held(const PreparedSubmission& p, const std::vector<std::size_t>& labs,
                       const LabRunContext& c, const std::filesystem::path& hold,
                       double hold_limit_s, const std::function<double()>& released_at);

/// Checkers that started before the correctness phase: a lab's own (check_early()), and the
/// several-lab checkers held until the build ends (check_held()). Its end releases held checkers
/// that were not released, untested, and waits for them.
struct EarlyChecks {
  std::vector<std::size_t> labs;       ///< check_early()'s labs
  std::future<GroupedRuns> runs;       ///< check_early()'s runs
  std::vector<std::size_t> held_labs;  ///< the labs check_held() planned its checkers for
  std::filesystem::path hold;          ///< their hold file (none: no held checkers)
  std::future<GroupedRuns> held;       ///< check_held()'s runs

  EarlyChecks() = default;
  EarlyChecks(const EarlyChecks&) = delete;
  EarlyChecks& operator=(const EarlyChecks&) = delete;
  ~EarlyChecks();

  /// Writes the held checkers' hold file, once: \p go starts their tests, else they end untested.
  void release(bool go);
  /// When release() wrote it (now_seconds()'s clock), infinite until then.
  double released_at() const;

 private:
  bool released_ = false;
  std::atomic<double> released_at_{std::numeric_limits<double>::infinity()};
};

/// Starts check_held() for the labs \p labs in \p early (held_labs, hold, held): its checkers
/// wait at `<logs>/tests/held.go` (any earlier one removed) for at most \p hold_limit_s, sharing
/// \p timing. Fewer than two labs start none.
void start_held_checkers(const PreparedSubmission& p, const std::vector<std::size_t>& labs,
                         const LabRunContext& c, TimingLock& timing, double hold_limit_s,
                         EarlyChecks& early);

/// The correctness phase of the labs \p runnable (see checks.cpp); false when the tests say there
/// is no CUDA device after all. The labs of \p early (which \p runnable holds too) run in none of
/// its groups: their parts' runs are waited for once the groups end.
bool check_labs(PreparedSubmission& p, const std::vector<std::size_t>& runnable,
                const LabRunContext& c, EarlyChecks* early = nullptr);

/// Runs again, alone on the GPU, every suite of the lab in which a test skipped itself.
void rerun_skipped_suites(LabFacts& f, const LabRunContext& c);

}  // namespace reduce::grade
