// Report writers: the JSON is parsed back and checked for Gradescope's required fields and
// types; the JUnit XML is checked structurally.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/reports/report.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>

namespace reduce::grade {
namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + 1))
    ++n;
  return n;
}

GradeReport sample_report() {
  GradeReport r;
  r.grader_version = "1.0.0";
  r.submission = "/tmp/alice";
  r.seed = 123456789;
  r.gpu_available = true;
  r.gpu = "NVIDIA H200";
  r.parallel_checks = 7;  // as a 15 GiB GPU runs them
  r.sanitizer_checkers = 1;
  r.ceiling_gbps = 4408.1;
  r.seconds = 61.4;
  r.started_at = "2026-11-22T10:00:00Z";
  r.reproduce =
      "reduce-grade grade /tmp/alice --labs 04_sequential,09_warp_shuffle --seed 123456789";

  LabReport good;
  good.facts.lab = "04_sequential";
  good.threshold = 0.158;
  good.score.status = LabStatus::kGraded;
  good.score.items = {{"build", "build", 1, 1, ItemStatus::kPassed, "builds", ""},
                      {"library", "library check", 0, 0, ItemStatus::kPassed, "clean", ""},
                      {"tests", "public tests", 4, 4, ItemStatus::kPassed, "passed 32 of 32", ""},
                      {"hidden", "hidden tests", 2, 2, ItemStatus::kPassed, "passed 28 of 28", ""},
                      {"sanitizer", "sanitizer", 1, 1, ItemStatus::kPassed, "clean", ""},
                      {"performance", "performance", 2, 2, ItemStatus::kPassed, "full credit", ""}};
  good.score.score = good.score.max_score = 10;

  LabReport bad;
  bad.facts.lab = "09_warp_shuffle";
  bad.threshold = 0.714;
  bad.score.status = LabStatus::kGraded;
  bad.score.items = {
      {"build", "build", 1, 1, ItemStatus::kPassed, "builds", ""},
      {"library", "library check", 0, 0, ItemStatus::kPassed, "clean", ""},
      {"tests", "public tests", 3.5, 4, ItemStatus::kFailed,
       "passed 28 of 32 <&> \"quoted\" \xff\xfe bytes", ""},
      {"hidden", "hidden tests", 1, 2, ItemStatus::kFailed, "passed 14 of 28 hidden tests",
       "failed:\nOffsets/HiddenMisaligned.ReadsFromAnyFloatOffset/offset1_n1000"},
      {"sanitizer", "sanitizer", 0.67, 1, ItemStatus::kFailed, "racecheck: 5 hazards", ""},
      {"performance", "performance", 0, 2, ItemStatus::kFailed, "0 points: the lab fails tests",
       ""}};
  bad.score.score = 6.17;
  bad.score.max_score = 10;
  bad.score.messages = {"public tests: passed 28 of 32"};
  r.labs = {good, bad};
  r.total();
  return r;
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("reduce-grade-report-");
    report_ = sample_report();
    write_reports(report_, dir_);
  }
  void TearDown() override { remove_all_quietly(dir_); }
  fs::path dir_;
  GradeReport report_;
};

TEST_F(ReportTest, TotalsAddUp) {
  EXPECT_DOUBLE_EQ(report_.score, 16.17);
  EXPECT_DOUBLE_EQ(report_.max_score, 20);
}

TEST_F(ReportTest, GradescopeResultsHaveTheRequiredFieldsAndTypes) {
  const auto json = nlohmann::json::parse(read_file(dir_ / "results.json"));
  ASSERT_TRUE(json.is_object());
  ASSERT_TRUE(json["score"].is_number());
  EXPECT_DOUBLE_EQ(json["score"].get<double>(), 16.17);
  ASSERT_TRUE(json["max_score"].is_number());
  ASSERT_TRUE(json["execution_time"].is_number_integer());
  EXPECT_EQ(json["execution_time"].get<int>(), 61);
  ASSERT_TRUE(json["output"].is_string());
  EXPECT_TRUE(contains(json["output"].get<std::string>(), "seed 123456789"));
  ASSERT_TRUE(json["tests"].is_array());
  EXPECT_EQ(json["tests"].size(), 13u);  // 12 items + hidden details of the second lab
  int after_published = 0;
  double sum = 0;
  for (const auto& t : json["tests"]) {
    ASSERT_TRUE(t["name"].is_string());
    ASSERT_TRUE(t["score"].is_number());
    ASSERT_TRUE(t["max_score"].is_number());
    ASSERT_TRUE(t["output"].is_string());
    if (t.contains("status")) {  // none for a part not run here
      const std::string status = t["status"].get<std::string>();
      EXPECT_TRUE(status == "passed" || status == "failed") << status;
    }
    const std::string visibility = t["visibility"].get<std::string>();
    EXPECT_TRUE(visibility == "visible" || visibility == "after_published") << visibility;
    if (visibility == "after_published") {
      ++after_published;
      EXPECT_TRUE(contains(t["output"].get<std::string>(), "HiddenMisaligned"));
    } else {
      EXPECT_FALSE(contains(t["output"].get<std::string>(), "HiddenMisaligned"));
    }
    sum += t["score"].get<double>();
  }
  EXPECT_EQ(after_published, 1);
  EXPECT_NEAR(sum, 16.17, 1e-9);
}

TEST_F(ReportTest, ReportJsonHasEverything) {
  const auto json = nlohmann::json::parse(read_file(dir_ / "report.json"));
  EXPECT_EQ(json["seed"].get<std::uint64_t>(), 123456789u);
  EXPECT_EQ(json["gpu"], "NVIDIA H200");
  EXPECT_EQ(json["parallel_checks"], 7);
  EXPECT_EQ(json["sanitizer_checkers"], 1);
  EXPECT_EQ(json["labs"].size(), 2u);
  EXPECT_EQ(json["labs"][1]["items"].size(), 6u);
  EXPECT_EQ(json["labs"][1]["items"][3]["hidden_details"].get<std::string>().substr(0, 7),
            "failed:");
  EXPECT_TRUE(json["reproduce"].get<std::string>().find("--seed 123456789") != std::string::npos);
}

TEST_F(ReportTest, JunitXmlIsStructurallySound) {
  const std::string xml = read_file(dir_ / "junit.xml");
  EXPECT_TRUE(starts_with(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
  EXPECT_EQ(count(xml, "<testsuites "), 1u);
  EXPECT_EQ(count(xml, "</testsuites>"), 1u);
  EXPECT_EQ(count(xml, "<testsuite "), 2u);
  EXPECT_EQ(count(xml, "</testsuite>"), 2u);
  EXPECT_EQ(count(xml, "<testcase "), 12u);
  EXPECT_EQ(count(xml, "</testcase>"), 12u);
  EXPECT_EQ(count(xml, "<failure "), 4u);
  EXPECT_EQ(count(xml, "</failure>"), 4u);
  EXPECT_TRUE(contains(xml, "tests=\"12\" failures=\"4\""));
  EXPECT_TRUE(contains(xml, "&lt;&amp;&gt; &quot;quoted&quot;"));
  EXPECT_FALSE(contains(xml, "\xff"));
  // Every attribute value is quoted and no raw '<' appears inside text.
  const std::regex stray("<[^/?a-z!]");
  EXPECT_FALSE(std::regex_search(xml, stray));
}

TEST_F(ReportTest, SummaryTableAndGradebook) {
  const std::string summary = read_file(dir_ / "summary.txt");
  EXPECT_TRUE(contains(summary, "seed 123456789"));
  EXPECT_TRUE(contains(summary, "04_sequential"));
  EXPECT_TRUE(contains(summary, "16.17/20"));
  EXPECT_TRUE(contains(summary, "reproduce: reduce-grade grade"));
  const std::string csv = gradebook_csv({"04_sequential", "09_warp_shuffle"},
                                        {{"alice",
                                          16.17,
                                          20,
                                          {10, 6.17},
                                          42,
                                          "graded",
                                          "09_warp_shuffle: performance: 0.5 of the ceiling"},
                                         {"bob, jr", 0, 20, {0, 0}, 43, "error: \"bad\" folder"}});
  EXPECT_EQ(csv,
            "student,total,max,04_sequential,09_warp_shuffle,seed,status,reason\n"
            "alice,16.17,20,10,6.17,42,graded,09_warp_shuffle: performance: 0.5 of the ceiling\n"
            "\"bob, jr\",0,20,0,0,43,\"error: \"\"bad\"\" folder\",\n");
}

TEST_F(ReportTest, TerminalSummaryGivesOneNoteAndARerunCommandPerLab) {
  GradeReport r = report_;
  LabReport& bad = r.labs[1];
  bad.score.messages.push_back("sanitizer: racecheck: 5 hazards");
  SuiteRun suite;
  suite.op = "sum";
  suite.tests = {
      {"SumTest.EmptyInputIsPositiveZero", TestResult::kPassed, ""},
      {"Sizes/SumExact.MatchesBitwise/33", TestResult::kFailed, "got 31, want 33\nmore"}};
  bad.facts.tests = {suite};
  LabReport stub = r.labs[0];
  stub.facts.lab = "05_first_add_load";
  stub.score.status = LabStatus::kStub;
  stub.score.messages = {"not implemented: the lab is still the stub", "public tests: 0 of 40"};
  r.labs.push_back(stub);

  const std::string quiet = summary_text(r, false);
  EXPECT_TRUE(contains(quiet, "09_warp_shuffle: public tests: passed 28 of 32")) << quiet;
  EXPECT_FALSE(contains(quiet, "racecheck: 5 hazards")) << quiet;
  EXPECT_TRUE(
      contains(quiet, "first failing test Sizes/SumExact.MatchesBitwise/33: got 31, want 33"))
      << quiet;
  EXPECT_TRUE(contains(
      quiet, "rerun it: tools/lab-test 09 -- --gtest_filter='Sizes/SumExact.MatchesBitwise/33'"))
      << quiet;
  EXPECT_EQ(count(quiet, "05_first_add_load: "), 1u) << quiet;
  EXPECT_TRUE(contains(quiet, "05_first_add_load: not started")) << quiet;

  const std::string verbose = summary_text(r, true);
  EXPECT_TRUE(contains(verbose, "racecheck: 5 hazards")) << verbose;
  EXPECT_TRUE(contains(verbose, "public tests: 0 of 40")) << verbose;
}

TEST_F(ReportTest, TheNextStepIsTheLabWithTheLowestShareOfItsPoints) {
  GradeReport r = report_;
  LabReport& partial = r.labs[1];
  SuiteRun suite;
  suite.op = "sum";
  suite.tests = {{"Sizes/SumExact.MatchesBitwise/33", TestResult::kFailed, "got 31, want 33"}};
  partial.facts.tests = {suite};
  std::string text = summary_text(r, false);
  EXPECT_TRUE(
      contains(text, "next: 09_warp_shuffle (6.17/10): read labs/09_warp_shuffle/README.md"))
      << text;
  EXPECT_TRUE(contains(
      text, "then run tools/lab-test 09 -- --gtest_filter='Sizes/SumExact.MatchesBitwise/33'"))
      << text;
  // An untouched lab has a smaller share still: it comes first, with all of its tests.
  LabReport stub = r.labs[0];
  stub.facts.lab = "05_first_add_load";
  stub.score.status = LabStatus::kStub;
  stub.score.score = 0;
  r.labs.push_back(stub);
  text = summary_text(r, false);
  EXPECT_TRUE(contains(text, "next: 05_first_add_load (0/10)")) << text;
  EXPECT_TRUE(contains(text, "then run tools/lab-test 05\n")) << text;
  // Full marks everywhere: no next step.
  for (LabReport& lab : r.labs) lab.score.score = lab.score.max_score;
  EXPECT_FALSE(contains(summary_text(r, false), "next: ")) << summary_text(r, false);
}

TEST_F(ReportTest, GradebookReasonNamesEveryLabBelowItsMaximum) {
  const std::string reason = gradebook_reason(report_json(report_));
  EXPECT_FALSE(reason.empty());
  for (const LabReport& lab : report_.labs) {
    const bool lost = lab.score.score + 1e-9 < lab.score.max_score;
    EXPECT_EQ(contains(reason, lab.facts.lab + ": "), lost) << reason;
  }
}

// Without a GPU a correct lab shows no red on Gradescope: the parts that could not run there have
// neither a status nor points to lose, and say why; the score is the build points.
TEST_F(ReportTest, GradescopeShowsAPartNotRunWithoutAGpuNeitherPassedNorFailed) {
  GradeReport r = report_;
  LabReport& lab = r.labs[0];
  for (ScoredItem& item : lab.score.items) {
    if (item.key == "build" || item.key == "library") continue;
    item.score = 0;
    item.status = ItemStatus::kSkipped;
    item.output = "needs a GPU: not run (no CUDA device on this machine)";
  }
  const nlohmann::json json = gradescope_json(r);
  int not_run = 0;
  for (const auto& t : json["tests"]) {
    const std::string name = t["name"].get<std::string>();
    if (!contains(name, lab.facts.lab) || !contains(t["output"].get<std::string>(), "needs a GPU"))
      continue;
    ++not_run;
    EXPECT_FALSE(t.contains("status")) << name;
    EXPECT_EQ(t["max_score"].get<double>(), 0) << name;
    EXPECT_TRUE(contains(name, "(not run here)")) << name;
  }
  EXPECT_EQ(not_run, 4);
  EXPECT_DOUBLE_EQ(json["score"].get<double>(), r.score);
}

// A lab below its maximum without a message (graded without a GPU: build points only) is given
// its first part below its maximum, not a bare "points lost".
TEST_F(ReportTest, GradebookReasonOfALabWithoutMessagesNamesItsFirstPartLost) {
  GradeReport r = report_;
  LabReport& lab = r.labs[0];
  lab.score.messages.clear();
  lab.score.score = 1;
  auto part = [](const char* name, double score, double max, ItemStatus status, const char* out) {
    ScoredItem item;
    item.key = item.name = name;
    item.score = score;
    item.max_score = max;
    item.status = status;
    item.output = out;
    return item;
  };
  lab.score.items = {part("build", 1, 1, ItemStatus::kPassed, "builds and links"),
                     part("public tests", 0, 6, ItemStatus::kSkipped,
                          "needs a GPU: not run (no CUDA device on this machine)\nmore")};
  const std::string reason = gradebook_reason(report_json(r));
  EXPECT_TRUE(contains(reason, lab.facts.lab + ": public tests: needs a GPU: not run (no CUDA "
                                               "device on this machine)"))
      << reason;
  EXPECT_FALSE(contains(reason, "points lost")) << reason;
  EXPECT_FALSE(contains(reason, "more")) << reason;
}

// A submission's names and text made inert in every report: a terminal obeys no escape of
// theirs, a spreadsheet runs no formula, an XML or JSON reader never fails on their bytes.
GradeReport hostile_report() {
  GradeReport r = sample_report();
  r.submission =
      "/tmp/batch/\x1b]0;pwned\x07\xff\xfe\xc2\x9b"
      "31m" +
      std::string(600, 'x');
  r.labs[1].score.messages = {
      "public tests: \x1b[2J\r\bcleared \xe2\x80\xae"
      "dlrow"};
  r.labs[1].score.items[2].output = "passed 28 of 32 \x01\x0b\xef\xbf\xbe\x1b[31m";
  r.messages = {"graded the lab folders in \x1b]52;c;cHduZWQ=\x07"};
  return r;
}

/// No C0 control but tab and newline, no DEL, no C1, and nothing that is not UTF-8.
bool inert(const std::string& text) {
  return inert_text(text) == text;
}

// A lab that does not compile: the terminal names the compiler's first error in the student's
// own file, the whole log, and the next step is to fix it.
TEST_F(ReportTest, ACompileErrorIsShownInTheStudentsFileWithTheLog) {
  GradeReport r = report_;
  LabReport& bad = r.labs[1];
  bad.facts.build.attempted = true;
  bad.facts.build.ok = false;
  bad.facts.build.errors =
      "09_warp_shuffle/sum.cu(32): error: identifier \"retrun\" is undefined\n    retrun x;\n";
  bad.facts.build.log = "/tmp/out/logs/09_warp_shuffle/build.log";
  bad.score.score = 0;
  bad.score.messages = {"build failed: the lab does not compile"};
  const std::string quiet = summary_text(r, false);
  EXPECT_TRUE(contains(quiet,
                       "09_warp_shuffle: first compiler error: /tmp/alice/09_warp_shuffle/"
                       "sum.cu(32): error: identifier \"retrun\" is undefined"))
      << quiet;
  EXPECT_TRUE(contains(quiet, "the whole build log: /tmp/out/logs/09_warp_shuffle/build.log"))
      << quiet;
  EXPECT_TRUE(contains(quiet,
                       "next: 09_warp_shuffle (0/10): fix the compile error "
                       "/tmp/alice/09_warp_shuffle/sum.cu(32)"))
      << quiet;
}

TEST(HostileNames, SummaryAndTerminalGetVisibleEscapesOnly) {
  const std::string summary = summary_text(hostile_report(), true);
  EXPECT_TRUE(inert(summary)) << summary;
  EXPECT_EQ(summary.find('\x1b'), std::string::npos);
  EXPECT_EQ(summary.find('\r'), std::string::npos);
  EXPECT_EQ(summary.find("\xc2\x9b"), std::string::npos);
  EXPECT_TRUE(contains(summary, "\\x1b]0;pwned\\x07\\xff\\xfe\\u009b31m")) << summary;
  EXPECT_TRUE(contains(summary, "\\x1b[2J\\x0d\\x08cleared \\u202edlrow")) << summary;
  EXPECT_TRUE(contains(summary, "...[")) << "a very long name is clipped with a marker";
  EXPECT_EQ(inert_name(std::string(300, 'y')).size(),
            120 + std::string("...[180 more bytes]").size());
}

TEST(HostileNames, JunitXmlHoldsNoCharacterXmlForbids) {
  const std::string xml = junit_xml(hostile_report());
  EXPECT_EQ(sanitize_text(xml), xml) << "a C0 or C1 control, U+FFFE or bytes that are not UTF-8";
  const fs::path dir = make_temp_dir("reduce-grade-xml-");
  write_file(dir / "junit.xml", xml);
  ProcessSpec parse;  // an XML parser, where python3 is installed
  parse.argv = {"python3", "-c", "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])",
                (dir / "junit.xml").string()};
  parse.timeout_s = 60;
  const ProcessResult r = run_process(parse);
  if (r.started) {
    EXPECT_TRUE(r.succeeded()) << r.output;
  }
  remove_all_quietly(dir);
}

TEST(HostileNames, JsonReportsAreWrittenForANameThatIsNotUtf8) {
  const fs::path dir = make_temp_dir("reduce-grade-json-");
  ASSERT_NO_THROW(write_reports(hostile_report(), dir));
  for (const char* file : {"report.json", "results.json"}) {
    SCOPED_TRACE(file);
    const auto json = nlohmann::json::parse(read_file(dir / file), nullptr, false);
    ASSERT_FALSE(json.is_discarded());  // strict: valid UTF-8 throughout
    EXPECT_TRUE(json.contains("score"));
  }
  EXPECT_TRUE(inert(read_file(dir / "summary.txt")));
  remove_all_quietly(dir);
}

TEST(HostileNames, GradebookCellsThatWouldBeFormulasAreNeutralised) {
  const std::string csv = gradebook_csv(
      {"04_sequential"}, {{"=HYPERLINK(\"http://x\",\"y\")", 1, 10, {1}, 7, "graded", ""},
                          {"+cmd", 0, 10, {0}, 8, "=1+1", "-2+3"},
                          {"@SUM(A1)", 0, 10, {0}, 9, "error: \x1b]0;t\x07", "\tx"},
                          {"\x1b]0;pwned\x07\xff", 0, 10, {0}, 9, "graded", ""}});
  EXPECT_EQ(csv,
            "student,total,max,04_sequential,seed,status,reason\n"
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",1,10,1,7,graded,\n"
            "\"'+cmd\",0,10,0,8,\"'=1+1\",\"'-2+3\"\n"
            "\"'@SUM(A1)\",0,10,0,9,error: ]0;t,\"'\tx\"\n"
            "\\x1b]0;pwned\\x07\\xff,0,10,0,9,graded,\n");
  EXPECT_EQ(csv_text("-"), "\"'-\"");
  EXPECT_EQ(csv_text("a=b"), "a=b");
}

}  // namespace
}  // namespace reduce::grade
