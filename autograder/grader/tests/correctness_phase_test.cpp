// The correctness phase's own decisions, without a GPU: how its work runs side by side, whose
// facts a several-lab checker's results go to, what a lab that hangs leaves, and checkers that
// start before their labs are built (check_labs() against stand-in checkers around the fake
// suite, fake_suite.cpp). How the groups are split: checker_groups_test.cpp.
#include "fake_checkers.hpp"

#include <correctness/checks.hpp>
#include <correctness/lab_runs.hpp>

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/part_seconds.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/base/util.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace reduce::grade {
namespace {

/// What run_in_parallel() did with \p count jobs on \p threads threads: how often each job ran
/// and the most that ran at once. Each job waits, up to \p wait_ms, until \p target jobs have
/// run at once, so a pool that runs them side by side is seen doing so.
struct ParallelRun {
  std::vector<int> runs;
  int peak = 0;

  ParallelRun(std::size_t count, int threads, int target, int wait_ms = 2000) {
    std::unique_ptr<std::atomic<int>[]> ran(new std::atomic<int>[count]());
    std::atomic<int> running{0}, most{0};
    run_in_parallel(count, threads, [&](std::size_t i) {
      const int now = ++running;
      int seen = most;
      while (seen < now && !most.compare_exchange_weak(seen, now)) continue;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
      while (most < target && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // overlap with the next ones
      ++ran[i];
      --running;
    });
    for (std::size_t i = 0; i < count; ++i) runs.push_back(ran[i]);
    peak = most;
  }
};

TEST(RunInParallel, EveryJobOnceAndNeverMoreThanTheThreadsAtOnce) {
  const ParallelRun many(40, 3, 3);
  EXPECT_EQ(many.runs, std::vector<int>(40, 1));
  EXPECT_EQ(many.peak, 3) << "three threads, all of them busy at some point";
  // Fewer jobs than threads: one thread per job at most.
  const ParallelRun few(2, 8, 2);
  EXPECT_EQ(few.runs, std::vector<int>(2, 1));
  EXPECT_EQ(few.peak, 2);
  // No thread asked: the caller's thread alone (each job waits a little for a second one).
  const ParallelRun alone(5, 0, 2, 50);
  EXPECT_EQ(alone.runs, std::vector<int>(5, 1));
  EXPECT_EQ(alone.peak, 1);
  EXPECT_EQ(ParallelRun(0, 4, 1).runs, std::vector<int>{});
}

TEST(RunInParallel, AJobThatThrowsStopsTheRestAndItsExceptionReachesTheCaller) {
  for (const int threads : {1, 4}) {
    std::atomic<int> ran{0};
    try {
      run_in_parallel(1000, threads, [&ran](std::size_t i) {
        ++ran;
        if (i == 3) throw std::runtime_error("job 3");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      });
      ADD_FAILURE() << "nothing thrown with " << threads << " threads";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "job 3");
    }
    EXPECT_LT(ran.load(), 1000) << "jobs went on after one threw, " << threads << " threads";
  }
}

/// One run of a lab's suite with \p passed, \p failed and \p skipped tests.
SuiteRun suite_of(int passed, int failed, int skipped = 0) {
  SuiteRun run;
  run.ran = true;
  for (int i = 0; i < passed + failed + skipped; ++i) {
    TestOutcome t;
    t.name = "T.t" + std::to_string(i);
    t.result = i < passed            ? TestResult::kPassed
               : i < passed + failed ? TestResult::kFailed
                                     : TestResult::kSkipped;
    run.tests.push_back(t);
  }
  return run;
}

TEST(Assess, TheFirstHungSuiteSaysWhyAndAnyFailureOrEmptySuiteFails) {
  LabFacts f;
  EXPECT_FALSE(assess(f).hung);
  EXPECT_FALSE(assess(f).tests_failed) << "no suite run yet";
  f.tests = {suite_of(3, 0), suite_of(2, 0, 1)};
  EXPECT_FALSE(assess(f).tests_failed) << "a skip is no failure";
  f.hidden = {suite_of(0, 0, 2)};
  EXPECT_TRUE(assess(f).tests_failed) << "a suite that counted no test";
  EXPECT_FALSE(assess(f).hung);
  f.hidden = {suite_of(1, 0)};
  f.hidden[0].timed_out = true;
  EXPECT_EQ(assess(f).hung_why, "the hidden tests timed out");
  f.tests[1].output_flood = true;  // the public suites are read first
  const LabState s = assess(f);
  EXPECT_TRUE(s.hung);
  EXPECT_EQ(s.hung_why, "the public tests flooded their output");
  EXPECT_FALSE(s.tests_failed);
  f.tests[0] = suite_of(2, 1);
  EXPECT_TRUE(assess(f).tests_failed);
}

/// A checker of the course written into \p dir, both of its ways: with labs in its launch spec it
/// is several_labs_checker() (each lab's part runs the fake suite with FAKE_MODE set to the lab's
/// name, and a run appends the lab's name to opened.txt as it opens the part); alone, it runs the
/// fake suite over --lab-filter's tests with FAKE_MODE the lab's name
/// (--lab-name), and appends that name to alone.txt for each run that is not a listing.
fs::path course_checker(const fs::path& dir) {
  several_labs_checker(dir,
                       "  mode=$lab\n"
                       "  [ -n \"$list\" ] || echo \"$lab\" >> \"$(dirname \"$0\")/opened.txt\"\n");
  const fs::path checker = dir / "checker";
  write_file(checker,
             "#!/bin/sh\n"
             "d=$(dirname \"$0\")\n"
             "[ -n \"$(" REDUCE_GRADE_FAKE_SUITE
             " --spec=labs)\" ] && exec \"$d/several-labs\" \"$@\"\n"
             "lab=''; filter='*'; list=''\n"
             "for a in \"$@\"; do case \"$a\" in --lab-name=*) lab=${a#--lab-name=};;\n"
             "  --lab-filter=*) filter=${a#--lab-filter=};;\n"
             "  --gtest_list_tests) list=1;; esac; done\n"
             "[ -z \"$list\" ] && echo \"$lab\" >> \"$d/alone.txt\"\n"
             "export FAKE_MODE=\"$lab\"\n"
             "exec " REDUCE_GRADE_FAKE_SUITE " \"--gtest_filter=$filter\" \"$@\"\n");
  fs::permissions(checker, fs::perms::owner_all);
  return checker;
}

/// A prepared submission of the labs \p labs (lab, its operations) of a course whose only
/// checker is course_checker(), with public suites and neither hidden suites nor
/// compute-sanitizer. The fake suite's behaviour in a lab's runs is the lab's name (FAKE_MODE):
/// "passes" passes, "stub" and "forge" fail as fake_suite.cpp says, "hang" hangs. The sum's
/// tests are Fake.Passes and Fake.Misbehaves; the maximum's three that always pass.
struct Phase {
  fs::path dir = make_temp_dir("reduce-grade-checks-");
  Course course;
  PreparedSubmission p;
  Rubric rubric;
  std::vector<std::pair<std::string, std::string>> env;
  fs::path no_sanitizer;
  launch::LaunchSpec told;  ///< what every checker is told
  std::string tag;
  Progress progress{true};
  ProcessCounts counts;

  explicit Phase(const std::vector<std::pair<std::string, std::vector<std::string>>>& labs) {
    auto build = std::make_shared<CourseBuild>();
    build->manifest.public_checker = course_checker(dir);
    build->manifest.operations["sum"] = {"sum", "reduce_sum_lab", "Fake.Passes:Fake.Misbehaves", "",
                                         ""};
    build->manifest.operations["maximum"] = {"maximum", "reduce_maximum_lab",
                                             "Fake.Passes:Fake.After1:Fake.After2", "", ""};
    p.course = build;
    p.seed = 20261202;
    for (const auto& [lab, ops] : labs) {
      CourseLab cl{lab, ops, "tree", static_cast<int>(course.labs.size()) + 1, {}};
      for (const std::string& op : ops) {
        cl.plans.push_back({op, op, "float", true, false, op});
        p.build.manifest.libraries[{lab, op}] = {"/lib" + lab + "_" + op + ".so", lab};
      }
      course.labs.push_back(cl);
      LabFacts f;
      f.lab = lab;
      p.labs.push_back(f);
    }
  }
  ~Phase() { remove_all_quietly(dir); }

  /// One several-lab checker for every part, and tests' limits of 2 s.
  void one_checker_with_short_limits() {
    rubric.limits.parallel_checks = 1;
    rubric.limits.test_timeout_s = 2;
    rubric.limits.hidden_timeout_s = 2;
  }

  /// What every lab's runs share, for check_labs() and the options of a lab's checker.
  LabRunContext context() {
    return {p, course, rubric, env, no_sanitizer, told, dir / "logs", tag, progress, counts};
  }

  /// The labs whose parts several-lab checkers opened (opened.txt), in order, each once per run.
  std::vector<std::string> opened() const {
    return fs::exists(dir / "opened.txt") ? split_lines(read_file(dir / "opened.txt"))
                                          : std::vector<std::string>{};
  }

  /// The labs that ran alone (alone.txt), sorted, each once per run.
  std::vector<std::string> ran_alone() const {
    if (!fs::exists(dir / "alone.txt")) return {};
    std::vector<std::string> labs = split_lines(read_file(dir / "alone.txt"));
    std::sort(labs.begin(), labs.end());
    return labs;
  }
};

/// The message of \p run's test \p name ("(none)" where it has no such test).
std::string message_of(const SuiteRun& run, const std::string& name) {
  for (const TestOutcome& t : run.tests)
    if (t.name == name) return t.message;
  return "(none)";
}

TEST(CheckLabs, EachLabsResultsGoToItsOwnFactsFromTheSharedChecker) {
  Phase phase({{"stub", {"sum"}},
               {"untouched", {"sum"}},
               {"forge", {"sum"}},
               {"passes", {"sum", "maximum"}}});
  phase.rubric.limits.parallel_checks = 1;  // one several-lab checker for every part
  const LabRunContext c = phase.context();
  ASSERT_TRUE(check_labs(phase.p, {0, 2, 3}, c));
  // All four parts were in the one checker: the part of most tests first (balanced_groups()),
  // then in checking order (the lab of two operations first).
  EXPECT_EQ(planned_lines(phase.dir / "logs" / "tests" / "group_0.launch.json"),
            "passes\tmaximum\ttree\tmaximum\t/libpasses_maximum.so\t"
            "Fake.Passes:Fake.After1:Fake.After2\n"
            "passes\tsum\ttree\tsum\t/libpasses_sum.so\tFake.Passes:Fake.Misbehaves\n"
            "stub\tsum\ttree\tsum\t/libstub_sum.so\tFake.Passes:Fake.Misbehaves\n"
            "forge\tsum\ttree\tsum\t/libforge_sum.so\tFake.Passes:Fake.Misbehaves\n");
  // Only the forged failure's part ran again alone; the others were settled in the group.
  EXPECT_EQ(phase.ran_alone(), std::vector<std::string>{"forge"});
  const std::vector<LabFacts>& labs = phase.p.labs;
  const LabFacts& passes = labs[3];
  ASSERT_EQ(passes.tests.size(), 2u);
  EXPECT_EQ(passes.tests[0].op, "sum");
  EXPECT_EQ(passes.tests[0].passed(), 2);
  EXPECT_EQ(passes.tests[0].failed(), 0);
  EXPECT_EQ(passes.tests[1].op, "maximum");
  EXPECT_EQ(passes.tests[1].passed(), 3);
  EXPECT_FALSE(assess(passes).tests_failed);
  const LabFacts& stub = labs[0];
  ASSERT_EQ(stub.tests.size(), 1u);
  EXPECT_EQ(stub.tests[0].op, "sum");
  EXPECT_EQ(stub.tests[0].passed(), 1);
  EXPECT_EQ(stub.tests[0].failed(), 1);
  EXPECT_TRUE(stub.tests[0].not_implemented);
  EXPECT_TRUE(contains(message_of(stub.tests[0], "Fake.Misbehaves"), "not implemented"));
  const LabFacts& forge = labs[2];
  ASSERT_EQ(forge.tests.size(), 1u);
  EXPECT_EQ(forge.tests[0].passed(), 1);
  EXPECT_EQ(forge.tests[0].failed(), 1);
  EXPECT_FALSE(forge.tests[0].not_implemented) << "the stub's words are the stub's alone";
  EXPECT_TRUE(contains(message_of(forge.tests[0], "Fake.Misbehaves"), "the lab threw: x"));
  for (const LabFacts* f : {&passes, &stub, &forge}) {
    EXPECT_FALSE(assess(*f).hung) << f->lab;
    EXPECT_FALSE(f->hidden_exists) << f->lab;
    EXPECT_EQ(f->sanitizer_step.state, StepOutcome::State::kSkipped) << f->lab;
  }
  EXPECT_TRUE(labs[1].tests.empty()) << "a lab that is not runnable is not run";
  EXPECT_FALSE(fs::exists(phase.dir / "logs" / "untouched")) << "nor given a log folder";
}

TEST(CheckLabs, ALabThatHangsIsMarkedHungAndTheOthersStillGetTheirResults) {
  Phase phase({{"hang", {"sum"}}, {"passes", {"sum"}}, {"stub", {"sum"}}});
  phase.one_checker_with_short_limits();  // the hang stops the checker the three labs share
  const LabRunContext c = phase.context();
  const double start = now_seconds();
  ASSERT_TRUE(check_labs(phase.p, {0, 1, 2}, c));
  EXPECT_LT(now_seconds() - start, 60) << "the hang was stopped at the limit";
  // The shared checker hung in the first part: every part ran again alone.
  EXPECT_EQ(phase.ran_alone(), (std::vector<std::string>{"hang", "passes", "stub"}));
  const LabFacts& hang = phase.p.labs[0];
  const LabState state = assess(hang);
  EXPECT_TRUE(state.hung);
  EXPECT_EQ(state.hung_why, "the public tests timed out");
  ASSERT_EQ(hang.tests.size(), 1u);
  EXPECT_TRUE(hang.tests[0].timed_out);
  EXPECT_EQ(hang.tests[0].attempts, 1) << "a hang is not run again";
  EXPECT_EQ(hang.sanitizer_step.state, StepOutcome::State::kSkipped);
  EXPECT_EQ(hang.sanitizer_step.reason, "the public tests timed out");
  const LabFacts& passes = phase.p.labs[1];
  ASSERT_EQ(passes.tests.size(), 1u);
  EXPECT_FALSE(assess(passes).hung);
  EXPECT_EQ(passes.tests[0].passed(), 2);
  EXPECT_EQ(passes.tests[0].failed(), 0);
  EXPECT_EQ(passes.sanitizer_step.reason,
            "compute-sanitizer not found on the grading machine (a grading problem)")
      << "not the hung lab's reason";
  const LabFacts& stub = phase.p.labs[2];
  ASSERT_EQ(stub.tests.size(), 1u);
  EXPECT_FALSE(assess(stub).hung);
  EXPECT_TRUE(stub.tests[0].not_implemented);
  EXPECT_EQ(stub.tests[0].passed(), 1);
}

/// The seconds that \p log's checker says it was held ("held until the labs were built: S s"),
/// or -1 where it says none.
double held_seconds(const fs::path& log) {
  const std::string text = read_file(log);
  const std::string line = "held until the labs were built: ";
  const auto at = text.find(line);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + line.size()));
}

/// Waits up to 20 s until \p phase's several-lab checkers have opened \p count parts.
bool opened_within_a_while(const Phase& phase, std::size_t count) {
  const double until = now_seconds() + 20;
  while (phase.opened().size() < count && now_seconds() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return phase.opened().size() >= count;
}

TEST(CheckLabs, HeldCheckersTestEachLabAsSoonAsItIsReleased) {
  Phase phase({{"passes", {"sum"}}, {"stub", {"sum"}}, {"forge", {"sum"}}, {"passes2", {"sum"}}});
  phase.rubric.limits.parallel_checks = 2;  // two tests checkers: no sanitizer
  const LabRunContext c = phase.context();
  TimingLock timing;
  HeldChecks held;
  // Every lab is still building: the checkers start and wait in the hold folder.
  const fs::path tests = phase.dir / "logs" / "tests";
  write_file(tests / "held" / "stub", "go\n");  // an earlier grading's word is not this one's
  start_held_checkers(phase.p, {0, 1, 2, 3}, c, timing, 30, held);
  EXPECT_EQ(held.hold, tests / "held");
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_FALSE(fs::exists(tests / "held" / "stub"));
  EXPECT_TRUE(phase.opened().empty()) << "nothing ran while held";
  // Lab 0 is built and checked first: its part runs while the others still build.
  held.release("passes", true);
  ASSERT_TRUE(opened_within_a_while(phase, 1));
  EXPECT_EQ(phase.opened(), std::vector<std::string>{"passes"});
  EXPECT_EQ(read_file(tests / "held" / "passes"), "go\n");
  for (const char* lab : {"stub", "forge", "passes2"}) held.release(lab, true);
  ASSERT_TRUE(check_labs(phase.p, {0, 1, 2, 3}, c, &held));
  // Each group's parts are in the labs' order, the order ninja links them in.
  const std::string group_0 = planned_lines(tests / "group_0.launch.json");
  const std::string group_1 = planned_lines(tests / "group_1.launch.json");
  for (const std::string& group : {group_0, group_1}) {
    std::vector<std::size_t> at;
    for (const char* lab : {"passes\t", "stub\t", "forge\t", "passes2\t"})
      if (const auto found = group.find(lab); found != std::string::npos) at.push_back(found);
    EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << group;
  }
  EXPECT_EQ(split_lines(group_0 + group_1).size(), 4u) << "every lab's part in a group";
  for (const char* log : {"group_0.log", "group_1.log"})
    EXPECT_GE(held_seconds(tests / log), 0.9) << log << ": held until its first lab's release";
  // As after any group: only the forged failure ran again alone.
  EXPECT_EQ(phase.ran_alone(), std::vector<std::string>{"forge"});
  EXPECT_EQ(phase.p.labs[0].tests[0].passed(), 2);
  EXPECT_TRUE(phase.p.labs[1].tests[0].not_implemented);
  EXPECT_EQ(phase.p.labs[2].tests[0].failed(), 1);
  EXPECT_EQ(phase.p.labs[3].tests[0].passed(), 2);
}

TEST(CheckLabs, AHeldLabThatDidNotBuildIsStoppedAndTheOthersAreTestedInTheirGroups) {
  Phase phase({{"passes", {"sum"}}, {"stub", {"sum"}}, {"passes2", {"sum"}}});
  phase.rubric.limits.parallel_checks = 1;
  const LabRunContext c = phase.context();
  TimingLock timing;
  HeldChecks held;
  start_held_checkers(phase.p, {0, 1, 2}, c, timing, 30, held);
  held.release("passes", true);
  held.release("stub", false);  // it did not build: its part must not open
  held.release("stub", true);   // told once: a second word changes nothing
  held.release("passes2", true);
  ASSERT_TRUE(check_labs(phase.p, {0, 2}, c, &held));
  const fs::path tests = phase.dir / "logs" / "tests";
  EXPECT_EQ(read_file(tests / "held" / "stub"), "stop\n");
  EXPECT_EQ(phase.opened(), (std::vector<std::string>{"passes", "passes2"}));
  EXPECT_TRUE(contains(read_file(tests / "group_0.log"),
                       "stub untested: the grader said it did not build or pass its checks"));
  EXPECT_EQ(phase.p.labs[0].tests[0].passed(), 2);
  EXPECT_TRUE(phase.p.labs[1].tests.empty());
  EXPECT_EQ(phase.p.labs[2].tests[0].passed(), 2);
  EXPECT_TRUE(phase.ran_alone().empty()) << "no part ran again alone";
}

TEST(CheckLabs, AHeldLabThatHangsIsStoppedAtTheTestsLimitCountedFromItsGroupsLastRelease) {
  Phase phase({{"hang", {"sum"}}, {"passes", {"sum"}}, {"stub", {"sum"}}});
  phase.one_checker_with_short_limits();  // the hang stops the checker the three labs share
  const LabRunContext c = phase.context();
  TimingLock timing;
  HeldChecks held;
  const double start = now_seconds();
  start_held_checkers(phase.p, {0, 1, 2}, c, timing, 60, held);  // a build's limit of a minute
  held.release("hang", true);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the build goes on past the tests' limit
  EXPECT_EQ(held.released_at({"hang", "passes"}), std::numeric_limits<double>::infinity());
  held.release("passes", true);
  held.release("stub", true);
  ASSERT_TRUE(check_labs(phase.p, {0, 1, 2}, c, &held));
  // Killed 2 s after the last release (at 3 s), then run alone to its 2 s limit: 7 s at least;
  // 2 s after its own release would have ended the group before the last release.
  EXPECT_GE(now_seconds() - start, 6.5) << "not killed before 2 s after the group's last release";
  EXPECT_LT(now_seconds() - start, 30)
      << "killed 2 s after the release, not at the tests' and the hold's limits together";
  EXPECT_EQ(phase.ran_alone(), (std::vector<std::string>{"hang", "passes", "stub"}))
      << "the group was killed in its first part: every part ran again alone";
  EXPECT_TRUE(assess(phase.p.labs[0]).hung);
  EXPECT_EQ(phase.p.labs[1].tests[0].passed(), 2);
  EXPECT_TRUE(phase.p.labs[2].tests[0].not_implemented);
}

TEST(CheckLabs, ABuildThatOutlastsTheHoldLeavesEveryPartToRunAlone) {
  // A submission whose build takes longer than the hold allows (0.5 s here): the held checkers
  // leave every part unopened, and every part then runs alone, graded as ever.
  Phase phase({{"passes", {"sum"}}, {"stub", {"sum"}}, {"forge", {"sum"}}});
  phase.rubric.limits.parallel_checks = 1;
  const LabRunContext c = phase.context();
  TimingLock timing;
  HeldChecks held;
  start_held_checkers(phase.p, {0, 1, 2}, c, timing, 0.5, held);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the build
  for (const char* lab : {"passes", "stub", "forge"}) held.release(lab, true);
  ASSERT_TRUE(check_labs(phase.p, {0, 1, 2}, c, &held));
  EXPECT_TRUE(contains(read_file(phase.dir / "logs" / "tests" / "group_0.log"),
                       "passes untested: no word from the grader within the hold's limit"));
  EXPECT_TRUE(phase.opened().empty());
  EXPECT_EQ(phase.ran_alone(), (std::vector<std::string>{"forge", "passes", "stub"}));
  EXPECT_EQ(phase.p.labs[0].tests[0].passed(), 2);
  EXPECT_TRUE(phase.p.labs[1].tests[0].not_implemented);
  EXPECT_EQ(phase.p.labs[2].tests[0].failed(), 1);
}

TEST(CheckLabs, HeldCheckersNeverReleasedEndUntestedWithTheirGrading) {
  Phase phase({{"passes", {"sum"}}, {"stub", {"sum"}}});
  const LabRunContext c = phase.context();
  TimingLock timing;
  const double start = now_seconds();
  {
    HeldChecks held;  // a build that threw: check_labs() never ran
    start_held_checkers(phase.p, {0, 1}, c, timing, 30, held);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  EXPECT_LT(now_seconds() - start, 20) << "released at once, not at the hold's limit";
  for (const char* lab : {"passes", "stub"})
    EXPECT_EQ(read_file(phase.dir / "logs" / "tests" / "held" / lab), "stop\n");
  EXPECT_TRUE(phase.opened().empty());
  EXPECT_TRUE(phase.ran_alone().empty());
  EXPECT_TRUE(phase.p.labs[0].tests.empty());

  // Fewer than two labs hold no checker, and a word for a lab not held is written nowhere.
  HeldChecks none;
  start_held_checkers(phase.p, {0}, c, timing, 30, none);
  EXPECT_FALSE(none.runs.valid());
  none.release("passes", true);
  EXPECT_EQ(none.released_at({"passes"}), std::numeric_limits<double>::infinity());
}

TEST(LabRuns, ALabsCheckerArgumentsAndOptionsNameItAndTheRubricsLimits) {
  Phase phase({{"passes", std::vector<std::string>{"sum"}}});
  phase.rubric.limits.test_timeout_s = 7;
  phase.rubric.limits.hidden_timeout_s = 11;
  phase.rubric.limits.max_restarts = 2;
  phase.env = {{"CUDA_VISIBLE_DEVICES", "3"}};
  phase.told.seed = 1;
  phase.told.memory_slots = 3;
  phase.told.runner.prefix = {"sandbox", "--"};
  const LabRunContext c = phase.context();
  const OpPlan& plan = phase.course.plans("passes").at(0);
  EXPECT_EQ(
      lab_args(c, "passes", plan, SuiteKind::kPublic),
      (std::vector<std::string>{"--lab=/libpasses_sum.so", "--lab-order=tree", "--lab-name=passes",
                                "--lab-entry=sum", "--lab-filter=Fake.Passes:Fake.Misbehaves"}));
  // A lab's left-out tests (course.json `left_out`) are left out of its filter, and only its.
  phase.course.labs.back().left_out = {"Fake.Misbehaves"};
  EXPECT_EQ(lab_args(c, "passes", plan, SuiteKind::kPublic).back(),
            "--lab-filter=Fake.Passes:Fake.Misbehaves-Fake.Misbehaves");
  EXPECT_EQ(planned_part(c, "passes", plan, SuiteKind::kPublic).filters,
            std::vector<std::string>{"Fake.Passes:Fake.Misbehaves-Fake.Misbehaves"});
  phase.course.labs.back().left_out.clear();
  const SuiteOptions pub = suite_options(c, "passes", plan, false);
  EXPECT_EQ(pub.binary.string(), (phase.dir / "checker").string());
  EXPECT_EQ(pub.timeout_s, 7);
  EXPECT_EQ(pub.max_restarts, 2);
  EXPECT_EQ(pub.log_dir.string(), (phase.dir / "logs" / "passes").string());
  EXPECT_EQ(pub.log_stem, "sum_tests");
  EXPECT_EQ(pub.env, phase.env) << "the environment keeps what is not the launch spec's";
  EXPECT_EQ(pub.launch.memory_slots, 3) << "the context's spec";
  EXPECT_EQ(pub.launch.runner.prefix, phase.told.runner.prefix);
  ASSERT_TRUE(pub.launch.seed.has_value());
  EXPECT_NE(*pub.launch.seed, 1u) << "the context's key is replaced by the run's own";
  EXPECT_NE(*pub.launch.seed, phase.p.seed) << "never the grading secret";
  SuiteOptions again = pub;
  use_tests_key(again, c, "tests again");
  EXPECT_NE(*again.launch.seed, *pub.launch.seed) << "a run again gets inputs of its own";
  const SuiteOptions hidden = suite_options(c, "passes", plan, true);
  EXPECT_EQ(hidden.timeout_s, 11);
  EXPECT_EQ(hidden.log_stem, "sum_hidden");
  EXPECT_TRUE(hidden.binary.empty()) << "the build has no hidden suites";
  EXPECT_EQ(graded_suite_options(c, "passes", plan).timeout_s, 11) << "the larger limit";
}

}  // namespace
}  // namespace reduce::grade
