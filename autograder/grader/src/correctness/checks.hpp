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

#include <cstddef>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <mutex>
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
  bool started = false;  ///< its checkers were started (the plan listed tests)
};

/// The several-lab tests checkers of the labs \p labs (indices into p.labs, none of them built
/// yet), started at once: each makes its CUDA contexts while the labs build, and before each of
/// its parts (in the labs' order, the order ninja links them in) waits in the hold folder \p hold
/// (LaunchSpec::hold, at most \p hold_limit_s in all) for the word in that lab's file
/// (HeldChecks::release()). A group's tests' limit counts from the last release of its labs
/// (\p released_at, now_seconds()'s clock, infinite until then): past it, those still running are
/// killed and their parts run alone. Hold the GPU's timing lock shared around it.
GroupedRuns check_held(const PreparedSubmission& p, const std::vector<std::size_t>& labs,
                       const LabRunContext& c, const std::filesystem::path& hold,
                       double hold_limit_s,
                       const std::function<double(const std::vector<std::string>&)>& released_at);

/// The several-lab checkers started while the labs build (check_held()), each lab released to
/// its tests as soon as it is built and checked. Its end tells every lab not told yet "stop" and
/// waits for the checkers.
struct HeldChecks {
  std::vector<std::size_t> labs;   ///< the labs check_held() planned its checkers for
  std::vector<std::string> names;  ///< their folders, whose files in \ref hold tell them
  std::filesystem::path hold;      ///< their hold folder (none: no held checkers)
  std::future<GroupedRuns> runs;   ///< check_held()'s runs

  HeldChecks() = default;
  HeldChecks(const HeldChecks&) = delete;
  HeldChecks& operator=(const HeldChecks&) = delete;
  ~HeldChecks();

  /// Writes the file of the lab folder \p lab in the hold folder, once: \p go starts its parts'
  /// tests, else its parts are never opened. Any thread may call it.
  void release(const std::string& lab, bool go);
  /// release(lab, false) for every lab not told yet (their parts then run alone where they run).
  void release_rest();
  /// The last release of the labs \p labs (now_seconds()'s clock), infinite until all are told.
  double released_at(const std::vector<std::string>& labs) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, double> released_;  ///< per lab folder told, when
};

/// Starts check_held() for the labs \p labs in \p held (labs, hold, runs): its checkers wait in
/// `<logs>/tests/held/` (any earlier word removed) for at most \p hold_limit_s, sharing \p timing.
/// Fewer than two labs start none.
void start_held_checkers(const PreparedSubmission& p, const std::vector<std::size_t>& labs,
                         const LabRunContext& c, TimingLock& timing, double hold_limit_s,
                         HeldChecks& held);

/// The correctness phase of the labs \p runnable (see checks.cpp); false when the tests say there
/// is no CUDA device after all. With \p held, its checkers' runs are the several-lab groups'.
bool check_labs(PreparedSubmission& p, const std::vector<std::size_t>& runnable,
                const LabRunContext& c, HeldChecks* held = nullptr);

/// Runs again, alone on the GPU, every suite of the lab in which a test skipped itself.
void rerun_skipped_suites(LabFacts& f, const LabRunContext& c);

}  // namespace reduce::grade
