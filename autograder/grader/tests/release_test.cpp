// The student release: what is in it, what is not, and that its cache defaults build labs/ as
// the student's own tree.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/reports/gradescope.hpp>
#include <reduce_grade/reports/release.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>

namespace reduce::grade {
namespace {

class ReleaseTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = make_temp_dir("reduce-grade-release-") / "release";
    course_ = load_course(REDUCE_GRADE_TEST_ROOT);
    result_ = write_release(course_, out_);
  }
  static void TearDownTestSuite() { remove_all_quietly(out_.parent_path()); }
  static fs::path out_;
  static Course course_;
  static ReleaseResult result_;
};

fs::path ReleaseTest::out_;
Course ReleaseTest::course_;
ReleaseResult ReleaseTest::result_;

TEST_F(ReleaseTest, HasTheStudentParts) {
  for (const char* path : {"labs/04_sequential/sum.cu",
                           "common/include/reduce/lab.cuh",
                           "cmake/ReduceLab.cmake",
                           "cmake/CourseLabs.cmake",
                           "course.json",
                           "autograder/runner/src/runner_main.cpp",
                           "autograder/tests/sum_test.cu",
                           "autograder/tests/gpu_test.hpp",
                           "autograder/tests/CMakeLists.txt",
                           "autograder/bench/CMakeLists.txt",
                           "tools/ladder",
                           "tools/lab-test",
                           "autograder/grader/CMakeLists.txt",
                           "autograder/rubric.toml",
                           "autograder/part_seconds.toml",
                           "tools/grade",
                           "tools/setup",
                           "tools/test",
                           "tools/capstone_table.py",
                           "tools/product_error.py",
                           "notebooks/colab.ipynb",
                           "CMakeLists.txt",
                           "CMakePresets.json",
                           "README.md",
                           ".github/workflows/self-check.yml",
                           ".clang-format",
                           "LICENSE",
                           "CHANGELOG.md",
                           "SECURITY.md"})
    EXPECT_TRUE(fs::exists(out_ / path)) << path;
  for (const CourseLab& lab : course_.labs)
    EXPECT_TRUE(fs::is_directory(out_ / "labs" / lab.folder));
  EXPECT_FALSE(result_.files.empty());
}

TEST_F(ReleaseTest, HasNothingInstructorsOnly) {
  for (const char* path :
       {"solutions", "autograder/hidden", "autograder/planted", "autograder/grader/tests",
        "autograder/gradescope", "autograder/ci", "autograder/release", "tools/maint", ".git"})
    EXPECT_FALSE(fs::exists(out_ / path)) << path;
  for (auto it = fs::recursive_directory_iterator(out_); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string rel = fs::relative(it->path(), out_).generic_string();
    EXPECT_FALSE(contains(rel, "solutions")) << rel;
    EXPECT_FALSE(contains(rel, "hidden_test")) << rel;
    if (starts_with(rel, "docs/")) EXPECT_NE(it->path().extension(), ".cu") << rel;
  }
  // The stubs are released, never a solution.
  EXPECT_NE(read_file(out_ / "labs/04_sequential/sum.cu"),
            read_file(course_.root / "solutions/04_sequential/sum.cu"));
  EXPECT_TRUE(contains(read_file(out_ / "labs/04_sequential/sum.cu"), "REDUCE_NOT_IMPLEMENTED"));
}

TEST_F(ReleaseTest, HasTheStudentsReadmeAndWorkflow) {
  const std::string readme = read_file(out_ / "README.md");
  EXPECT_EQ(readme, read_file(course_.root / "autograder" / "release" / "README.md"));
  EXPECT_NE(readme, read_file(course_.root / "README.md"));  // not the instructors'
  EXPECT_FALSE(contains(readme, "For instructors"));
  EXPECT_TRUE(contains(readme, "Grade yourself"));
  EXPECT_EQ(read_file(out_ / ".github" / "workflows" / "self-check.yml"),
            read_file(course_.root / "autograder" / "ci" / "self-check.yml"));
  EXPECT_TRUE(result_.warnings.empty()) << join(result_.warnings, "\n");
}

TEST_F(ReleaseTest, EveryToolALessonNamesIsReleased) {
  const std::regex tool(R"(tools/[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*)");
  int named = 0;
  for (const CourseLab& lab : course_.labs) {
    const std::string lesson = read_file(out_ / "labs" / lab.folder / "README.md");
    for (auto it = std::sregex_iterator(lesson.begin(), lesson.end(), tool);
         it != std::sregex_iterator(); ++it, ++named) {
      std::string path = it->str();
      while (!path.empty() && path.back() == '.') path.pop_back();  // the end of a sentence
      EXPECT_TRUE(fs::is_regular_file(out_ / path)) << lab.folder << " names " << path;
    }
  }
  EXPECT_GT(named, 15);
}

TEST_F(ReleaseTest, CacheDefaultsBuildTheStudentsLabs) {
  const std::string cml = read_file(out_ / "CMakeLists.txt");
  EXPECT_TRUE(contains(cml, "set(REDUCE_TREES \"labs\" CACHE STRING"));
  EXPECT_FALSE(contains(cml, "labs;solutions"));
  EXPECT_TRUE(
      std::regex_search(cml, std::regex(R"(option\(REDUCE_LABS_ARE_STUBS\s+"[^"]*"\s+OFF\))")));
  const auto presets = nlohmann::json::parse(read_file(out_ / "CMakePresets.json"));
  bool has_default = false;
  for (const auto& p : presets["configurePresets"]) {
    if (p["name"] == "default") {
      has_default = true;
      EXPECT_EQ(p["cacheVariables"]["REDUCE_TREES"], "labs");
      EXPECT_EQ(p["cacheVariables"]["REDUCE_LABS_ARE_STUBS"], "OFF");
    }
  }
  EXPECT_TRUE(has_default);
}

TEST_F(ReleaseTest, ConfiguresAsAStudentTree) {
  if (!find_program("nvcc") && !fs::exists("/usr/local/cuda/bin/nvcc"))
    GTEST_SKIP() << "no nvcc here";
  const fs::path build = out_.parent_path() / "build";
  ProcessSpec spec;
  spec.argv = {"cmake", "-S", out_.string(), "-B", build.string(), "-DREDUCE_BUILD_BENCHMARKS=OFF"};
  if (find_program("ninja")) spec.argv.insert(spec.argv.end(), {"-G", "Ninja"});
  spec.timeout_s = 300;
  const ProcessResult r = run_process(spec);
  ASSERT_TRUE(r.succeeded()) << r.output;
  const std::string graph = read_file(build / (find_program("ninja") ? "build.ninja" : "Makefile"));
  EXPECT_TRUE(contains(graph, "labs_04_sequential_sum"));  // the student's lab library
  EXPECT_TRUE(contains(graph, "reduce_sum_test"));         // the course's checker of sums
  EXPECT_FALSE(contains(graph, "solutions_04_sequential"));
  EXPECT_FALSE(contains(graph, "hidden_test"));
  EXPECT_FALSE(contains(read_file(build / "CTestTestfile.cmake") + graph, "stub_fails_cleanly"));
}

TEST_F(ReleaseTest, RefusesANonEmptyFolder) {
  EXPECT_THROW(write_release(course_, out_), ConfigError);
}

TEST(ReleaseRules, RewritesAndExclusions) {
  const std::string cml =
      "set(REDUCE_TREES \"labs;solutions\" CACHE STRING\n  \"doc\")\n"
      "option(REDUCE_LABS_ARE_STUBS\n  \"Treat the labs/ tree as stubs\" ON)\n";
  const std::string out = release_cmakelists(cml);
  EXPECT_TRUE(contains(out, "set(REDUCE_TREES \"labs\" CACHE STRING"));
  EXPECT_TRUE(contains(out, "\"Treat the labs/ tree as stubs\" OFF)"));
  EXPECT_THROW(release_cmakelists("project(x)\n"), ConfigError);
  EXPECT_TRUE(excluded_from_release("solutions/04_sequential/sum.cu"));
  EXPECT_TRUE(excluded_from_release("autograder/hidden/sum_hidden_test.cu"));
  EXPECT_FALSE(excluded_from_release("autograder/rubric.toml"));
  EXPECT_TRUE(excluded_from_release("autograder/grader/tests/end_to_end_test.cpp"));
  EXPECT_TRUE(excluded_from_release("docs/snippets/kernel.cu"));
  EXPECT_FALSE(excluded_from_release("autograder/tests/sum_test.cu"));
  EXPECT_FALSE(excluded_from_release("autograder/grader/src/build.cpp"));
  EXPECT_TRUE(excluded_from_release("build-student/CMakeCache.txt"));
  EXPECT_TRUE(excluded_from_release("tools/maint/__pycache__/x.cpython-311.pyc"));
  EXPECT_TRUE(excluded_from_release("tools/stray.pyc"));
  EXPECT_TRUE(excluded_from_release("autograder/ci/self-check.yml"));  // released renamed only
  EXPECT_FALSE(excluded_from_release("labs/04_sequential/README.md"));
}

/// A clone of the course's repository to change and commit in (skips where the course is not a
/// git checkout, e.g. an unpacked release): the release and the Gradescope zip, both made from a
/// commit.
class GitReleaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("reduce-grade-git-release-");
    if (!git({"-C", REDUCE_GRADE_TEST_ROOT, "rev-parse", "HEAD"}).succeeded())
      GTEST_SKIP() << "the course is not a git checkout";
    ASSERT_TRUE(
        git({"clone", "-q", REDUCE_GRADE_TEST_ROOT, (dir_ / "course").string()}).succeeded());
  }
  void TearDown() override { remove_all_quietly(dir_); }

  static ProcessResult git(std::vector<std::string> args) {
    ProcessSpec spec;
    spec.argv = {"git", "-c", "user.name=course", "-c", "user.email=course@example.org"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout_s = 300;
    spec.output_cap = 1 << 20;
    return run_process(spec);
  }
  fs::path course() const { return dir_ / "course"; }

  fs::path dir_;
};

TEST_F(GitReleaseTest, ReleasesTheCommitNotTheWorkingTree) {
  const fs::path stub = course() / "labs" / "04_sequential" / "sum.cu";
  const std::string committed = read_file(stub);
  write_file(stub,
             read_file(course() / "solutions" / "04_sequential" / "sum.cu"));  // not committed
  write_file(course() / "labs" / "04_sequential" / "notes.txt", "untracked");
  const ReleaseResult r = write_release_from_git(course(), "HEAD", dir_ / "release");
  EXPECT_EQ(read_file(dir_ / "release" / "labs" / "04_sequential" / "sum.cu"), committed);
  EXPECT_FALSE(fs::exists(dir_ / "release" / "labs" / "04_sequential" / "notes.txt"));
  EXPECT_FALSE(r.files.empty());
}

TEST_F(GitReleaseTest, ReleasesNoPythonCacheEvenWhenCommitted) {
  write_file(course() / "tools" / "stray.pyc", "cached");
  fs::create_directories(course() / "labs" / "04_sequential" / "__pycache__");
  write_file(course() / "labs" / "04_sequential" / "__pycache__" / "x.cpython-311.pyc", "cached");
  ASSERT_TRUE(git({"-C", course().string(), "add", "-f", "tools/stray.pyc",
                   "labs/04_sequential/__pycache__"})
                  .succeeded());
  ASSERT_TRUE(git({"-C", course().string(), "commit", "-qm", "caches"}).succeeded());
  const ReleaseResult r = write_release_from_git(course(), "HEAD", dir_ / "release");
  for (const std::string& rel : r.files) EXPECT_NE(fs::path(rel).extension(), ".pyc") << rel;
  EXPECT_FALSE(fs::exists(dir_ / "release" / "labs" / "04_sequential" / "__pycache__"));
  EXPECT_FALSE(fs::exists(dir_ / "release" / "tools" / "stray.pyc"));
}

TEST_F(GitReleaseTest, RefusesACommittedLabThatIsNoLongerAStub) {
  const fs::path stub = course() / "labs" / "04_sequential" / "sum.cu";
  write_file(stub, replace_all(read_file(stub), "REDUCE_NOT_IMPLEMENTED()", "return"));
  ASSERT_TRUE(git({"-C", course().string(), "commit", "-qam", "a lab completed"}).succeeded());
  try {
    write_release_from_git(course(), "HEAD", dir_ / "release");
    FAIL() << "a completed lab was released";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), "labs/04_sequential/sum.cu")) << e.what();
    EXPECT_TRUE(contains(e.what(), "not a stub")) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "release" / "labs"));
}

TEST_F(GitReleaseTest, RefusesWhatIsNotACommit) {
  EXPECT_THROW(write_release_from_git(course(), "no-such-branch", dir_ / "release"), ConfigError);
  EXPECT_THROW(write_release_from_git(dir_, "HEAD", dir_ / "release2"), ConfigError);
}

TEST_F(GitReleaseTest, GradescopeZipIsTheCommitWithItsEntryPointsOnTop) {
  write_file(course() / "labs" / "04_sequential" / "notes.txt", "untracked");
  fs::create_directories(course() / "build-x" / "__pycache__");
  write_file(course() / "build-x" / "__pycache__" / "m.pyc", "built");
  GradescopeOptions o;
  o.course_root = course();
  o.labs_spec = "4,9";
  o.out_zip = dir_ / "out" / "autograder.zip";
  const GradescopeZip z = write_gradescope_zip(o);
  EXPECT_EQ(z.labs, "04_sequential,09_warp_shuffle");
  EXPECT_EQ(z.commit.size(), 40u);
  const fs::path unpacked = dir_ / "unpacked";
  fs::create_directories(unpacked);
  ProcessSpec unzip;
  unzip.argv = {"python3", "-m", "zipfile", "-e", o.out_zip.string(), unpacked.string()};
  unzip.timeout_s = 120;
  ASSERT_TRUE(run_process(unzip).succeeded());
  for (const char* path : {"setup.sh", "run_autograder", "CMakeLists.txt", "README.md",
                           "docs/CMakeLists.txt", "autograder/hidden/sum_hidden_test.cu",
                           "autograder/grader/cli/main.cpp", "labs/04_sequential/sum.cu"})
    EXPECT_TRUE(fs::is_regular_file(unpacked / path)) << path;
  EXPECT_EQ(read_file(unpacked / "run_autograder"),
            read_file(course() / "autograder" / "gradescope" / "run_autograder"));
  EXPECT_EQ(trim(read_file(unpacked / "autograder" / "gradescope" / "labs")),
            "04_sequential,09_warp_shuffle");
  for (const char* path :
       {"solutions", "autograder/planted", "build-x", ".git", "labs/04_sequential/notes.txt"})
    EXPECT_FALSE(fs::exists(unpacked / path)) << path;
  EXPECT_THROW(write_gradescope_zip({course(), "HEAD", "99", dir_ / "z.zip"}), ConfigError);
  EXPECT_THROW(write_gradescope_zip({course(), "no-such-ref", "", dir_ / "z.zip"}), ConfigError);
  EXPECT_FALSE(fs::exists(dir_ / "z.zip"));
}

TEST(GradescopeRules, Exclusions) {
  EXPECT_TRUE(excluded_from_gradescope("solutions/04_sequential/sum.cu"));
  EXPECT_TRUE(excluded_from_gradescope("autograder/planted/cub_call/expected.toml"));
  EXPECT_TRUE(excluded_from_gradescope("tools/maint/__pycache__/x.cpython-311.pyc"));
  EXPECT_TRUE(excluded_from_gradescope("build-grader/CMakeCache.txt"));
  EXPECT_FALSE(excluded_from_gradescope("autograder/hidden/sum_hidden_test.cu"));
  EXPECT_FALSE(excluded_from_gradescope("autograder/grader/src/build.cpp"));
  EXPECT_FALSE(excluded_from_gradescope("docs/CMakeLists.txt"));
  EXPECT_FALSE(excluded_from_gradescope("README.md"));
}

}  // namespace
}  // namespace reduce::grade
