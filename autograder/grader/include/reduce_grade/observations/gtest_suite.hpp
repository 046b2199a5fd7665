/// \file
/// \brief Runs a GoogleTest binary robustly and reports every test's outcome.
///
/// The binary is listed first (--gtest_list_tests), then run with --gtest_output=json. Its
/// streamed output is parsed as it comes, so a crash, a hang, an exit() or a flood of output
/// in the middle of a test still leaves the outcome of every test before it; the test that was
/// running is failed with the reason. After a crash, or after a test fails with a "sticky" CUDA
/// error (an illegal address poisons the CUDA context, so every later test in that process
/// would fail too), the tests not yet trusted are run again in a fresh process, up to a limit
/// of restarts. After a timeout or a flood nothing is rerun: those repeat.
#pragma once

#include <reduce_grade/processes/process.hpp>
#include <reduce_vocabulary/launch_spec.hpp>

#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// The outcome of one test.
enum class TestResult { kPassed, kFailed, kSkipped };

/// One test of a suite run.
struct TestOutcome {
  std::string name;                         ///< full name, e.g. "Sizes/SumExact.MatchesBitwise/33"
  TestResult result = TestResult::kFailed;  ///< passed, failed or skipped
  std::string message;                      ///< failure or skip message (clipped)
  /// The checker found its own CUDA context lost after this failure (the record's "broken"):
  /// the tests after it would fail for nothing, so they run again in a fresh process.
  bool sticky_cuda_error = false;
};

/// What one test binary did, over all its attempts.
struct SuiteRun {
  std::string op;       ///< the operation whose suite this is (set by the grader)
  bool ran = false;     ///< the binary was found, listed its tests and ran
  std::string problem;  ///< why it did not run, or how it stopped abnormally (else empty)
  std::vector<TestOutcome> tests;  ///< every listed test, in the binary's order
  bool no_gpu = false;             ///< the binary reported "no CUDA device" (its tests skipped)
  bool not_implemented = false;    ///< a failure said "not implemented: see labs/..." (a stub)
  int unexplained_skips = 0;       ///< skips the checker did not decide (counted as failures)
  bool timed_out = false;          ///< an attempt hit the time limit
  bool output_flood = false;       ///< an attempt exceeded the output cap
  bool crashed = false;           ///< an attempt died by a signal or exited in the middle of a test
  int attempts = 0;               ///< processes started (1 + restarts)
  int checker_contexts = 0;       ///< attempts that made a CUDA context (checker_startups())
  int lab_process_starts = 0;     ///< lab processes its attempts started (checker_startups())
  double seconds = 0;             ///< wall-clock time of all attempts
  std::vector<std::string> logs;  ///< log files written

  /// Tests that passed.
  int passed() const;
  /// Tests that failed (including tests not run because the binary stopped early).
  int failed() const;
  /// Tests skipped by the suite itself (e.g. not enough device memory).
  int skipped() const;
  /// Tests that count for points: passed + failed.
  int counted() const { return passed() + failed(); }
  /// Up to \p max failures as "name: first lines of the message".
  std::vector<std::string> failure_summaries(std::size_t max, std::size_t lines_each = 6) const;
};

/// How to run one suite.
struct SuiteOptions {
  std::filesystem::path binary;   ///< the GoogleTest executable
  std::vector<std::string> args;  ///< arguments before GoogleTest's own (the lab: --lab=...)
  std::vector<std::pair<std::string, std::string>> env;  ///< e.g. {"CUDA_VISIBLE_DEVICES", "0"}
  /// What the checker is told (its key, its runner, the GPU's memory): written beside its logs,
  /// `<stem>`.launch.json, and named by REDUCE_LAUNCH_SPEC (give_launch_spec()).
  launch::LaunchSpec launch;
  double timeout_s = 300;                         ///< per attempt
  std::size_t output_cap = std::size_t{4} << 20;  ///< per attempt
  int max_restarts = 3;            ///< fresh processes after a crash or a sticky CUDA error
  std::filesystem::path log_dir;   ///< where `<stem>`.log, `<stem>`.json, `<stem>`.retryN.log go
  std::string log_stem = "tests";  ///< file name stem of the logs
  /// When set and it turns true, the checker is killed (ProcessSpec::cancel): a held checker's
  /// tests past their limit, counted from its release.
  const std::atomic<bool>* cancel = nullptr;
};

/// \p message without GoogleTest's "Expected equality of these values:" operand block, so the
/// test's own explanation ("n = 1025: got 1024, expected exactly 1025 ...") comes first.
std::string condense_failure(const std::string& message);

/// Lists, runs and, where useful, reruns one GoogleTest binary.
SuiteRun run_gtest_suite(const SuiteOptions& options);

/// True when the test \p full_name belongs to a hidden suite: its suite's own name (after an
/// instantiation prefix such as "Sizes/") starts with "Hidden", e.g. "Sizes/HiddenLarge.Exact/7".
bool is_hidden_test(const std::string& full_name);

/// The run of a graded checker (public and hidden suites in one binary) as two runs: its public
/// tests and its hidden tests (is_hidden_test). Both keep the run's process facts (problem,
/// timeouts, attempts, time, logs); the counts and the stub's mark follow each part's tests.
std::pair<SuiteRun, SuiteRun> split_hidden(const SuiteRun& run);

/// What a checker's output says it started: its own CUDA context (0 or 1) and the lab
/// processes it started, counted by the lines the checker prints for them
/// (reduce_vocabulary/channels.hpp). A diagnostic for the report, never a verdict.
struct CheckerStartups {
  int contexts = 0;       ///< the checker's own CUDA contexts
  int lab_processes = 0;  ///< lab processes (runners) started
  double held_s = 0;      ///< seconds held until its labs were built (LaunchSpec::hold)
};

/// Counts the start-up lines of one checker process's \p output.
CheckerStartups checker_startups(const std::string& output);

/// Writes \p launch to \p file (the grader's logs, which no lab process sees; the owner's alone,
/// through launch::write_launch_spec()) and names it in \p process's environment
/// (launch::kLaunchSpecVariable): the checker's one source of what the grader tells it.
/// \throws launch::LaunchSpecError where the file cannot be written.
void give_launch_spec(ProcessSpec& process, const std::filesystem::path& file,
                      const launch::LaunchSpec& launch);

/// One part of a checker that tests several labs in turn (its launch spec's labs): one lab's
/// library of one operation, and what selects that operation's tests.
struct PlannedLab {
  std::string name;               ///< lab folder, e.g. "04_sequential"
  std::string op;                 ///< the operation, e.g. "sum_compensated"
  std::string order;              ///< "serial", "tree" or "tree_atomic"
  std::string entry;              ///< the entry point the operation's shared suites call
  std::filesystem::path library;  ///< its library of that operation
  /// GoogleTest filters a test must all match to run in this part (the operation's; the
  /// sanitizer's small sizes), besides the command line's --gtest_filter.
  std::vector<std::string> filters;

  /// The words that name its part in the checker's output: "04_sequential sum".
  std::string label() const { return name + " " + op; }
};

/// \p labs as the launch spec's planned labs (launch::LaunchSpec::labs).
std::vector<launch::PlannedLab> launch_labs(const std::vector<PlannedLab>& labs);

/// A fresh random mark for the lines that open each lab's part of a several-lab checker's output
/// (no lab can print the line, because none knows the mark: it reaches the checker in its launch
/// spec, in the grader's logs, which the lab's process cannot read).
std::string lab_mark();

/// The parts of a several-lab checker's \p output, keyed by (repetition, index in \p labels):
/// each starts after its line "[ lab      ] MARK <repetition> <label>" and ends at the next one.
std::map<std::pair<std::size_t, std::size_t>, std::string> split_lab_output(
    const std::string& output, const std::string& mark, const std::vector<std::string>& labels);

/// The tests each part of \p labs selects in \p options' binary, in order: one listing process
/// (its spec's labs, with --gtest_list_tests), which starts no lab process and no CUDA context.
/// Empty when the binary does not list them (\p problem, if given, says why); a part that selects
/// no test has an empty list.
std::vector<std::vector<std::string>> list_lab_tests(const SuiteOptions& options,
                                                     const std::vector<PlannedLab>& labs,
                                                     std::string* problem = nullptr);

/// What one checker over several labs gave (run_gtest_suite_labs()).
struct LabsRun {
  /// Per lab, in order: its run where every listed test ran and passed; empty otherwise (a
  /// failure, a skip, a crash or a hang in it, or a checker stopped before it), for the caller
  /// to run that lab alone with run_gtest_suite(), which keeps every rule of a failing run.
  std::vector<std::optional<SuiteRun>> labs;
  /// Per lab, in order: the tests that failed in its part and ended there (a wrong result, the
  /// lab's throw: its own evidence, not a crash of the shared process), which a lone run after
  /// the group cannot erase (keep_first_failures()).
  std::vector<std::vector<TestOutcome>> failures;
  CheckerStartups startups;  ///< the checker's context and the lab processes it started
  double seconds = 0;        ///< its wall-clock time
};

/// Runs \p options' binary once over \p labs in turn, one lab process holding all their
/// libraries (stopped after a lab with a failure); \p options.args are replaced by the plan.
/// \p tests holds each part's tests (list_lab_tests()): a part is kept when every one of them
/// ran in it and passed, or failed only with a stub's "not implemented" (a lone run would say the
/// same: SuiteRun::not_implemented); any other part is left empty, to run alone.
LabsRun run_gtest_suite_labs(const SuiteOptions& options, const std::vector<PlannedLab>& labs,
                             const std::vector<std::vector<std::string>>& tests);

/// The failures of \p tests that are the lab's own evidence: a test that ended failed, in a
/// CUDA context that still worked (not one the process never reached, "not run: ...").
std::vector<TestOutcome> own_failures(const std::vector<TestOutcome>& tests);

/// The first evidence stands: every test of \p first (failures of an earlier run of the same
/// suite) fails in \p run as well, whatever \p run says of it, its message the earlier one's.
void keep_first_failures(const std::vector<TestOutcome>& first, SuiteRun& run);

/// run_gtest_suite_labs() after list_lab_tests() of the same parts.
LabsRun run_gtest_suite_labs(const SuiteOptions& options, const std::vector<PlannedLab>& labs);

/// Full test names from the output of --gtest_list_tests, in order.
std::vector<std::string> parse_gtest_list(const std::string& output);

/// What a checker's outcome record (autograder/tests/outcome_record.hpp) says about one part:
/// one lab of a plan in one repetition, or one repetition of a lone checker.
struct RecordedPart {
  std::vector<TestOutcome> finished;       ///< tests that ended, in order
  std::optional<std::string> in_progress;  ///< a test that started and never ended
  bool completed = false;                  ///< every selected test ran (the part's end line)
  bool no_gpu = false;                     ///< the checker skipped a test for want of a CUDA device
};

/// Parses an outcome record, written by the checker alone where no lab can write, into its parts
/// by (repetition, part index); lines before any part line are part 0 of repetition 0. A line
/// that does not parse is ignored (a record cut by a kill ends in one). The only source of a
/// test's verdict: GoogleTest's text stream carries the lab's own words and is never parsed for
/// one.
std::map<std::pair<std::size_t, std::size_t>, RecordedPart> parse_outcome_record(
    const std::string& text);

/// Whether \p outcome is a stub's failure: the lab's own "not implemented" throw (in a context
/// that still works), which no other lab of a group can make it say, so a lone run would say
/// the same.
bool stub_failure(const TestOutcome& outcome);

/// A GoogleTest filter that selects exactly \p names ("A.b:C.d").
std::string gtest_filter_for(const std::vector<std::string>& names);

}  // namespace reduce::grade
