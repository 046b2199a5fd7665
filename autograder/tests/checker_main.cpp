// main() of the course's checkers (course_test: every public suite; course_graded_test: every
// public and hidden suite): the lab under test and the operation's tests come from the command
// line, so one binary serves every lab of every operation.
//   course_test --lab=LIBRARY --lab-filter=FILTER [--lab-entry=ENTRY] [--lab-order=serial|tree]
//               [--lab-name=04_sequential] [--runner-prefix=WORD ...] [gtest flags]
//   either with --record=FILE: each test's outcome as JSON lines (outcome_record.hpp), which is
//   what the grader reads; the text on stdout is only shown.
// --lab-filter selects the operation's tests (the build writes each operation's filter into
// course-manifest.json); a test runs when it matches that filter and --gtest_filter. --lab-entry
// names the lab.cuh entry point a suite shared by several operations calls (the sum's suites:
// sum, sum_compensated, sum_reproducible). --runner-prefix, once per word, puts a command (a
// sandbox) in front of the lab's process, as tools/lab-test --under does.
// A grading gives the checker its launch spec (REDUCE_LAUNCH_SPEC), read once here into the
// process's CheckerLaunch (checker_launch.hpp): the key, the runner's sandbox and sanitizer, the
// GPU's memory; with labs in it, one process tests several labs, of any operations, in turn, all
// through one runner that holds every library (run_labs()); a spec with a hold (a checker
// started while its labs still build) makes a several-lab checker wait, its CUDA contexts made,
// before each lab's part until the grader says "go" for that lab (LabHolds). Without a spec (ctest,
// a person's run) the key is REDUCE_SEED's or the default, and nothing else is limited. The runner
// the checker starts for the lab gets none of it.
#include "outcome_record.hpp"

#include "checker_launch.hpp"

#include <reduce/not_implemented.hpp>
#include <reduce/split.hpp>
#include <reduce_runner/lab_runner.hpp>
#include <reduce_vocabulary/launch_spec.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using reduce::launch::PlannedLab;
using reduce::testing::checker_launch;

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
  reduce::testing::CheckerLaunch& launch = checker_launch();
  launch.lab = lab.name;
  launch.order = lab.order;
  launch.entry = lab.entry;
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

/// Installs the record of --record=FILE (\p path), if given.
void start_record(const std::string& path) {
  if (path.empty()) return;
  auto record = std::make_unique<reduce::testing::OutcomeRecord>(path, context_broken);
  if (!record->open()) {
    std::fprintf(stderr, "checker: cannot write the outcome record %s\n", path.c_str());
    std::exit(2);
  }
  g_record = record.get();
  ::testing::UnitTest::GetInstance()->listeners().Append(record.release());
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

/// A held checker's waits (LaunchSpec::hold, a folder; a checker started while its labs still
/// build): before a lab's first part, for the grader's word in the file named after the lab.
class LabHolds {
 public:
  explicit LabHolds(const reduce::launch::LaunchSpec& spec)
      : folder_(spec.hold), limit_s_(spec.hold_limit_s) {}

  /// True once \p lab's file says "go" (at once without a hold). False, saying why, where it
  /// says anything else, or where the hold's limit, counted from when the checker's contexts
  /// were made, passes with no file: that lab's parts are then never opened.
  bool released(const std::string& lab) {
    if (folder_.empty()) return true;
    if (const auto told = told_.find(lab); told != told_.end()) return told->second;
    std::string word;
    bool answered = false;
    for (;;) {
      // The grader writes the file whole and renames it into place: it is there complete or not.
      if (std::FILE* file = std::fopen((folder_ + "/" + lab).c_str(), "r")) {
        char text[16] = {};
        word.assign(text, std::fread(text, 1, sizeof text - 1, file));
        std::fclose(file);
        answered = true;
        break;
      }
      if (held() > limit_s_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!said_held_)  // the wait before the first part, which no lab's code precedes
      std::fprintf(stderr, "%s%.2f s\n", reduce::runner::kCheckerHeldLine, held());
    said_held_ = true;
    const bool go = word == "go\n";
    if (!go)
      std::fprintf(stderr, "checker: %s untested: %s\n", lab.c_str(),
                   answered ? "the grader said it did not build or pass its checks"
                            : "no word from the grader within the hold's limit");
    return told_[lab] = go;
  }

 private:
  double held() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  std::string folder_;
  double limit_s_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::map<std::string, bool> told_;
  bool said_held_ = false;
};

/// Tests every lab of \p labs in turn, once per repetition (one per sanitizer tool, each with
/// its runner under that tool, the spec's runner repetitions): before each lab's tests its
/// open_part() line, then GoogleTest's run of the tests its line selects (each lab a part of the
/// outcome record of --record=FILE). One runner serves
/// every lab of a repetition; it is stopped after a lab with a failure other than a stub's "not
/// implemented", so that the next lab starts in a fresh one. A lab that \p holds does not
/// release is skipped, its part not opened.
int run_labs(const std::vector<PlannedLab>& labs, const std::string& mark, const std::string& base,
             LabHolds& holds) {
  const int repetitions = std::max(1, static_cast<int>(::testing::GTEST_FLAG(repeat)));
  ::testing::GTEST_FLAG(repeat) = 1;
  reduce::runner::LabRunner& runner = reduce::runner::LabRunner::of_process();
  int failed = 0;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    runner.begin_repetition(repetition);
    for (std::size_t i = 0; i < labs.size(); ++i) {
      if (!holds.released(labs[i].name)) continue;
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

/// The checker's own options, taken out of its command line.
struct CommandLine {
  std::string library;                            ///< --lab: the lab's library (one lab)
  std::string filter;                             ///< --lab-filter: the operation's tests
  std::string record;                             ///< --record: the outcome record
  std::optional<std::string> name, order, entry;  ///< --lab-name, --lab-order, --lab-entry
  std::vector<std::string> runner_prefix;  ///< --runner-prefix, once per word (a person's run)
};

/// Takes the checker's own options (--lab=..., --runner-prefix=...) into \p line and returns
/// the other arguments, for GoogleTest.
std::vector<char*> take_options(int argc, char** argv, CommandLine& line) {
  std::vector<char*> rest;
  const auto value = [](const char* arg, const char* flag) -> const char* {
    const std::size_t length = std::strlen(flag);
    return std::strncmp(arg, flag, length) == 0 ? arg + length : nullptr;
  };
  for (int i = 0; i < argc; ++i) {
    if (const char* v = value(argv[i], "--lab=")) {
      line.library = v;
    } else if (const char* f = value(argv[i], "--lab-filter=")) {
      line.filter = f;
    } else if (const char* r = value(argv[i], "--record=")) {
      line.record = r;
    } else if (const char* n = value(argv[i], "--lab-name=")) {
      line.name = n;
    } else if (const char* o = value(argv[i], "--lab-order=")) {
      line.order = o;
    } else if (const char* e = value(argv[i], "--lab-entry=")) {
      line.entry = e;
    } else if (const char* w = value(argv[i], "--runner-prefix=")) {
      line.runner_prefix.push_back(w);
    } else {
      rest.push_back(argv[i]);
    }
  }
  return rest;
}

/// Reads this process's launch once: the grader's spec, or a person's run from \p line and
/// REDUCE_SEED; the lab under test from \p line. False, with what is wrong on stderr, where the
/// spec does not read, a key does not read, or --runner-prefix comes beside a spec.
bool read_launch(const CommandLine& line) {
  using namespace reduce::launch;
  reduce::testing::CheckerLaunch& launch = checker_launch();
  try {
    std::optional<LaunchSpec> spec = launch_spec_from_environment(Child::kChecker);
    if (spec && !line.runner_prefix.empty())
      throw std::invalid_argument(
          "--runner-prefix is for a run without a launch spec, whose "
          "runner says how the lab's process starts");
    launch.graded = spec.has_value();
    if (spec) launch.spec = std::move(*spec);
    launch.spec.runner.prefix = launch.graded ? launch.spec.runner.prefix : line.runner_prefix;
    const std::optional<std::uint64_t> seed =
        launch.graded ? launch.spec.seed : seed_from_environment();
    launch.seed = seed.value_or(reduce::testing::kDefaultSeed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checker: %s\n", e.what());
    return false;
  }
  launch.lab = line.name.value_or(launch.lab);
  launch.order = line.order.value_or(launch.order);
  launch.entry = line.entry.value_or(launch.entry);
  return true;
}

/// Configures the process's runner (LabRunner::of_process()) from the launch: its spec's runner
/// and the libraries of its labs, else --lab's. False where there is no library to test.
bool configure_runner(const CommandLine& line) {
  const reduce::launch::LaunchSpec& spec = checker_launch().spec;
  reduce::runner::RunnerOptions options = reduce::runner::RunnerOptions::from_launch(spec.runner);
  for (const PlannedLab& lab : spec.labs) options.libraries.push_back(lab.library);
  if (spec.labs.empty() && !line.library.empty()) options.libraries.push_back(line.library);
  const bool has_lab = !options.libraries.empty();
  reduce::runner::LabRunner::configure_process(std::move(options));
  return has_lab;
}

/// The lab's process first, so that it makes its CUDA context while this one makes its own:
/// under several checkers at once, contexts are much of a grading's time. A runner that cannot
/// start is reported by the first test that calls it. Then this process's CUDA context, timed
/// apart from the first test (without a GPU the tests say so themselves).
void start_contexts() {
  try {
    reduce::runner::LabRunner::of_process().start_early();
  } catch (const std::exception&) {
  }
  const auto start = std::chrono::steady_clock::now();
  if (cudaFree(nullptr) == cudaSuccess)
    std::fprintf(stderr, "%s%.2f s\n", reduce::runner::kCheckerContextLine,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace

int main(int argc, char** argv) {
  CommandLine line;
  std::vector<char*> rest = take_options(argc, argv, line);
  if (!read_launch(line)) return 2;
  int count = static_cast<int>(rest.size());
  rest.push_back(nullptr);
  ::testing::InitGoogleTest(&count, rest.data());
  const std::string base = ::testing::GTEST_FLAG(filter);
  const reduce::launch::LaunchSpec& spec = checker_launch().spec;
  const bool one_lab = spec.labs.empty();
  const bool listing = ::testing::GTEST_FLAG(list_tests);
  const bool has_lab = configure_runner(line);
  if (!one_lab && listing) return list_labs(spec.labs, spec.mark, base);
  if (!listing) start_record(line.record);
  if (one_lab && !line.filter.empty())
    ::testing::GTEST_FLAG(filter) = selection({line.filter}, base);
  // Each repetition of the tests may run the lab under another sanitizer tool (the spec's
  // runner repetitions): one checker process, one runner per tool.
  struct RepetitionListener : ::testing::EmptyTestEventListener {
    void OnTestIterationStart(const ::testing::UnitTest&, int iteration) override {
      reduce::runner::LabRunner::of_process().begin_repetition(iteration);
    }
  };
  if (one_lab && !spec.runner.repetitions.empty())
    ::testing::UnitTest::GetInstance()->listeners().Append(new RepetitionListener);
  if (has_lab && !listing) start_contexts();
  if (!one_lab) {
    LabHolds holds(spec);
    return run_labs(spec.labs, spec.mark, base, holds);
  }
  return RUN_ALL_TESTS();
}
