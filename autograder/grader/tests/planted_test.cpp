// check_expectation(): how a planted case's expected grade and failing test are checked.
#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/planted.hpp>

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

// A case's expected.toml that is not TOML is a clear error that names the file and the line.
TEST(PlantedExpectation, TextThatIsNotTomlNamesItsFileAndLine) {
  try {
    parse_expectation("lab = \"04_sequential\"\nmax_points = = 2\n", "broken");
    ADD_FAILURE() << "no error for text that is not TOML";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(starts_with(e.what(), "broken/expected.toml:2: TOML syntax error: ")) << e.what();
  }
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

/// A graded lab whose performance item says \p output, with \p hidden as its hidden details.
LabReport lab_saying(const std::string& output, const std::string& hidden) {
  LabReport lab;
  lab.facts.lab = "04_sequential";
  lab.score.status = LabStatus::kGraded;
  ScoredItem item;
  item.key = "performance";
  item.name = "performance";
  item.max_score = 2;
  item.output = output;
  item.hidden_details = hidden;
  lab.score.items.push_back(item);
  lab.score.max_score = 2;
  return lab;
}

TEST(PlantedExpectation, TheNewKeysAreKnown) {
  const PlantedExpectation e = parse_expectation(
      "lab = \"04_sequential\"\nmax_points = 8\nvisible_none = [\"HIDDEN-LOG\", \"n=\"]\n"
      "report_inert = true\n",
      "keys");
  EXPECT_TRUE(e.warnings.empty());
  EXPECT_EQ(e.visible_none, (std::vector<std::string>{"HIDDEN-LOG", "n="}));
  EXPECT_TRUE(e.report_inert);
}

// What a lab throws in the benchmark may reach the instructor's details, never what the
// student sees.
TEST(PlantedExpectation, VisibleNoneLooksAtWhatTheStudentSees) {
  PlantedExpectation e;
  e.visible_none = {"HIDDEN-LOG"};
  EXPECT_TRUE(
      check_expectation(e, lab_saying("the benchmark row failed", "HIDDEN-LOG: n=1025")).empty());
  const std::vector<std::string> problems =
      check_expectation(e, lab_saying("the lab threw: HIDDEN-LOG: n=1025", ""));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("student-visible"), std::string::npos);
  LabReport noted = lab_saying("the benchmark row failed", "");
  noted.score.messages.push_back("performance: HIDDEN-LOG: n=33");
  EXPECT_EQ(check_expectation(e, noted).size(), 1u);
}

TEST(PlantedExpectation, InertTextHasNoControlsOverridesOrBrokenUtf8) {
  EXPECT_EQ(inert_problem("plain text\twith a tab\nand \xC3\xA9 (UTF-8)"), "");
  EXPECT_EQ(inert_problem("04_sequential/?]0;pwned?.cuh"), "");
  EXPECT_NE(inert_problem("a title \x1B]0;pwned\x07"), "");
  EXPECT_NE(inert_problem("a carriage return\r"), "");
  EXPECT_NE(inert_problem("C1 CSI \xC2\x9B"
                          "31m"),
            "");
  EXPECT_NE(inert_problem("an override \xE2\x80\xAE"
                          "txt.exe"),
            "");
  EXPECT_NE(inert_problem("an isolate \xE2\x81\xA6"), "");
  EXPECT_NE(inert_problem("an 8-bit CSI \x9B"), "");
  EXPECT_NE(inert_problem("cut short \xE2\x80"), "");
  PlantedExpectation e;
  e.report_inert = true;
  // Over every report the writers make of the lab (what they make of a lab's text is theirs).
  EXPECT_EQ(check_expectation(e, lab_saying("04_sequential/?]0;x?.cuh: unusual", "")),
            std::vector<std::string>{});
}

// A case may plant a link (a lab folder, a file): it stays a link, to what it names from the
// case's folder, wherever the case is written.
TEST(PlantedExpectation, MaterializeKeepsLinksAsLinksToTheSameFiles) {
  namespace fs = std::filesystem;
  const fs::path tmp = fs::temp_directory_path() / ("planted_links_" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / "course/solutions/14_lab");
  fs::create_directories(tmp / "course/solutions/15_lab");
  std::ofstream(tmp / "course/solutions/14_lab/a.cu") << "solution a";
  std::ofstream(tmp / "course/solutions/15_lab/b.cu") << "solution b";
  // The case: 14_lab is a link to the solution's folder; 15_lab holds a link to a solution file.
  const fs::path dir = tmp / "course/planted/link_case";
  fs::create_directories(dir / "15_lab");
  fs::create_symlink("../../solutions/14_lab", dir / "14_lab");
  fs::create_symlink("../../../solutions/15_lab/b.cu", dir / "15_lab/b.cu");
  PlantedExpectation c;
  c.name = "link_case";
  c.dir = dir;
  c.lab = "14_lab";
  c.graded_beside = {"15_lab"};
  const fs::path root = materialize_case(c, tmp / "course/solutions", tmp / "out/deeper/work");
  EXPECT_TRUE(fs::is_symlink(root / "14_lab"));
  EXPECT_TRUE(fs::equivalent(root / "14_lab", tmp / "course/solutions/14_lab"));
  EXPECT_TRUE(fs::is_symlink(root / "15_lab/b.cu"));
  EXPECT_TRUE(fs::equivalent(root / "15_lab/b.cu", tmp / "course/solutions/15_lab/b.cu"));
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace reduce::grade
