// reduce-grade end to end, without a GPU (--no-gpu, so the result is the same on a GPU host):
// one grading run of a submission assembled from the planted corpus and the course covers a
// compile error, a missing lab, an untouched stub, a library reduction and a correct lab. This
// builds CUDA code (about a minute on two cores), so it is one of two such tests (with
// build_beside_test.cpp).
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/grader.hpp>
#include <reduce_grade/processes/process.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace reduce::grade {
namespace {

const fs::path kRoot = REDUCE_GRADE_TEST_ROOT;

ProcessResult grader(const std::vector<std::string>& args, double timeout_s = 1200,
                     const std::vector<std::pair<std::string, std::string>>& env = {}) {
  ProcessSpec spec;
  spec.argv = {REDUCE_GRADE_BINARY, "--root", kRoot.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = env;
  spec.timeout_s = timeout_s;
  spec.output_cap = 16 << 20;
  return run_process(spec);
}

void copy_lab(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}

class GradeWithoutGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = make_temp_dir("reduce-grade-e2e-");
    const fs::path sub = dir_ / "submission";
    copy_lab(kRoot / "labs/01_atomic_naive", sub / "01_atomic_naive");  // stub
    copy_lab(kRoot / "autograder/planted/compile_error/04_sequential",
             sub / "02_interleaved_divergent");                          // error
    copy_lab(kRoot / "solutions/04_sequential", sub / "04_sequential");  // good
    copy_lab(kRoot / "autograder/planted/cub_call/09_warp_shuffle",
             sub / "09_warp_shuffle");  // CUB
    // 05_first_add_load is missing.
    result_ = grader({"grade", sub.string(), "--labs", "1,2,4,5,9", "--no-gpu", "--seed", "1234",
                      "--out", (dir_ / "out").string(), "-j", "2"});
    report_ = nlohmann::json::parse(read_file(dir_ / "out" / "report.json"), nullptr, false);
  }
  static void TearDownTestSuite() { remove_all_quietly(dir_); }

  static const nlohmann::json& lab(const std::string& name) {
    for (const auto& l : report_["labs"])
      if (l["lab"] == name) return l;
    static const nlohmann::json none;
    ADD_FAILURE() << "no lab " << name;
    return none;
  }
  static std::string text(const nlohmann::json& l) { return l.dump(); }

  static fs::path dir_;
  static ProcessResult result_;
  static nlohmann::json report_;
};

fs::path GradeWithoutGpu::dir_;
ProcessResult GradeWithoutGpu::result_;
nlohmann::json GradeWithoutGpu::report_;

// One grading run (it builds CUDA code), several aspects: under ctest every TEST is a process of
// its own, so the aspects are sections of one test rather than tests sharing a fixture.
TEST_F(GradeWithoutGpu, CompileErrorMissingLabStubLibraryCallAndCorrectLab) {
  {
    SCOPED_TRACE("ExitsWithTheNoGpuCodeAndWritesEveryReport");
    EXPECT_EQ(result_.exit_code, 3) << result_.output;
    for (const char* file : {"report.json", "junit.xml", "results.json", "summary.txt"})
      EXPECT_TRUE(fs::exists(dir_ / "out" / file)) << file;
    ASSERT_TRUE(report_.is_object());
    EXPECT_EQ(report_["seed"], 1234);
    EXPECT_EQ(report_["gpu_available"], false);
    EXPECT_TRUE(contains(report_["messages"].dump(), "correctness and timing need a GPU"));
    EXPECT_TRUE(contains(result_.output, "lab "));  // the table was printed
    const auto results = nlohmann::json::parse(read_file(dir_ / "out" / "results.json"));
    EXPECT_DOUBLE_EQ(results["score"].get<double>(), 1);
    EXPECT_DOUBLE_EQ(results["max_score"].get<double>(), 50);
    const std::string junit = read_file(dir_ / "out" / "junit.xml");
    EXPECT_NE(junit.find("<testsuite name=\"02_interleaved_divergent\""), std::string::npos);
  }
  {
    SCOPED_TRACE("CompileErrorCostsTheLabAndShowsTheCompiler");
    const auto& l = lab("02_interleaved_divergent");
    EXPECT_EQ(l["score"], 0);
    EXPECT_EQ(l["status"], "build failed");
    const std::string errors = l["build"]["errors"].get<std::string>();
    EXPECT_TRUE(contains(errors, "02_interleaved_divergent/sum.cu(")) << errors;
    EXPECT_TRUE(contains(errors, "error")) << errors;
    EXPECT_TRUE(contains(errors, "bias")) << errors;
    EXPECT_FALSE(contains(errors, dir_.string())) << "paths are shown relative to the submission";
    EXPECT_TRUE(contains(l["items"][0]["output"].get<std::string>(), "does not compile"));
  }
  {
    SCOPED_TRACE("MissingLabScoresZero");
    const auto& l = lab("05_first_add_load");
    EXPECT_EQ(l["score"], 0);
    EXPECT_EQ(l["status"], "missing");
    EXPECT_TRUE(contains(text(l), "missing: 05_first_add_load/ (the lab folder)"));
  }
  {
    SCOPED_TRACE("UntouchedStubScoresZero");
    const auto& l = lab("01_atomic_naive");
    EXPECT_EQ(l["score"], 0);
    EXPECT_EQ(l["library"]["stub"], true);
    EXPECT_TRUE(contains(text(l), "not implemented"));
  }
  {
    SCOPED_TRACE("LibraryReductionIsFoundInTheBuiltLibrary");
    const auto& l = lab("09_warp_shuffle");
    EXPECT_EQ(l["score"], 0);
    EXPECT_EQ(l["status"], "forbidden library");
    bool symbol = false, include = false;
    for (const auto& f : l["library"]["forbidden"]) {
      symbol = symbol || (f["kind"] == "symbol" && contains(f["what"].get<std::string>(), "cub::"));
      include = include || f["kind"] == "include";
    }
    EXPECT_TRUE(symbol) << text(l);
    EXPECT_TRUE(include) << text(l);
  }
  {
    SCOPED_TRACE("CorrectLabGetsBuildPointsOnly");
    const auto& l = lab("04_sequential");
    EXPECT_EQ(l["score"], 1);
    EXPECT_EQ(l["status"], "build only (no GPU)");
    EXPECT_EQ(l["library"]["forbidden"].size(), 0u);
    EXPECT_EQ(l["library"]["stub"], false);
    EXPECT_TRUE(contains(text(l), "needs a GPU"));
  }
}

TEST(GraderCli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(grader({"grade", "/nonexistent/submission", "--no-gpu"}, 60).exit_code, 2);
  EXPECT_EQ(grader({"grade", "--labs", "99", "--no-gpu"}, 60).exit_code, 2);
  EXPECT_EQ(grader({"grade", "--pass-mark", "140"}, 60).exit_code, 2);
  EXPECT_EQ(grader({"frobnicate"}, 60).exit_code, 2);
  EXPECT_EQ(grader({"--rubric", "/nonexistent.toml", "grade", "--no-gpu"}, 60).exit_code, 2);
  const fs::path dir = make_temp_dir("reduce-grade-cli-");
  write_file(dir / "bad.toml", "[labs.04_sequential]\nthreshold = 7\n");
  const ProcessResult bad =
      grader({"--rubric", (dir / "bad.toml").string(), "grade", "--labs", "4", "--no-gpu"}, 60);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(contains(bad.output, "threshold")) << bad.output;
  write_file(dir / "occupied" / "file", "x");
  EXPECT_EQ(grader({"release", (dir / "occupied").string()}, 60).exit_code, 2);
  EXPECT_EQ(grader({"--version"}, 60).exit_code, 0);
  remove_all_quietly(dir);
}

TEST(GraderCli, MissingLabNeedsNoBuild) {
  // Only a missing lab: nothing to configure, the report is written at once.
  const fs::path dir = make_temp_dir("reduce-grade-cli-");
  fs::create_directories(dir / "empty_submission");
  const ProcessResult r = grader({"grade", (dir / "empty_submission").string(), "--labs", "5",
                                  "--no-gpu", "--out", (dir / "out").string()},
                                 120);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  const auto report = nlohmann::json::parse(read_file(dir / "out" / "report.json"));
  EXPECT_EQ(report["labs"][0]["status"], "missing");
  remove_all_quietly(dir);
}

TEST(GraderCli, SubmissionNameReplacesTheGradedCopyInTheReports) {
  // Gradescope grades a temporary copy; the reports and the reproduce command name the upload.
  const fs::path dir = make_temp_dir("reduce-grade-cli-");
  fs::create_directories(dir / "copy");
  const ProcessResult r =
      grader({"grade", (dir / "copy").string(), "--labs", "5", "--no-gpu", "--out",
              (dir / "out").string(), "--submission-name", "/autograder/submission", "--seed", "7"},
             120);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  const auto report = nlohmann::json::parse(read_file(dir / "out" / "report.json"));
  EXPECT_EQ(report["submission"], "/autograder/submission");
  EXPECT_EQ(report["reproduce"],
            "reduce-grade grade /autograder/submission --labs 05_first_add_load --seed 7");
  EXPECT_FALSE(contains(read_file(dir / "out" / "results.json"), (dir / "copy").string()));
  remove_all_quietly(dir);
}

TEST(GraderCli, BatchWritesAGradebookAndGradesEveryone) {
  const fs::path dir = make_temp_dir("reduce-grade-batch-");
  fs::create_directories(dir / "subs" / "alice");
  fs::create_directories(dir / "subs" / "bob" / "labs");  // a whole repository: labs/ inside
  write_file(dir / "subs" / "notes.txt", "not a submission");
  const ProcessResult r = grader({"batch", (dir / "subs").string(), "--labs", "5", "--no-gpu",
                                  "--seed", "9", "--out", (dir / "out").string()},
                                 300);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(read_file(dir / "out" / "gradebook.csv"),
            "student,total,max,05_first_add_load,seed,status,reason\n"
            "alice,0,10,0,9,graded (no GPU),05_first_add_load: missing: 05_first_add_load/ (the "
            "lab folder) is not in the submission\n"
            "bob,0,10,0,9,graded (no GPU),05_first_add_load: missing: 05_first_add_load/ (the lab "
            "folder) is not in the submission\n");
  EXPECT_TRUE(fs::exists(dir / "out" / "alice" / "report.json"));
  EXPECT_TRUE(fs::exists(dir / "out" / "bob" / "results.json"));
  remove_all_quietly(dir);
}

TEST(GraderCli, BatchOnSeveralGpusWritesTheSameGradebook) {
  // Three workers (the GPU list is only pinned, never probed, under --no-gpu): the submissions
  // finish in any order, and the gradebook lists them as a serial run does.
  const fs::path dir = make_temp_dir("reduce-grade-gpus-");
  for (const char* student : {"carol", "alice", "bob", "dave"})
    fs::create_directories(dir / "subs" / student);
  const auto run = [&](const std::vector<std::string>& extra, const std::string& out) {
    std::vector<std::string> args = {
        "batch", (dir / "subs").string(), "--labs", "5", "--no-gpu", "--seed", "9",
        "--out", (dir / out).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = grader(args, 300);
    EXPECT_EQ(r.exit_code, 3) << r.output;
    return read_file(dir / out / "gradebook.csv");
  };
  const std::string serial = run({}, "serial");
  EXPECT_EQ(run({"--gpus", "0,1,0"}, "parallel"), serial);
  EXPECT_NE(serial.find("submission\nbob,0,10,0,9,graded (no GPU),"), std::string::npos) << serial;
  EXPECT_LT(serial.find("\nalice,"), serial.find("\nbob,")) << serial;
  remove_all_quietly(dir);
}

TEST(GraderCli, BatchSurvivesAnExceptionInOneSubmission) {
  // The middle one of three submissions makes its grading throw (REDUCE_GRADE_TEST_THROW, a
  // test-only fault): a std::exception in a serial batch, anything else on three workers. It
  // gets an error row and error.txt; the others are graded, and the batch finishes its
  // gradebook and exits 4 (an internal error) instead of aborting.
  const fs::path dir = make_temp_dir("reduce-grade-fault-");
  for (const char* student : {"alice", "bob", "carol"})
    fs::create_directories(dir / "subs" / student);
  const auto batch = [&](const std::string& fault, const std::vector<std::string>& extra,
                         const std::string& out, const std::string& why) {
    SCOPED_TRACE(out);
    std::vector<std::string> args = {
        "batch", (dir / "subs").string(), "--labs", "5", "--no-gpu", "--seed", "9",
        "--out", (dir / out).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = grader(args, 300, {{"REDUCE_GRADE_TEST_THROW", fault}});
    EXPECT_EQ(r.signal, 0) << r.output;
    EXPECT_EQ(r.exit_code, 4) << r.output;
    const std::string book = read_file(dir / out / "gradebook.csv");
    const std::string error = "could not grade: internal error: " + why;
    EXPECT_NE(book.find("\nalice,0,10,0,9,graded (no GPU),"), std::string::npos) << book;
    EXPECT_NE(book.find("\nbob,0,10,0,0,error: " + error + ","), std::string::npos) << book;
    EXPECT_NE(book.find("\ncarol,0,10,0,9,graded (no GPU),"), std::string::npos) << book;
    EXPECT_EQ(split_lines(book).size(), 4u) << book;
    EXPECT_EQ(read_file(dir / out / "bob" / "error.txt"), error + "\n");
    EXPECT_TRUE(fs::exists(dir / out / "alice" / "report.json"));
    EXPECT_TRUE(fs::exists(dir / out / "carol" / "report.json"));
  };
  batch("bob", {}, "serial", "fault injected for the test of bob");
  batch("bob:other", {"--gpus", "0,0,0"}, "parallel", "an exception that is not a std::exception");
  // grade: exit 4 and error.txt in the report folder.
  const ProcessResult one = grader({"grade", (dir / "subs" / "bob").string(), "--labs", "5",
                                    "--no-gpu", "--out", (dir / "one").string()},
                                   120, {{"REDUCE_GRADE_TEST_THROW", "bob"}});
  EXPECT_EQ(one.exit_code, 4) << one.output;
  EXPECT_TRUE(contains(read_file(dir / "one" / "error.txt"), "could not grade: internal error"))
      << one.output;
  remove_all_quietly(dir);
}

TEST(GraderCli, BatchOfHostileNamesAndLinksGradesEveryoneAndStaysInert) {
  // Names a terminal, a spreadsheet or a JSON writer could trip on, a student folder that is a
  // link to another's, and one whose labs/ is. No lab builds (alice's is refused for a file
  // name), so this takes seconds.
  const fs::path dir = make_temp_dir("reduce-grade-hostile-");
  const fs::path subs = dir / "subs";
  const std::string formula = "=HYPERLINK(\"x\")", title = "\x1b]0;pwned\x07", bytes = "\xff\xfe";
  for (const std::string& name : {formula, title, bytes}) fs::create_directories(subs / name);
  const fs::path alice_lab = subs / "alice" / "labs" / "05_first_add_load";
  copy_lab(kRoot / "labs" / "05_first_add_load", alice_lab);
  write_file(alice_lab / "bad\x01.cuh", "");
  fs::create_directory_symlink("alice", subs / "mallory");
  fs::create_directories(subs / "bob");
  fs::create_directory_symlink("../alice/labs", subs / "bob" / "labs");
  const ProcessResult r = grader({"batch", subs.string(), "--labs", "5", "--no-gpu", "--seed", "9",
                                  "--out", (dir / "out").string(), "-j", "2"},
                                 300);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << "the terminal got a raw escape";
  EXPECT_TRUE(contains(r.output, "\\x1b]0;pwned\\x07")) << r.output;
  const std::string book = read_file(dir / "out" / "gradebook.csv");
  EXPECT_EQ(split_lines(book).size(), 7u) << book;
  EXPECT_EQ(book.find('\x1b'), std::string::npos) << book;
  EXPECT_NE(book.find("\n\"'=HYPERLINK(\"\"x\"\")\",0,10,0,9,graded (no GPU),"), std::string::npos)
      << book;
  EXPECT_NE(book.find("\n\\x1b]0;pwned\\x07,0,10,0,9,graded (no GPU),"), std::string::npos) << book;
  EXPECT_NE(book.find("\n\\xff\\xfe,0,10,0,9,graded (no GPU),"), std::string::npos) << book;
  EXPECT_NE(
      book.find("\nmallory,0,10,0,0,\"error: the submission folder mallory is a symbolic link "
                "(to alice): a submission must be its own folder of regular files, so none "
                "of its labs is graded\","),
      std::string::npos)
      << book;
  for (const std::string& name : {formula, title, bytes}) {
    SCOPED_TRACE(inert_name(name));
    const auto report =
        nlohmann::json::parse(read_file(dir / "out" / name / "report.json"), nullptr, false);
    EXPECT_FALSE(report.is_discarded());
    const std::string summary = read_file(dir / "out" / name / "summary.txt");
    EXPECT_FALSE(summary.empty());
    EXPECT_EQ(inert_text(summary), summary);
  }
  const auto bob = nlohmann::json::parse(read_file(dir / "out" / "bob" / "report.json"));
  EXPECT_TRUE(contains(bob["labs"][0]["build"]["errors"].get<std::string>(),
                       "05_first_add_load: the folder labs that holds it is a symbolic link (to "
                       "../alice/labs)"))
      << bob.dump();
  const auto alice = nlohmann::json::parse(read_file(dir / "out" / "alice" / "report.json"));
  EXPECT_TRUE(contains(alice["labs"][0]["build"]["errors"].get<std::string>(),
                       "05_first_add_load/bad\\x01.cuh: has an unusual character"))
      << alice.dump();
  EXPECT_TRUE(fs::exists(dir / "out" / "similar_sources.txt"));
  remove_all_quietly(dir);
}

TEST(GraderCli, GpuOnlyCommandsSayNoGpuWithExitThree) {
  if (probe_gpu().present) GTEST_SKIP() << "a GPU is present";
  const fs::path dir = make_temp_dir("reduce-grade-nogpu-");
  EXPECT_EQ(grader({"calibrate", "--out", (dir / "cal").string()}, 120).exit_code, 3);
  EXPECT_EQ(
      grader({"check-planted", "--require-gpu", "--out", (dir / "pl").string()}, 120).exit_code, 3);
  remove_all_quietly(dir);
}

}  // namespace
}  // namespace reduce::grade
