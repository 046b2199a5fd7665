// check_expectation(): how a planted case's expected grade and failing test are checked.
#include <reduce_grade/planted.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace reduce::grade {
namespace {

/// A lab report with one public suite holding \p failed (failed) and \p passed (passed).
LabReport lab_with(const std::string& failed, const std::string& passed, double score) {
  LabReport lab;
  SuiteRun run;
  run.tests.push_back({failed, TestResult::kFailed, "boom"});
  run.tests.push_back({passed, TestResult::kPassed, ""});
  lab.facts.tests.push_back(run);
  lab.score.score = score;
  return lab;
}

TEST(PlantedExpectation, FailingTestPatternsJoinedByColonMatchAny) {
  const LabReport lab = lab_with("Cases/AtomicMaxSequential.ReturnsOldAndStoresMax/nan_start",
                                 "Cases/AtomicMaxSequential.ReturnsOldAndStoresMax/zeros", 5);
  PlantedExpectation e;
  e.failing_test = "*SumExact*:*AtomicMaxSequential*/nan_*";
  EXPECT_TRUE(check_expectation(e, lab).empty());
  e.failing_test = "*AtomicMaxSequential*/nan_start";
  EXPECT_TRUE(check_expectation(e, lab).empty());
}

TEST(PlantedExpectation, APassedTestOrNoMatchIsReported) {
  const LabReport lab = lab_with("Sizes/SumExact.MatchesBitwise/33", "Sizes/SumTail.Any/7", 5);
  PlantedExpectation e;
  e.failing_test = "*SumTail*:*Argmax*";  // SumTail passed; nothing else matches
  const std::vector<std::string> problems = check_expectation(e, lab);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("no failed test matches"), std::string::npos);
}

TEST(PlantedExpectation, PointBoundsAreChecked) {
  const LabReport lab = lab_with("A.B", "A.C", 7.5);
  PlantedExpectation e;
  e.max_points = 7.6;
  EXPECT_TRUE(check_expectation(e, lab).empty());
  e.max_points = 7.0;
  EXPECT_EQ(check_expectation(e, lab).size(), 1u);
  e.max_points.reset();
  e.points = 7.5;
  EXPECT_TRUE(check_expectation(e, lab).empty());
  e.min_points = 8;
  EXPECT_EQ(check_expectation(e, lab).size(), 1u);
}

TEST(PlantedExpectation, AWithheldGradeIsAllowedOnlyWhereSaid) {
  const PlantedExpectation plain =
      parse_expectation("lab = \"04_sequential\"\nmin_points = 9\n", "plain");
  EXPECT_FALSE(plain.may_be_withheld);
  const PlantedExpectation attack = parse_expectation(
      "lab = \"04_sequential\"\nmin_points = 9\nmay_be_withheld = true\n", "attack");
  EXPECT_TRUE(attack.may_be_withheld);
  EXPECT_TRUE(attack.warnings.empty());
}

TEST(PlantedExpectation, LabsGradedBesideAreGradedButNotChecked) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("planted_beside_" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "two_labs");
  std::ofstream(root / "two_labs" / "expected.toml")
      << "lab = \"04_sequential\"\npoints = 0\n"
         "graded_beside = [\"03_interleaved_strided\", \"09_warp_shuffle\"]\n";
  const std::vector<PlantedExpectation> cases = load_planted(root);
  std::filesystem::remove_all(root);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_TRUE(cases[0].warnings.empty());
  EXPECT_EQ(
      cases[0].graded_labs(),
      (std::vector<std::string>{"04_sequential", "03_interleaved_strided", "09_warp_shuffle"}));
}

}  // namespace
}  // namespace reduce::grade
