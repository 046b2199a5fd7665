// main() of the course's checkers (course_test: every public suite; course_graded_test: every
// public and hidden suite): the lab under test and the operation's tests come from the command
// line, so one binary serves every lab of every operation.
//   course_test --lab=LIBRARY --lab-filter=FILTER [--lab-entry=ENTRY] [--lab-order=serial|tree]
//               [--lab-name=04_sequential] [gtest flags]
//   course_test --labs-file=PLAN [--lab-mark=MARK] [gtest flags]   (or REDUCE_LAB_MARK=MARK)
//   either with --record=FILE: each test's outcome as JSON lines (outcome_record.hpp), which is
//   what the grader reads; the text on stdout is only shown.
// --lab-filter selects the operation's tests (the build writes each operation's filter into
// course-manifest.json); a test runs when it matches that filter and --gtest_filter. --lab-entry
// names the lab.cuh entry point a suite shared by several operations calls (the sum's suites:
// sum, sum_compensated, sum_reproducible). The options become REDUCE_LAB_LIBRARY,
// REDUCE_LAB_FILTER, REDUCE_LAB_ENTRY, REDUCE_LAB_ORDER and REDUCE_LAB for this process only; the
// runner it starts for the lab gets none of them. With --labs-file, one process tests several
// labs, of any operations, in turn (PLAN: one line per lab and operation,
// "name<TAB>op<TAB>order<TAB>entry<TAB>library<TAB>filter[<TAB>filter...]"), all through one
// runner that holds every library; see run_labs().
#include "outcome_record.hpp"

#include <reduce/not_implemented.hpp>
#include <reduce/split.hpp>
#include <reduce_runner/lab_runner.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace {

/// One line of a --labs-file plan: one lab's library of one operation, and what selects that
/// operation's tests.
struct PlannedLab {
  std::string name;                  ///< lab folder, e.g. "04_sequential"
  std::string op;                    ///< the operation, e.g. "sum_compensated"
  std::string order;                 ///< "serial", "tree" or "tree_atomic"
  std::string entry;                 ///< the entry point the shared suites call
  std::string library;               ///< the lab's library of that operation
  std::vector<std::string> filters;  ///< GoogleTest filters a test must all match
};

/// The plan's labs; a line with fewer than six fields is skipped.
std::vector<PlannedLab> read_plan(const char* path) {
  std::vector<PlannedLab> labs;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = reduce::split_fields(line, '\t');
    if (f.size() < 6) continue;
    labs.push_back({f[0], f[1], f[2], f[3], f[4], {f.begin() + 5, f.end()}});
  }
  return labs;
}

/// Whether \p name matches the glob \p pattern ('*': any run of characters, '?': any one), as
/// GoogleTest matches one pattern of a filter.
bool glob_matches(const std::string& pattern, const std::string& name) {
  std::size_t p = 0, n = 0, star = std::string::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

/// Whether \p name matches any ':'-separated pattern of \p patterns.
bool any_matches(const std::string& patterns, const std::string& name) {
  for (const std::string& pattern : reduce::split_fields(patterns, ':'))
    if (glob_matches(pattern, name)) return true;
  return false;
}

/// Whether the full test name \p name ("Suite.Test") passes the GoogleTest filter \p filter:
/// positive patterns, then after a '-' negative ones (an empty positive part before a '-' means
/// every test), GoogleTest's own rules.
bool filter_matches(const std::string& filter, const std::string& name) {
  const auto dash = filter.find('-');
  std::string positive = filter.substr(0, dash);
  if (dash != std::string::npos && positive.empty()) positive = "*";
  return any_matches(positive, name) &&
         (dash == std::string::npos || !any_matches(filter.substr(dash + 1), name));
}

/// A GoogleTest filter that names exactly the tests of this binary that match \p base and every
/// filter of \p filters ("-*", which matches nothing, when none does).
std::string selection(const std::vector<std::string>& filters, const std::string& base) {
  std::string chosen;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int s = 0; s < unit.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const std::string name = std::string(suite.name()) + "." + suite.GetTestInfo(t)->name();
      bool chosen_here = filter_matches(base, name);
      for (const std::string& filter : filters)
        chosen_here = chosen_here && filter_matches(filter, name);
      if (chosen_here) chosen += (chosen.empty() ? "" : ":") + name;
    }
  }
  return chosen.empty() ? "-*" : chosen;
}

/// Makes \p lab the lab under test of this process: its name, order and entry point for the
/// suites, and its operation's tests for GoogleTest (those that also match \p base).
void enter_lab(const PlannedLab& lab, const std::string& base) {
  setenv("REDUCE_LAB", lab.name.c_str(), 1);
  setenv("REDUCE_LAB_ORDER", lab.order.c_str(), 1);
  setenv("REDUCE_LAB_ENTRY", lab.entry.c_str(), 1);
  ::testing::GTEST_FLAG(filter) = selection(lab.filters, base);
}

/// The record of this process's outcomes (--record=FILE), or null. GoogleTest owns it.
reduce::testing::OutcomeRecord* g_record = nullptr;

/// Whether this process's CUDA context is lost: an error that a second synchronisation still
/// reports is sticky (an illegal address, a trap), so every later test would fail for nothing.
bool context_broken() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return false;
  if (cudaDeviceSynchronize() == cudaSuccess) return false;
  (void)cudaGetLastError();
  return cudaDeviceSynchronize() != cudaSuccess;
}

/// Installs the record of --record=FILE (REDUCE_OUTCOME_RECORD), if given.
void start_record() {
  const char* path = std::getenv("REDUCE_OUTCOME_RECORD");
  if (path == nullptr || *path == '\0') return;
  auto record = std::make_unique<reduce::testing::OutcomeRecord>(path, context_broken);
  if (!record->open()) {
    std::fprintf(stderr, "checker: cannot write the outcome record %s\n", path);
    std::exit(2);
  }
  g_record = record.get();
  ::testing::UnitTest::GetInstance()->listeners().Append(record.release());
  unsetenv("REDUCE_OUTCOME_RECORD");
}

/// Prints the line "[ lab      ] MARK <repetition> <name> <op>" that opens a lab's part of the
/// listing (the grader splits the listing by it; MARK comes from the grader), and opens the
/// part in the record.
void open_part(const std::string& mark, int repetition, std::size_t index, const PlannedLab& lab) {
  std::printf("[ lab      ] %s %d %s %s\n", mark.c_str(), repetition, lab.name.c_str(),
              lab.op.c_str());
  std::fflush(stdout);
  if (g_record != nullptr) g_record->part(static_cast<int>(index), lab.name, lab.op, repetition);
}

/// --gtest_list_tests over a plan: each lab's part (open_part(), repetition 0) lists the tests
/// its line selects. Starts no runner.
int list_labs(const std::vector<PlannedLab>& labs, const std::string& mark,
              const std::string& base) {
  int status = 0;
  for (std::size_t i = 0; i < labs.size(); ++i) {
    const PlannedLab& lab = labs[i];
    open_part(mark, 0, i, lab);
    enter_lab(lab, base);
    status |= RUN_ALL_TESTS();
    std::fflush(stdout);
  }
  return status;
}

/// Whether every failure of the last RUN_ALL_TESTS() was the lab's own "not implemented" (a
/// stub's untouched entry point, reduce::NotImplemented). Such a lab leaves the runner as a
/// passing one does, so the next lab may share it.
bool only_stub_failures() {
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int s = 0; s < unit.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const ::testing::TestResult& result = *suite.GetTestInfo(t)->result();
      for (int k = 0; k < result.total_part_count(); ++k) {
        const ::testing::TestPartResult& part = result.GetTestPartResult(k);
        if (part.failed() && std::strstr(part.message(), reduce::kNotImplementedPrefix) == nullptr)
          return false;
      }
    }
  }
  return true;
}

/// Tests every lab of \p labs in turn, once per repetition (one per sanitizer tool, each with
/// its runner under that tool, REDUCE_RUNNER_REPETITION_PREFIXES): before each lab's tests its
/// open_part() line, then GoogleTest's run of the tests its line selects (each lab a part of the
/// outcome record of --record=FILE). One runner serves
/// every lab of a repetition; it is stopped after a lab with a failure other than a stub's "not
/// implemented", so that the next lab starts in a fresh one.
int run_labs(const std::vector<PlannedLab>& labs, const std::string& mark,
             const std::string& base) {
  const int repetitions = std::max(1, static_cast<int>(::testing::GTEST_FLAG(repeat)));
  ::testing::GTEST_FLAG(repeat) = 1;
  reduce::runner::LabRunner& runner = reduce::runner::LabRunner::from_environment();
  int failed = 0;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    runner.begin_repetition(repetition);
    for (std::size_t i = 0; i < labs.size(); ++i) {
      enter_lab(labs[i], base);
      runner.use_library(i);
      open_part(mark, repetition, i, labs[i]);
      const bool passed = RUN_ALL_TESTS() == 0;
      if (!passed) {
        ++failed;
        if (!only_stub_failures()) runner.stop();
      }
      std::fflush(stdout);
    }
  }
  return failed == 0 ? 0 : 1;
}

/// Moves the checker's own options (--lab=..., --labs-file=...) into the environment variables
/// they stand for and returns the other arguments, for GoogleTest.
std::vector<char*> take_options(int argc, char** argv) {
  std::vector<char*> rest;
  const struct {
    const char* flag;
    const char* variable;
  } options[] = {{"--lab=", "REDUCE_LAB_LIBRARY"},       {"--lab-order=", "REDUCE_LAB_ORDER"},
                 {"--lab-name=", "REDUCE_LAB"},          {"--lab-entry=", "REDUCE_LAB_ENTRY"},
                 {"--lab-filter=", "REDUCE_LAB_FILTER"}, {"--labs-file=", "REDUCE_LABS_FILE"},
                 {"--lab-mark=", "REDUCE_LAB_MARK"},     {"--record=", "REDUCE_OUTCOME_RECORD"}};
  for (int i = 0; i < argc; ++i) {
    bool taken = false;
    for (const auto& option : options) {
      const std::size_t length = std::strlen(option.flag);
      if (std::strncmp(argv[i], option.flag, length) == 0) {
        setenv(option.variable, argv[i] + length, 1);
        taken = true;
      }
    }
    if (!taken) rest.push_back(argv[i]);
  }
  return rest;
}

/// The plan of --labs-file (empty without one); the runner is given every planned library
/// (REDUCE_LAB_LIBRARIES, RunnerOptions).
std::vector<PlannedLab> take_plan() {
  std::vector<PlannedLab> plan;
  if (const char* file = std::getenv("REDUCE_LABS_FILE")) {
    plan = read_plan(file);
    std::string libraries;
    for (const PlannedLab& lab : plan) libraries += (libraries.empty() ? "" : "\x1f") + lab.library;
    setenv("REDUCE_LAB_LIBRARIES", libraries.c_str(), 1);
    unsetenv("REDUCE_LABS_FILE");
  }
  return plan;
}

/// The lab's process first, so that it makes its CUDA context while this one makes its own:
/// under several checkers at once, contexts are much of a grading's time. A runner that cannot
/// start is reported by the first test that calls it. Then this process's CUDA context, timed
/// apart from the first test (without a GPU the tests say so themselves).
void start_contexts() {
  try {
    reduce::runner::LabRunner::from_environment().start_early();
  } catch (const std::exception&) {
  }
  const auto start = std::chrono::steady_clock::now();
  if (cudaFree(nullptr) == cudaSuccess)
    std::fprintf(stderr, "%s%.2f s\n", reduce::runner::kCheckerContextLine,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest = take_options(argc, argv);
  int count = static_cast<int>(rest.size());
  rest.push_back(nullptr);
  ::testing::InitGoogleTest(&count, rest.data());
  const std::string base = ::testing::GTEST_FLAG(filter);
  const std::vector<PlannedLab> plan = take_plan();
  const bool one_lab = plan.empty();
  const bool listing = ::testing::GTEST_FLAG(list_tests);
  const char* mark = std::getenv("REDUCE_LAB_MARK");
  if (!one_lab && listing) return list_labs(plan, mark != nullptr ? mark : "", base);
  if (!listing) start_record();
  if (const char* filter = std::getenv("REDUCE_LAB_FILTER"); one_lab && filter != nullptr)
    ::testing::GTEST_FLAG(filter) = selection({filter}, base);
  // Each repetition of the tests may run the lab under another sanitizer tool
  // (REDUCE_RUNNER_REPETITION_PREFIXES): one checker process, one runner per tool.
  struct RepetitionListener : ::testing::EmptyTestEventListener {
    void OnTestIterationStart(const ::testing::UnitTest&, int iteration) override {
      reduce::runner::LabRunner::from_environment().begin_repetition(iteration);
    }
  };
  if (one_lab && std::getenv("REDUCE_RUNNER_REPETITION_PREFIXES") != nullptr)
    ::testing::UnitTest::GetInstance()->listeners().Append(new RepetitionListener);
  const bool has_lab = std::getenv("REDUCE_LAB_LIBRARY") != nullptr ||
                       std::getenv("REDUCE_LAB_LIBRARIES") != nullptr;
  if (has_lab && !listing) start_contexts();
  if (!one_lab) return run_labs(plan, mark != nullptr ? mark : "", base);
  return RUN_ALL_TESTS();
}
