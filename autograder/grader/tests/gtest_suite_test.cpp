// The GoogleTest runner: parsing of lists and outcome records, and recovery from crashes, hangs,
// floods, exit() and sticky CUDA errors, against a fake suite (fake_suite.cpp).
#include "fake_checkers.hpp"

#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/gtest_suite.hpp>

#include <gtest/gtest.h>

namespace reduce::grade {
namespace {

const TestOutcome* find(const SuiteRun& run, const std::string& name) {
  for (const TestOutcome& t : run.tests)
    if (t.name == name) return &t;
  return nullptr;
}

SuiteRun run_fake(const std::string& mode, double timeout_s = 30, std::size_t cap = 1 << 20) {
  SuiteOptions o;
  o.binary = REDUCE_GRADE_FAKE_SUITE;
  if (!mode.empty()) o.env = {{"FAKE_MODE", mode}};
  o.timeout_s = timeout_s;
  o.output_cap = cap;
  o.max_restarts = 3;
  o.log_dir = make_temp_dir("reduce-grade-suite-");
  o.log_stem = "fake";
  SuiteRun run = run_gtest_suite(o);
  remove_all_quietly(o.log_dir);
  return run;
}

TEST(GtestList, ParsesSuitesAndParameterisedNames) {
  const std::string listing =
      "Running main() from gtest_main.cc\n"
      "SumTest.\n"
      "  EmptyInputIsPositiveZero\n"
      "  EveryCallComputesAfresh\n"
      "Sizes/SumExact.  # TypeParam = x\n"
      "  MatchesBitwise/1  # GetParam() = 1\n"
      "  MatchesBitwise/33  # GetParam() = 33\n";
  const std::vector<std::string> names = parse_gtest_list(listing);
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0], "SumTest.EmptyInputIsPositiveZero");
  EXPECT_EQ(names[3], "Sizes/SumExact.MatchesBitwise/33");
}

TEST(GtestRecord, ParsesEachPartsOutcomes) {
  const std::string record =
      "{\"part\":0,\"lab\":\"\",\"op\":\"\",\"repetition\":0}\n"
      "{\"start\":\"SumTest.A\"}\n"
      "{\"end\":\"SumTest.A\",\"result\":\"passed\",\"broken\":false,\"message\":\"\"}\n"
      "{\"start\":\"Sizes/SumExact.MatchesBitwise/33\"}\n"
      "{\"end\":\"Sizes/SumExact.MatchesBitwise/33\",\"result\":\"failed\",\"broken\":true,"
      "\"message\":\"n = 33: got 1\\n[       OK ] Sizes/SumExact.MatchesBitwise/33\"}\n"
      "{\"start\":\"SumTest.Big\"}\n"
      "{\"end\":\"SumTest.Big\",\"result\":\"skipped\",\"broken\":false,"
      "\"message\":\"[checker] no CUDA device: GPU test skipped\"}\n"
      "{\"finished\":true}\n"
      "{\"part\":2,\"lab\":\"b\",\"op\":\"sum\",\"repetition\":1}\n"
      "not json: [       OK ] B.x\n"
      "{\"end\":[1],\"result\":7}\n"
      "{\"start\":\"B.x\"}\n";
  const auto parts = parse_outcome_record(record);
  ASSERT_EQ(parts.size(), 2u);
  const RecordedPart& p = parts.at({0, 0});
  EXPECT_TRUE(p.completed);
  EXPECT_TRUE(p.no_gpu);
  EXPECT_FALSE(p.in_progress.has_value());
  ASSERT_EQ(p.finished.size(), 3u);
  EXPECT_EQ(p.finished[0].result, TestResult::kPassed);
  EXPECT_EQ(p.finished[1].name, "Sizes/SumExact.MatchesBitwise/33");
  EXPECT_EQ(p.finished[1].result, TestResult::kFailed) << "the lab's words are only quoted";
  EXPECT_TRUE(p.finished[1].sticky_cuda_error);
  EXPECT_TRUE(contains(p.finished[1].message, "got 1"));
  EXPECT_EQ(p.finished[2].result, TestResult::kSkipped);
  const RecordedPart& b = parts.at({1, 2});
  EXPECT_FALSE(b.completed);
  EXPECT_TRUE(b.finished.empty()) << "lines that do not parse are no outcome";
  ASSERT_TRUE(b.in_progress.has_value());
  EXPECT_EQ(*b.in_progress, "B.x");
  EXPECT_TRUE(parse_outcome_record("").empty());
  EXPECT_EQ(gtest_filter_for({"A.b", "C/D.e/1"}), "A.b:C/D.e/1");
}

TEST(GtestFirstEvidence, ALabsOwnFailuresStandInALaterRun) {
  const std::vector<TestOutcome> first = {
      {"S.wrong", TestResult::kFailed, "n = 33: got 1, expected exactly 2", false},
      {"S.broken", TestResult::kFailed, "the checker's context broke", true},
      {"S.unreached", TestResult::kFailed, "not run: the test binary stopped before this test",
       false},
      {"S.fine", TestResult::kPassed, "", false}};
  const std::vector<TestOutcome> own = own_failures(first);
  ASSERT_EQ(own.size(), 1u) << "a broken context or a test never reached is no evidence";
  EXPECT_EQ(own[0].name, "S.wrong");
  SuiteRun again;
  again.tests = {{"S.wrong", TestResult::kPassed, "", false},
                 {"S.fine", TestResult::kPassed, "", false}};
  keep_first_failures(own, again);
  EXPECT_EQ(again.failed(), 1);
  EXPECT_EQ(again.passed(), 1);
  EXPECT_TRUE(contains(again.tests[0].message, "got 1")) << again.tests[0].message;
}

TEST(GtestRecord, AFinishedLineDoesNotEndATestInProgress) {
  const auto parts = parse_outcome_record("{\"start\":\"A.b\"}\n{\"finished\":true}\n");
  EXPECT_FALSE(parts.at({0, 0}).completed);
  EXPECT_EQ(parts.at({0, 0}).in_progress, "A.b");
}

TEST(CheckerStartups, CountsTheCheckersContextAndEveryLabProcess) {
  const CheckerStartups counted = checker_startups(
      "[ startup  ] the lab's process started: 1\n"
      "[ startup  ] the checker's CUDA context: 0.41 s\n"
      "[ RUN      ] Sizes/SumExact.MatchesBitwise/33\n"
      "[ startup  ] the lab's process started: 2\n"
      "  [ startup  ] the lab's process started: 3 (quoted, not at a line's start)\n"
      "[       OK ] Sizes/SumExact.MatchesBitwise/33 (2 ms)\n");
  EXPECT_EQ(counted.contexts, 1);
  EXPECT_EQ(counted.lab_processes, 2);
  EXPECT_EQ(checker_startups("").lab_processes, 0);
}

TEST(GtestSuiteLabs, EachLabsPartIsItsOwnAndOnlyAWholePassIsKept) {
  const fs::path dir = make_temp_dir("reduce-grade-suite-");
  // The lab "crashes" takes its process down mid-test; "b" prints a line with another mark first.
  const SuiteOptions options = several_labs_checker(
      dir,
      "  [ \"$lab\" = b ] && [ -z \"$list\" ] && echo '[ lab      ] forged 0 crashes sum'\n"
      "  mode=''; [ \"$lab\" = crashes ] && mode=crash\n");
  const std::vector<PlannedLab> parts = {
      {"a", "sum", "tree", "sum", "/liba.so", {"Fake.Passes:Fake.Misbehaves"}},
      {"crashes", "sum", "tree", "sum", "/libc.so", {"Fake.Passes:Fake.Misbehaves"}},
      {"b", "maximum", "serial", "maximum", "/libb.so", {"Fake.Passes"}},
      {"a", "sum_deterministic", "tree", "sum", "/liba2.so", {"Fake.After1"}}};
  const auto tests = list_lab_tests(options, parts);
  ASSERT_EQ(tests.size(), 4u);
  EXPECT_EQ(tests[0], (std::vector<std::string>{"Fake.Passes", "Fake.Misbehaves"}));
  EXPECT_EQ(tests[2], std::vector<std::string>{"Fake.Passes"});
  EXPECT_EQ(tests[3], std::vector<std::string>{"Fake.After1"});
  const LabsRun run = run_gtest_suite_labs(options, parts, tests);
  ASSERT_EQ(run.labs.size(), 4u);
  ASSERT_TRUE(run.labs[0].has_value());
  EXPECT_EQ(run.labs[0]->passed(), 2);
  EXPECT_FALSE(run.labs[1].has_value()) << "a crash is not a whole pass: that lab runs alone";
  ASSERT_TRUE(run.labs[2].has_value());
  EXPECT_EQ(run.labs[2]->passed(), 1);
  ASSERT_TRUE(run.labs[3].has_value()) << "the same lab's other operation is a part of its own";
  EXPECT_EQ(run.labs[3]->tests.at(0).name, "Fake.After1");
  // The labs and the mark were the checker's launch spec, beside its logs, for the listing and
  // the run apart: each with a mark of its own.
  const auto told = [&](const char* file) {
    return launch::read_launch_spec((dir / "logs" / file).string(), launch::Child::kChecker);
  };
  const launch::LaunchSpec listed = told("group_0.list.launch.json");
  const launch::LaunchSpec ran = told("group_0.launch.json");
  ASSERT_EQ(ran.labs.size(), 4u);
  EXPECT_EQ(ran.labs[2].name, "b");
  EXPECT_EQ(ran.labs[2].order, "serial");
  EXPECT_EQ(ran.labs[2].library, "/libb.so");
  EXPECT_EQ(ran.labs[2].filters, std::vector<std::string>{"Fake.Passes"});
  EXPECT_EQ(listed.labs.size(), 4u);
  EXPECT_EQ(ran.mark.size(), 16u);
  EXPECT_NE(listed.mark, ran.mark);
  remove_all_quietly(dir);
}

TEST(GtestSuiteLabs, AStubsPartIsKeptButARealFailureRunsAlone) {
  // An untouched stub fails every test with its own "not implemented", which no other lab of the
  // process can make it say: its part is kept from the group (a lone run would say the same). A
  // part with any other failure, or a stub's part that also crashed, runs alone.
  const fs::path dir = make_temp_dir("reduce-grade-suite-");
  // Each lab's tests misbehave as its name says (FAKE_MODE).
  const SuiteOptions options = several_labs_checker(dir, "  mode=$lab\n");
  const std::vector<PlannedLab> parts = {
      {"stub", "sum", "tree", "sum", "/libs.so", {"Fake.Passes:Fake.Misbehaves"}},
      {"fails", "sum", "tree", "sum", "/libf.so", {"Fake.Passes:Fake.Fails"}},
      {"sticky", "sum", "tree", "sum", "/libt.so", {"Fake.Misbehaves:Fake.After1"}},
      {"forge", "sum", "tree", "sum", "/libg.so", {"Fake.Passes:Fake.Misbehaves"}}};
  const LabsRun run = run_gtest_suite_labs(options, parts);
  ASSERT_EQ(run.labs.size(), 4u);
  ASSERT_TRUE(run.labs[0].has_value()) << "a stub's part is settled in its group";
  EXPECT_TRUE(run.labs[0]->not_implemented);
  EXPECT_EQ(run.labs[0]->passed(), 1);
  EXPECT_EQ(run.labs[0]->failed(), 1);
  EXPECT_FALSE(run.labs[1].has_value()) << "a real failure runs alone";
  EXPECT_FALSE(run.labs[2].has_value()) << "a poisoned context runs alone";
  EXPECT_FALSE(run.labs[3].has_value()) << "GoogleTest's lines in the lab's words are no pass";
  remove_all_quietly(dir);
}

TEST(GtestSuiteLabs, APartWhoseTestsWereNotListedIsNoPass) {
  // A listing that failed leaves no tests to compare with: every part runs alone.
  SuiteOptions options;
  options.binary = "/nonexistent/checker";
  options.log_dir = make_temp_dir("reduce-grade-suite-");
  const std::vector<PlannedLab> parts = {{"a", "sum", "tree", "sum", "/liba.so", {"*"}},
                                         {"b", "sum", "tree", "sum", "/libb.so", {"*"}}};
  std::string problem;
  EXPECT_TRUE(list_lab_tests(options, parts, &problem).empty());
  EXPECT_FALSE(problem.empty());
  const LabsRun run = run_gtest_suite_labs(options, parts);
  ASSERT_EQ(run.labs.size(), 2u);
  EXPECT_FALSE(run.labs[0].has_value());
  EXPECT_FALSE(run.labs[1].has_value());
  remove_all_quietly(options.log_dir);
}

TEST(GtestSuiteLabs, TheOutputSplitsAtTheMarkedLinesOnly) {
  const auto parts = split_lab_output(
      "[ lab      ] m 0 a sum\nA\n[ lab      ] x 0 b sum\n  [ lab      ] m 0 b sum\n"
      "[ lab      ] m 1 b sum\nB1\n[ lab      ] m 0 a\n",
      "m", {"a sum", "b sum"});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts.at({0, 0}), "\nA\n[ lab      ] x 0 b sum\n  [ lab      ] m 0 b sum\n");
  EXPECT_EQ(parts.at({1, 1}), "\nB1\n");
}

TEST(GtestHidden, TheSuitesOwnNameDecides) {
  EXPECT_TRUE(is_hidden_test("HiddenSum.SentinelsAtRandomPlaces"));
  EXPECT_TRUE(is_hidden_test("Sizes/HiddenLarge.ExactBeyondTwoToTheTwentyFour/33554431"));
  EXPECT_FALSE(is_hidden_test("Sizes/SumExact.MatchesBitwise/33"));
  EXPECT_FALSE(is_hidden_test("SumTest.HiddenSizes"));  // a test's name is not its suite
  EXPECT_FALSE(is_hidden_test("Hidden/SumExact.MatchesBitwise/1"));  // nor is the prefix
}

TEST(GtestHidden, AGradedRunSplitsIntoItsTwoSuites) {
  SuiteRun run;
  run.ran = true;
  run.attempts = 2;
  run.seconds = 7.5;
  run.timed_out = true;
  run.checker_contexts = 2;
  run.lab_process_starts = 3;
  run.tests = {
      {"SumTest.EmptyInput", TestResult::kPassed, ""},
      {"Sizes/HiddenLarge.Exact/7", TestResult::kFailed, "not implemented: see labs/04"},
      {"HiddenSum.Sentinels", TestResult::kFailed,
       "skipped without the checker deciding it (counted as failed): GTEST_SKIP"},
      {"Sizes/SumExact.MatchesBitwise/33", TestResult::kFailed, "off by one"},
  };
  const auto [pub, hidden] = split_hidden(run);
  EXPECT_EQ(pub.checker_contexts + hidden.checker_contexts, 2);  // one process: counted once
  EXPECT_EQ(pub.lab_process_starts + hidden.lab_process_starts, 3);
  ASSERT_EQ(pub.tests.size(), 2u);
  ASSERT_EQ(hidden.tests.size(), 2u);
  EXPECT_EQ(pub.tests[1].name, "Sizes/SumExact.MatchesBitwise/33");
  EXPECT_EQ(pub.passed(), 1);
  EXPECT_EQ(hidden.failed(), 2);
  EXPECT_FALSE(pub.not_implemented);
  EXPECT_TRUE(hidden.not_implemented);
  EXPECT_EQ(pub.unexplained_skips, 0);
  EXPECT_EQ(hidden.unexplained_skips, 1);
  for (const SuiteRun* part : {&pub, &hidden}) {  // what the process did belongs to both
    EXPECT_TRUE(part->ran);
    EXPECT_TRUE(part->timed_out);
    EXPECT_EQ(part->attempts, 2);
    EXPECT_DOUBLE_EQ(part->seconds, 7.5);
  }
}

TEST(GtestSuite, NormalRunCountsPassedFailedSkipped) {
  const SuiteRun run = run_fake("");
  ASSERT_TRUE(run.ran) << run.problem;
  EXPECT_EQ(run.tests.size(), 6u);
  EXPECT_EQ(run.passed(), 4);
  EXPECT_EQ(run.failed(), 1);
  EXPECT_EQ(run.skipped(), 1);
  EXPECT_EQ(run.counted(), 5);
  EXPECT_EQ(run.attempts, 1);
  EXPECT_TRUE(run.problem.empty());
  EXPECT_TRUE(contains(find(run, "Fake.Fails")->message, "the answer is off by one"));
}

TEST(GtestSuite, CrashFailsTheRunningTestAndRerunsTheRest) {
  const SuiteRun run = run_fake("crash");
  EXPECT_TRUE(run.crashed);
  EXPECT_EQ(run.attempts, 2);
  EXPECT_EQ(find(run, "Fake.Misbehaves")->result, TestResult::kFailed);
  EXPECT_TRUE(contains(find(run, "Fake.Misbehaves")->message, "SIGSEGV"));
  EXPECT_EQ(find(run, "Fake.After1")->result, TestResult::kPassed);
  EXPECT_EQ(find(run, "Fake.After2")->result, TestResult::kPassed);
  EXPECT_EQ(run.passed(), 3);
  EXPECT_TRUE(contains(run.problem, "crashed"));
}

TEST(GtestSuite, HangIsKilledAtTheLimitAndNotRerun) {
  const double start = now_seconds();
  const SuiteRun run = run_fake("hang", 2);
  EXPECT_LT(now_seconds() - start, 20);
  EXPECT_TRUE(run.timed_out);
  EXPECT_EQ(run.attempts, 1);
  EXPECT_TRUE(contains(find(run, "Fake.Misbehaves")->message, "timed out"));
  EXPECT_EQ(find(run, "Fake.After1")->result, TestResult::kFailed);
  EXPECT_TRUE(contains(find(run, "Fake.After1")->message, "not run"));
  EXPECT_EQ(run.passed(), 1);
}

TEST(GtestSuite, FloodIsCutAndNotRerun) {
  const SuiteRun run = run_fake("flood", 30, 64 << 10);
  EXPECT_TRUE(run.output_flood);
  EXPECT_EQ(run.attempts, 1);
  EXPECT_TRUE(contains(find(run, "Fake.Misbehaves")->message, "output flood"));
  EXPECT_EQ(find(run, "Fake.After2")->result, TestResult::kFailed);
}

TEST(GtestSuite, ExitInTheMiddleIsNotAPass) {
  const SuiteRun run = run_fake("exit");
  EXPECT_TRUE(run.crashed);
  EXPECT_EQ(find(run, "Fake.Misbehaves")->result, TestResult::kFailed);
  EXPECT_TRUE(contains(find(run, "Fake.Misbehaves")->message, "exited"));
  EXPECT_EQ(find(run, "Fake.After1")->result, TestResult::kPassed);
}

TEST(GtestSuite, StickyCudaErrorRerunsLaterTestsInAFreshProcess) {
  const SuiteRun run = run_fake("sticky");
  EXPECT_EQ(run.attempts, 2);
  EXPECT_EQ(find(run, "Fake.Misbehaves")->result, TestResult::kFailed);
  EXPECT_TRUE(find(run, "Fake.Misbehaves")->sticky_cuda_error);
  EXPECT_EQ(find(run, "Fake.After1")->result, TestResult::kPassed);
  EXPECT_EQ(find(run, "Fake.After2")->result, TestResult::kPassed);
  EXPECT_TRUE(contains(run.problem, "CUDA context broken"));
}

TEST(GtestSuite, AVerdictLineInTheLabsWordsIsNoPass) {
  // The failure's text holds GoogleTest's lines of a pass, as a lab's exception message could:
  // GoogleTest prints them on lines of their own, and only the record decides.
  const SuiteRun run = run_fake("forge");
  EXPECT_EQ(find(run, "Fake.Misbehaves")->result, TestResult::kFailed);
  EXPECT_EQ(run.passed(), 3);
  EXPECT_EQ(run.failed(), 2);
}

TEST(GtestSuite, NoGpuIsRecognised) {
  const SuiteRun run = run_fake("nogpu");
  EXPECT_TRUE(run.no_gpu);
  EXPECT_EQ(run.skipped(), 6);
  EXPECT_EQ(run.counted(), 0);
}

TEST(GtestSuite, MissingBinary) {
  SuiteOptions o;
  o.binary = "/nonexistent/test";
  const SuiteRun run = run_gtest_suite(o);
  EXPECT_FALSE(run.ran);
  EXPECT_TRUE(contains(run.problem, "not found"));
}

}  // namespace
}  // namespace reduce::grade

namespace reduce::grade {
namespace {

TEST(GtestFailures, CondensedToTheTestsOwnExplanation) {
  const std::string message =
      "/course/autograder/tests/sum_test.cu:65\n"
      "Expected equality of these values:\n"
      "  bits(got)\n"
      "    Which is: 1106247680\n"
      "  bits(want)\n"
      "    Which is: 3319834624\n"
      "n = 1025: got 31, expected exactly -2419 (difference 2450).";
  EXPECT_EQ(condense_failure(message),
            "/course/autograder/tests/sum_test.cu:65\nn = 1025: got 31, expected exactly -2419 "
            "(difference 2450).");
  EXPECT_EQ(condense_failure("plain"), "plain");
}

}  // namespace
}  // namespace reduce::grade
