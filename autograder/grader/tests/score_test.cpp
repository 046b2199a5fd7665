// Scoring: what each observation is worth, gating, and totals.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/reports/report.hpp>
#include <reduce_grade/scoring/score.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace reduce::grade {
namespace {

SuiteRun suite(int passed, int failed, int skipped = 0, const std::string& message = "wrong") {
  SuiteRun run;
  run.ran = true;
  run.attempts = 1;
  for (int i = 0; i < passed; ++i)
    run.tests.push_back({"S.p" + std::to_string(i), TestResult::kPassed, "", false});
  for (int i = 0; i < failed; ++i)
    run.tests.push_back({"S.f" + std::to_string(i), TestResult::kFailed, message, false});
  for (int i = 0; i < skipped; ++i)
    run.tests.push_back({"S.s" + std::to_string(i), TestResult::kSkipped, "", false});
  return run;
}

SanitizerRun san(const std::string& tool, int problems) {
  SanitizerRun r;
  r.tool = tool;
  r.ran = true;
  r.tests_passed = true;
  r.summary.found = true;
  r.summary.errors = tool == "racecheck" ? 0 : problems;
  if (tool == "racecheck") r.summary.hazards = problems, r.summary.warnings = problems;
  return r;
}

/// A lab that did everything right at \p fraction of the ceiling.
LabFacts perfect(double fraction = 0.9) {
  LabFacts f;
  f.lab = "09_warp_shuffle";
  f.present = true;
  f.build.attempted = f.build.ok = f.build.library_ok = true;
  f.library.inspected = true;
  f.gpu = true;
  f.tests = {suite(32, 0, 1)};
  f.hidden = {suite(28, 0)};
  f.sanitizer = {san("memcheck", 0), san("racecheck", 0), san("synccheck", 0)};
  f.perf.ran = true;
  f.perf.n = 1u << 28;
  f.perf.gbps = fraction * 4400;
  f.perf.ceiling_gbps = 4400;
  f.perf.fraction = fraction;
  return f;
}

class ScoreTest : public ::testing::Test {
 protected:
  ScoreTest() {
    lab_.lab = "09_warp_shuffle";
    lab_.threshold = 0.7;
    lab_.floor = 0.28;
  }
  const ScoredItem& item(const LabScore& s, const std::string& key) {
    for (const ScoredItem& i : s.items)
      if (i.key == key) return i;
    static ScoredItem none;
    ADD_FAILURE() << "no item " << key;
    return none;
  }
  LabRubric lab_;
  Rubric rubric_;
};

TEST_F(ScoreTest, PerfectLabGetsFullMarks) {
  const LabScore s = score_lab(perfect(), lab_, rubric_);
  EXPECT_EQ(s.status, LabStatus::kGraded);
  EXPECT_DOUBLE_EQ(s.score, 10);
  EXPECT_DOUBLE_EQ(s.max_score, 10);
  for (const ScoredItem& i : s.items)
    EXPECT_EQ(i.status, ItemStatus::kPassed) << i.key << ": " << i.output;
  EXPECT_TRUE(
      contains(item(s, "tests").output,
               "passed 32 of 32 public tests; not counted: 1 test not verified on this GPU"));
}

// A test the checker skipped for want of memory earns nothing and costs nothing, but the grade
// says which tests were not verified on this GPU: by name where the tests are public, by count
// (names in the details) where they are hidden.
TEST_F(ScoreTest, TestsSkippedForMemoryAreNamedAsNotVerified) {
  const std::string shortfall =
      "[checker] too little memory on this GPU, so this test is not verified here: it has 3.6 "
      "GiB in total, and the test needs 4.0 GiB and a 1.0 GiB margin";
  LabFacts f = perfect();
  f.tests = {suite(30, 0)};
  f.tests[0].tests.push_back(
      {"Sizes/MeanOfOnes.IsOne/1073741824", TestResult::kSkipped, shortfall, false});
  f.hidden = {suite(27, 0)};
  f.hidden[0].tests.push_back({"HiddenSumTest.Big", TestResult::kSkipped, shortfall, false});
  f.hidden[0].tests.push_back({"HiddenSumTest.Bigger", TestResult::kSkipped, shortfall, false});
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(s.score, 10);
  const std::string named =
      "1 test not verified on this GPU (it has too little memory): "
      "Sizes/MeanOfOnes.IsOne/1073741824";
  EXPECT_TRUE(
      contains(item(s, "tests").output, "passed 30 of 30 public tests; not counted: " + named))
      << item(s, "tests").output;
  EXPECT_NE(std::find(s.messages.begin(), s.messages.end(), "public tests: " + named),
            s.messages.end());
  const ScoredItem& hidden = item(s, "hidden");
  EXPECT_TRUE(
      contains(hidden.output, "2 tests not verified on this GPU (it has too little memory)"))
      << hidden.output;
  EXPECT_FALSE(contains(hidden.output, "HiddenSumTest"));
  EXPECT_TRUE(contains(hidden.hidden_details, "HiddenSumTest.Big, HiddenSumTest.Bigger"));
  // A skip for another reason (a GPU that cannot map memory) is not put down to memory.
  f.tests[0].tests.back() = {"SumTest.AboveInt32Range", TestResult::kSkipped,
                             "[checker] no mapped memory on this GPU (...)", false};
  const LabScore other = score_lab(f, lab_, rubric_);
  EXPECT_TRUE(contains(item(other, "tests").output,
                       "1 test not verified on this GPU: SumTest.AboveInt32Range"))
      << item(other, "tests").output;
}

TEST_F(ScoreTest, MissingLabScoresZero) {
  LabFacts f;
  f.lab = "05_first_add_load";
  f.missing_what = "05_first_add_load/ (the lab folder)";
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_EQ(s.status, LabStatus::kMissing);
  EXPECT_DOUBLE_EQ(s.score, 0);
  EXPECT_DOUBLE_EQ(s.max_score, 10);
  EXPECT_TRUE(contains(s.messages.at(0), "missing"));
}

TEST_F(ScoreTest, BuildFailureScoresZeroAndShowsTheCompiler) {
  LabFacts f = perfect();
  f.build.ok = f.build.library_ok = false;
  f.build.stage = BuildStage::kCompile;
  f.build.errors = "09_warp_shuffle/sum.cu(12): error: identifier \"bias\" is undefined";
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_EQ(s.status, LabStatus::kBuildFailed);
  EXPECT_DOUBLE_EQ(s.score, 0);
  EXPECT_TRUE(contains(item(s, "build").output, "does not compile"));
  EXPECT_TRUE(contains(item(s, "build").output, "identifier \"bias\" is undefined"));
}

// Each place a build can stop has its own headline: a refused folder is not a compile error, and
// a library that compiles but misses a contract entry point says so.
TEST_F(ScoreTest, BuildFailureNamesWhereTheBuildStopped) {
  const std::pair<BuildStage, const char*> cases[] = {
      {BuildStage::kStaging, "refused before the build"},
      {BuildStage::kConfigure, "could not be configured"},
      {BuildStage::kCompile, "does not compile"},
      {BuildStage::kLink, "compiles, but its library does not link"}};
  for (const auto& [stage, headline] : cases) {
    LabFacts f = perfect();
    f.build.ok = f.build.library_ok = false;
    f.build.stage = stage;
    const LabScore s = score_lab(f, lab_, rubric_);
    EXPECT_EQ(s.status, LabStatus::kBuildFailed) << stage_name(stage);
    EXPECT_TRUE(contains(item(s, "build").output, headline))
        << stage_name(stage) << ": " << item(s, "build").output;
  }
}

// A refused folder's headline, the gradebook's reason, names what was refused.
TEST_F(ScoreTest, ARefusedFolderSaysWhatWasRefused) {
  LabFacts f = perfect();
  f.build.ok = f.build.library_ok = false;
  f.build.stage = BuildStage::kStaging;
  f.build.errors =
      "the lab folder was refused: 04_sequential/data.bin: is too large (209715200 bytes; the "
      "limit is 16 MiB)";
  const LabScore s = score_lab(f, lab_, rubric_);
  ASSERT_FALSE(s.messages.empty());
  const std::string headline = "refused before the build: 04_sequential/data.bin: is too large";
  EXPECT_TRUE(contains(s.messages.front(), headline)) << s.messages.front();
  EXPECT_FALSE(contains(item(s, "build").output, "links, special files"));
}

TEST_F(ScoreTest, LibraryReductionZeroesTheWholeLab) {
  LabFacts f = perfect();
  f.library.forbidden = {{FindingKind::kSymbol, "cub::DeviceReduce::Sum(...)"}};
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_EQ(s.status, LabStatus::kForbiddenLibrary);
  EXPECT_DOUBLE_EQ(s.score, 0);
  EXPECT_EQ(item(s, "library").status, ItemStatus::kFailed);
  EXPECT_TRUE(contains(item(s, "library").output, "cub::DeviceReduce"));
}

TEST_F(ScoreTest, UntouchedStubScoresZero) {
  LabFacts f = perfect();
  f.tests = {suite(0, 32, 0, "not implemented: see labs/09_warp_shuffle/sum.cu")};
  f.tests[0].not_implemented = true;
  f.hidden = {suite(0, 28, 0, "not implemented: see labs/09_warp_shuffle/sum.cu")};
  f.hidden[0].not_implemented = true;
  for (SanitizerRun& r : f.sanitizer) r.tests_passed = false;
  f.perf = PerfFacts{};
  f.perf_step = StepOutcome::skipped("the lab fails tests");
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_EQ(s.status, LabStatus::kStub);
  EXPECT_DOUBLE_EQ(s.score, 0);
  EXPECT_TRUE(contains(item(s, "build").output, "not implemented"));
}

TEST_F(ScoreTest, WithoutGpuOnlyBuildPoints) {
  LabFacts f = perfect();
  f.gpu = false;
  f.tests.clear();
  f.hidden.clear();
  f.sanitizer.clear();
  f.perf = PerfFacts{};
  LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_EQ(s.status, LabStatus::kBuildOnly);
  EXPECT_DOUBLE_EQ(s.score, 1);
  EXPECT_EQ(item(s, "tests").status, ItemStatus::kSkipped);
  EXPECT_TRUE(contains(item(s, "performance").output, "needs a GPU"));
  // Without a GPU a stub is recognised from its library.
  f.library.stub = true;
  s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(s.score, 0);
}

TEST_F(ScoreTest, FailedTestsArePartialAndGatePerformance) {
  LabFacts f = perfect();
  f.tests = {suite(30, 2)};
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(s, "tests").score, 3.75);
  EXPECT_DOUBLE_EQ(item(s, "performance").score, 0);
  EXPECT_TRUE(contains(item(s, "performance").output, "correctness gates performance"));
  EXPECT_DOUBLE_EQ(s.score, 1 + 3.75 + 2 + 1 + 0);
}

TEST_F(ScoreTest, AForbiddenSystemCallIsFlaggedForReview) {
  LabFacts f = perfect();
  const LabScore clean = score_lab(f, lab_, rubric_);
  EXPECT_TRUE(clean.review.empty());
  f.tests = {suite(31, 1, 0,
                   "the lab's process died during the call (killed by signal 31: the lab made a "
                   "forbidden system call (a new process, exec, ...)")};
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_EQ(s.review, "its process made a forbidden system call in S.f0");
  ASSERT_FALSE(s.messages.empty());
  EXPECT_EQ(s.messages.front(), "flagged for review: " + s.review);
  // A lab that prints the words itself is flagged too: a look costs little, and its output
  // cannot clear a flag that the checker raised elsewhere.
  GradeReport report;
  report.labs.push_back({f, s, 0.7, 0.28});
  EXPECT_EQ(report_json(report)["labs"][0]["flagged_for_review"], s.review);
}

TEST_F(ScoreTest, FailedHiddenTestsGatePerformanceAndKeepDetailsHidden) {
  LabFacts f = perfect();
  f.hidden = {suite(27, 1, 0, "offset 3: got 12, expected exactly 13")};
  const LabScore s = score_lab(f, lab_, rubric_);
  const ScoredItem& hidden = item(s, "hidden");
  EXPECT_NEAR(hidden.score, 2.0 * 27 / 28, 0.005);
  EXPECT_TRUE(contains(hidden.output, "passed 27 of 28 hidden tests"));
  EXPECT_FALSE(contains(hidden.output, "offset 3"));  // details only after publication
  EXPECT_TRUE(contains(hidden.hidden_details, "offset 3"));
  EXPECT_DOUBLE_EQ(item(s, "performance").score, 0);
}

TEST_F(ScoreTest, RacecheckHazardsCostThatToolsShare) {
  LabFacts f = perfect();
  f.sanitizer[1] = san("racecheck", 5);
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(s, "sanitizer").score, 0.67);
  EXPECT_TRUE(contains(item(s, "sanitizer").output, "racecheck: 5 hazards"));
  EXPECT_DOUBLE_EQ(s.score, 9.67);
  EXPECT_DOUBLE_EQ(item(s, "performance").score, 2);  // the sanitizer does not gate performance
}

// In a lab whose lesson is synchronisation a race is what the lab is about: it gates performance.
TEST_F(ScoreTest, InALabAboutSynchronisationARaceGatesPerformance) {
  lab_.races_gate_performance = true;
  LabFacts f = perfect();
  EXPECT_DOUBLE_EQ(score_lab(f, lab_, rubric_).score, 10) << "no race, no gate";
  f.sanitizer[1] = san("racecheck", 1);  // one warning is a race too
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(s, "performance").score, 0);
  EXPECT_TRUE(contains(item(s, "performance").output, "racecheck found 1 data race"));
  EXPECT_NEAR(s.score, 7.67, 0.005);
  f.sanitizer[0] = san("memcheck", 2);  // other tools' findings cost their share only
  f.sanitizer[1] = san("racecheck", 0);
  EXPECT_DOUBLE_EQ(item(score_lab(f, lab_, rubric_), "performance").score, 2);
  // A lab whose tests fail only under racecheck hides its race from it: no clean run, no points.
  f.sanitizer[1].tests_passed = false;
  const LabScore hidden = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(hidden, "performance").score, 0);
  EXPECT_TRUE(contains(item(hidden, "performance").output, "racecheck did not end clean"));
}

TEST_F(ScoreTest, PerformanceCurveAndWrongTimedRuns) {
  LabScore s = score_lab(perfect(0.49), lab_, rubric_);  // halfway between 0.28 and 0.7
  EXPECT_NEAR(item(s, "performance").score, 1.0, 0.005);
  EXPECT_TRUE(contains(item(s, "performance").output, "partial credit"));
  s = score_lab(perfect(0.1), lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(s, "performance").score, 0);
  EXPECT_TRUE(contains(item(s, "performance").output, "below the floor"));
  LabFacts f = perfect();
  f.perf.wrong_results = 3;
  s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(s, "performance").score, 0);
  EXPECT_TRUE(
      contains(item(s, "performance").output, "3 timed benchmark runs returned a wrong sum"));
}

TEST_F(ScoreTest, SlowedClocksAreSaidAndCostNothing) {
  LabFacts f = perfect(0.49);
  const double points = item(score_lab(f, lab_, rubric_), "performance").score;
  f.perf.throttled_samples = 4;
  LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(s, "performance").score, points) << "a note, never a verdict";
  EXPECT_TRUE(contains(item(s, "performance").output,
                       "4 samples taken while the GPU slowed its clocks were left out"))
      << item(s, "performance").output;
  f.perf.throttled_figure = true;
  s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(s, "performance").score, points);
  EXPECT_TRUE(contains(item(s, "performance").output, "grade again on an idle, cooler GPU"))
      << item(s, "performance").output;
  EXPECT_FALSE(contains(item(score_lab(perfect(0.49), lab_, rubric_), "performance").output,
                        "slowed its clocks"));
}

TEST_F(ScoreTest, ClocksThatDisagreeCostThePointsAndSayWhatToDo) {
  LabFacts f = perfect();
  f.perf.ran = false;
  f.perf.problem =
      "sum: clocks disagree: the lab's process reports 358.4 us per call, the grader's clock "
      "563.5 us";
  f.perf.clocks_disagree = true;
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(s, "performance").score, 0);
  const std::string& out = item(s, "performance").output;
  EXPECT_TRUE(contains(out, "clocks disagree")) << out;
  EXPECT_TRUE(contains(out, "if this one was busy, grade again")) << out;
  EXPECT_FALSE(contains(out, "correctness gates performance")) << out;
}

TEST_F(ScoreTest, ThePhraseClocksDisagreeInAMessageIsNoVerdict) {
  // A lab's own exception text may say anything: only the benchmark's field sets the flag.
  LabFacts f = perfect();
  f.perf.ran = false;
  f.perf.problem = "sum: the lab threw: clocks disagree: grade again";
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(s, "performance").score, 0);
  EXPECT_FALSE(contains(item(s, "performance").output, "if this one was busy, grade again"))
      << item(s, "performance").output;
}

TEST_F(ScoreTest, CustomPointsAndTotals) {
  lab_.points = Points{2, 6, 0, 1, 1};
  LabFacts f = perfect();
  f.hidden.clear();
  f.hidden_exists = false;
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(s.max_score, 10);
  EXPECT_DOUBLE_EQ(s.score, 10);
  GradeReport report;
  report.labs.push_back({f, s, 0.7, 0.28});
  report.labs.push_back({LabFacts{}, score_lab(LabFacts{}, lab_, rubric_), 0.7, 0.28});
  report.total();
  EXPECT_DOUBLE_EQ(report.score, 10);
  EXPECT_DOUBLE_EQ(report.max_score, 20);
}

/// Lab 17 as the grader times it: both operations at rows of 32, 1024, 32768 and 2^20 floats,
/// each row at \p fast of the probe but softmax's rows of 32 at \p short_softmax.
LabFacts segmented(double fast, double short_softmax) {
  LabFacts f = perfect();
  f.lab = "17_segmented";
  for (const char* op : {"segmented_sum", "segmented_softmax"})
    for (const char* length : {"32", "1024", "32768", "1048576"}) {
      const bool slow = std::string(op) == "segmented_softmax" && std::string(length) == "32";
      const double fraction = slow ? short_softmax : fast;
      f.perf.rows.push_back({op, length, f.perf.n, fraction, fraction * 4400});
    }
  f.perf.fraction = std::min(fast, short_softmax);  // the slowest row, as the benchmark sets it
  return f;
}

class PerLengthTest : public ScoreTest {
 protected:
  PerLengthTest() {
    lab_.lab = "17_segmented";
    lab_.threshold = 0.465;
    lab_.floor = 0.186;
    lab_.credit = "per_length";
  }
};

TEST_F(PerLengthTest, ALabFastAtEveryLengthButOneEarnsTheOthersShares) {
  const LabScore s = score_lab(segmented(0.9, 0.13), lab_, rubric_);
  const ScoredItem& perf = item(s, "performance");
  EXPECT_DOUBLE_EQ(perf.score, 1.5) << "three of four lengths, 0.5 each: " << perf.output;
  EXPECT_EQ(perf.status, ItemStatus::kFailed);
  ASSERT_EQ(s.lengths.size(), 4u);
  const char* order[] = {"32", "1024", "32768", "1048576"};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.lengths[i].length, order[i]) << "shorter lengths first";
    EXPECT_DOUBLE_EQ(s.lengths[i].max_points, 0.5);
    EXPECT_DOUBLE_EQ(s.lengths[i].points, i == 0 ? 0 : 0.5) << order[i];
  }
  EXPECT_EQ(s.lengths[0].op, "segmented_softmax") << "the slower operation at 32 counts";
  EXPECT_DOUBLE_EQ(s.lengths[0].fraction, 0.13);
  EXPECT_EQ(s.lengths[3].label, "rows of 2^20");
  EXPECT_TRUE(contains(perf.output, "rows of 32: segmented_softmax 0.13")) << perf.output;
  EXPECT_TRUE(contains(perf.output, "0 of 0.5, below the floor")) << perf.output;
  EXPECT_TRUE(contains(perf.output, "1.5 of 2 points")) << perf.output;
  EXPECT_NEAR(s.score, 9.5, 1e-9);
  EXPECT_TRUE(std::any_of(s.messages.begin(), s.messages.end(), [](const std::string& m) {
    return contains(m, "rows of 32") && contains(m, "below the floor");
  }));
}

TEST_F(PerLengthTest, ReportJsonSaysWhatEachLengthEarned) {
  const LabFacts f = segmented(0.9, 0.13);
  GradeReport report;
  report.labs.push_back({f, score_lab(f, lab_, rubric_), 0.465, 0.186});
  const auto perf = report_json(report)["labs"][0]["performance"];
  ASSERT_EQ(perf["lengths"].size(), 4u);
  EXPECT_EQ(perf["lengths"][0]["length"], "32");
  EXPECT_EQ(perf["lengths"][0]["op"], "segmented_softmax");
  EXPECT_DOUBLE_EQ(perf["lengths"][0]["points"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(perf["lengths"][1]["points"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(perf["lengths"][1]["max_points"].get<double>(), 0.5);
  EXPECT_EQ(perf["rows"].size(), 8u) << "every timed row, both operations";
}

TEST_F(PerLengthTest, ALengthBetweenFloorAndThresholdEarnsPartOfItsShare) {
  // Halfway between 0.186 and 0.465: half of the length's 0.5.
  const LabScore s = score_lab(segmented(0.9, (0.186 + 0.465) / 2), lab_, rubric_);
  EXPECT_NEAR(item(s, "performance").score, 1.75, 0.005);
  EXPECT_TRUE(contains(item(s, "performance").output, "below the threshold"));
  // Every length at full speed: every share.
  const LabScore full = score_lab(segmented(0.9, 0.9), lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(full, "performance").score, 2);
  EXPECT_EQ(item(full, "performance").status, ItemStatus::kPassed);
}

TEST_F(PerLengthTest, CorrectnessStillGatesEveryShare) {
  LabFacts f = segmented(0.9, 0.9);
  f.tests = {suite(31, 1)};
  const LabScore s = score_lab(f, lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(s, "performance").score, 0);
  EXPECT_TRUE(s.lengths.empty());
}

TEST_F(PerLengthTest, TheSlowestRowStillSetsTheCreditWhereTheRubricKeepsIt) {
  // The same rows under the default rule (every lab but lab 17): the slowest row sets it all.
  lab_.credit = "slowest";
  const LabScore s = score_lab(segmented(0.9, 0.13), lab_, rubric_);
  EXPECT_DOUBLE_EQ(item(s, "performance").score, 0);
  EXPECT_TRUE(contains(item(s, "performance").output, "below the floor"));
  EXPECT_TRUE(s.lengths.empty());
  // A lab timed at two sizes without segment lengths (the capstone) keeps its slowest too.
  LabRubric capstone;
  capstone.lab = "15_capstone";
  capstone.measure = "cub";
  capstone.threshold = 0.9;
  capstone.floor = 0.667;
  LabFacts f = perfect(0.7);
  f.lab = "15_capstone";
  f.perf.measure = "cub";
  f.perf.rows = {{"sum", "", 268435455, 0.99, 4000}, {"sum", "", 3457, 0.7, 50}};
  EXPECT_NEAR(item(score_lab(f, capstone, rubric_), "performance").score,
              performance_points(0.7, 0.9, 0.667, 2), 0.005);
}

TEST(ScoreHelpers, LengthCreditsGroupRowsByLengthOrSize) {
  PerfFacts perf;
  perf.rows = {{"sum", "", 3457, 0.5, 1}, {"sum", "", 268435455, 0.9, 2}};
  const std::vector<LengthCredit> sizes = length_credits(perf, 0.8, 0.4, 2);
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes[0].label, "n = 3457");
  EXPECT_DOUBLE_EQ(sizes[0].points, 0.25);
  EXPECT_DOUBLE_EQ(sizes[1].points, 1);
}

TEST(ScoreHelpers, LabStatusNamesAreTheReportsWords) {
  EXPECT_STREQ(lab_status_name(LabStatus::kGraded), "graded");
  EXPECT_STREQ(lab_status_name(LabStatus::kMissing), "missing");
  EXPECT_STREQ(lab_status_name(LabStatus::kBuildFailed), "build failed");
  EXPECT_STREQ(lab_status_name(LabStatus::kForbiddenLibrary), "forbidden library");
  EXPECT_STREQ(lab_status_name(LabStatus::kStub), "stub");
  EXPECT_STREQ(lab_status_name(LabStatus::kBuildOnly), "build only (no GPU)");
}

TEST(ScoreHelpers, ProportionalAndRounding) {
  EXPECT_DOUBLE_EQ(proportional_points(0, 10, 4), 0);
  EXPECT_DOUBLE_EQ(proportional_points(5, 10, 4), 2);
  EXPECT_DOUBLE_EQ(proportional_points(10, 0, 4), 0);
  EXPECT_DOUBLE_EQ(round_points(2.0 / 3), 0.67);
  EXPECT_EQ(points_text(9.67), "9.67");
  EXPECT_EQ(points_text(10), "10");
  EXPECT_EQ(points_text(8.5), "8.5");
}

}  // namespace
}  // namespace reduce::grade
