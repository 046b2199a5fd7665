// The course build's integrity check: any change to a course binary or to the course's sources
// after the build is reported, so that a grade given while it happened can be withheld. Also its
// configure, a kept build folder, and a grading's course build beside its labs' build.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/grader.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/submission/build.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace reduce::grade {
namespace {

class CourseBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("reduce-grade-course-");
    build_.dir = dir_ / "build";
    build_.course_root = dir_ / "course";
    write_file(build_.dir / "bin" / "course_test", "checker");
    write_file(build_.dir / "lib" / "libreduce_common.so", "library");
    write_file(build_.course_root / "course.json", "{}");
    write_file(build_.course_root / "autograder" / "rubric.toml", "[labs]");
    write_file(build_.course_root / "labs" / "04_sequential" / "sum.cu", "stub");
    build_.digests = course_digests(build_.dir, build_.course_root);
  }
  void TearDown() override { remove_all_quietly(dir_); }

  fs::path dir_;
  CourseBuild build_;
};

TEST_F(CourseBuildTest, NothingChangedSaysNothing) {
  EXPECT_EQ(build_.digests.size(), 4u);  // labs/ is the students' part, not digested
  EXPECT_EQ(build_.changes(), "");
}

TEST_F(CourseBuildTest, ARewrittenCheckerIsReported) {
  write_file(build_.dir / "bin" / "course_test", "#!/bin/sh\necho PASSED\n");
  EXPECT_EQ(build_.changes(), "bin/course_test changed");
}

TEST_F(CourseBuildTest, AddedAndRemovedFilesAreReported) {
  fs::remove(build_.dir / "lib" / "libreduce_common.so");
  write_file(build_.dir / "bin" / "extra", "x");
  const std::string changes = build_.changes();
  EXPECT_TRUE(contains(changes, "lib/libreduce_common.so went missing")) << changes;
  EXPECT_TRUE(contains(changes, "bin/extra appeared")) << changes;
}

TEST_F(CourseBuildTest, AChangedCourseSourceIsReported) {
  write_file(build_.course_root / "autograder" / "rubric.toml", "");
  EXPECT_EQ(build_.changes(), "course: autograder/rubric.toml changed");
}

TEST_F(CourseBuildTest, ChangesToTheStudentsLabsAreNotTheCourses) {
  write_file(build_.course_root / "labs" / "04_sequential" / "sum.cu", "solved");
  EXPECT_EQ(build_.changes(), "");
}

/// A small CMake project that stands in for the course in \p dir/course: its manifest names
/// \p runner, and \p more is added to its CMakeLists.txt.
void fake_course(const fs::path& dir, const std::string& runner, const std::string& more = "") {
  write_file(dir / "course" / "CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.20)\nproject(fake NONE)\n"
             "file(WRITE ${CMAKE_BINARY_DIR}/course-manifest.json [=[{\"runner\": \"" +
                 runner +
                 "\", \"contract_include_dir\": \"i\", \"contract_headers\": [], "
                 "\"operations\": {}, \"trees\": {}}]=])\n"
                 "add_custom_target(reduce_lab_runner)\n" +
                 more);
}

/// The course build of fake_course() in \p dir: no benchmark, no hidden tests.
CourseBuildOptions fake_course_options(const fs::path& dir) {
  CourseBuildOptions o;
  o.course_root = dir / "course";
  o.build_dir = dir / "build";
  o.log_dir = dir / "logs";
  o.benchmark = false;
  o.hidden = false;
  return o;
}

// A course build folder graded again with the same configure arguments is not configured again
// (its seconds saved); a changed CMake input is still seen, since the build configures again by
// itself, and the manifest is read after it.
TEST(CourseBuildConfigure, SkippedWhenUnchangedAndRedoneByTheBuildWhenAnInputChanged) {
  if (!find_program("cmake")) GTEST_SKIP() << "cmake is not installed";
  const fs::path dir = make_temp_dir("reduce-grade-configure-");
  const auto project = [&](const std::string& runner) { fake_course(dir, runner); };
  project("first");
  CourseBuildOptions o = fake_course_options(dir);
  const CourseBuild first = build_course(o);
  ASSERT_TRUE(first.ok) << first.problem;
  EXPECT_EQ(first.manifest.runner, "first");
  EXPECT_FALSE(contains(read_file(o.log_dir / "course-configure.log"), "configure skipped"));

  const CourseBuild again = build_course(o);
  ASSERT_TRUE(again.ok) << again.problem;
  EXPECT_TRUE(contains(read_file(o.log_dir / "course-configure.log"), "configure skipped"));

  project("second");  // a changed CMake input: the build configures again
  const CourseBuild changed = build_course(o);
  ASSERT_TRUE(changed.ok) << changed.problem;
  EXPECT_EQ(changed.manifest.runner, "second");

  o.cmake_args = {"-DSOMETHING=1"};  // other arguments: configured again here
  build_course(o);
  EXPECT_FALSE(contains(read_file(o.log_dir / "course-configure.log"), "configure skipped"));
  remove_all_quietly(dir);
}

// A student's build folder kept between gradings keeps exactly what its configure wrote, each
// file as it wrote it; every other file goes (the staged labs, the last build's objects and
// libraries, ninja's logs, anything planted), and the course's build is left alone.
class KeptBuildFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("reduce-grade-kept-");
    for (const char* file : {"CMakeCache.txt", "build.ninja", "CMakeFiles/rules.ninja",
                             "contract/include/reduce/lab.cuh", "course-manifest.json"})
      write_file(dir_ / file, std::string("configured ") + file);
    write_file(dir_ / "staging" / "04_sequential" / "sum.cu", "staged before the configure");
    write_file(dir_ / "course" / "bin" / "course_test", "the course's");
    record_configure(dir_);
    // The build and the tests that follow.
    for (const char* file : {"submission/lib/lib04_sequential_sum.so", ".ninja_deps", ".ninja_log",
                             "CMakeFiles/submission_04_sequential_sum.dir/sum.cu.o",
                             "contract/include/reduce/extra.cuh"})
      write_file(dir_ / file, "built");
  }
  void TearDown() override { remove_all_quietly(dir_); }

  /// Every file under the folder, by relative path, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> all;
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      if (!e.is_directory() || e.is_symlink())
        all.push_back(e.path().lexically_relative(dir_).string());
    std::sort(all.begin(), all.end());
    return all;
  }

  fs::path dir_;
};

TEST_F(KeptBuildFolder, KeepsTheConfigureAndNothingElse) {
  fs::create_symlink(dir_ / "CMakeCache.txt", dir_ / "CMakeFiles" / "planted_link");
  std::string why;
  ASSERT_TRUE(keep_configure(dir_, why)) << why;
  EXPECT_TRUE(contains(why, "kept its configure")) << why;
  EXPECT_EQ(files(),
            (std::vector<std::string>{"CMakeCache.txt", "CMakeFiles/rules.ninja", "build.ninja",
                                      "contract/include/reduce/lab.cuh", "course-manifest.json",
                                      "course/bin/course_test", "reduce-configured-files.txt"}));
  // Kept again: the record still holds.
  EXPECT_TRUE(keep_configure(dir_, why)) << why;
  EXPECT_EQ(clear_build_dir(dir_, true), why);
}

TEST_F(KeptBuildFolder, AChangedConfigureFileEmptiesTheFolder) {
  write_file(dir_ / "CMakeFiles" / "rules.ninja", "rule cc\n  command = cp prepared.so $out\n");
  std::string why;
  EXPECT_FALSE(keep_configure(dir_, why));
  EXPECT_EQ(why, "CMakeFiles/rules.ninja changed since its configure");
  EXPECT_EQ(clear_build_dir(dir_, true), "emptied: " + why);
  EXPECT_EQ(files(), std::vector<std::string>{"course/bin/course_test"});
}

TEST_F(KeptBuildFolder, AConfigureFileTurnedIntoALinkEmptiesTheFolder) {
  write_file(dir_ / "elsewhere", "configured build.ninja");  // the same contents, through a link
  fs::remove(dir_ / "build.ninja");
  fs::create_symlink(dir_ / "elsewhere", dir_ / "build.ninja");
  std::string why;
  EXPECT_FALSE(keep_configure(dir_, why));
  EXPECT_EQ(why, "build.ninja is no longer the file its configure wrote");
}

TEST_F(KeptBuildFolder, NoRecordOrNoKeepingEmptiesTheFolder) {
  EXPECT_EQ(clear_build_dir(dir_, false), "emptied");  // a grading that keeps nothing
  EXPECT_EQ(files(), std::vector<std::string>{"course/bin/course_test"});
  write_file(dir_ / "CMakeCache.txt", "an old folder");
  EXPECT_EQ(clear_build_dir(dir_, true), "emptied: no record of its configure");
}

// Which suite files the course's checkers link for a grading: those its labs' operations are
// tested by, joined with those the folder linked already (it only gains suites).
TEST(CheckerSuites, TheGradedLabsSuitesJoinedWithTheFoldersOwn) {
  const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  const auto plans = [&course](const std::vector<std::string>& labs) {
    std::vector<OpPlan> all;
    for (const std::string& lab : labs)
      for (const OpPlan& plan : course.plans(lab)) all.push_back(plan);
    return all;
  };
  EXPECT_EQ(checker_suites(plans({"04_sequential"}), ""), "sum");
  EXPECT_EQ(checker_suites(plans({"01_atomic_naive", "04_sequential"}), ""), "sum");
  // Lab 18's sums run the sum's suites too, on their own entry points.
  EXPECT_EQ(checker_suites(plans({"18_accuracy"}), ""), "sum;sum_compensated;sum_reproducible");
  EXPECT_EQ(checker_suites(plans({"10_max_min", "14_atomic_max"}), ""),
            "atomic_max;maximum;minimum");
  // What the folder's last configure linked stays linked.
  const std::string linked = "cmake\n-DREDUCE_BUILD_TESTS=ON\n-DREDUCE_CHECKER_SUITES=mean;sum\n";
  EXPECT_EQ(checker_suites(plans({"04_sequential"}), linked), "mean;sum");
  EXPECT_EQ(checker_suites(plans({"13_argmax"}), linked), "argmax;mean;sum");
  // A folder whose checkers link every suite file keeps them all.
  EXPECT_EQ(checker_suites(plans({"04_sequential"}), "cmake\n-DREDUCE_CHECKER_SUITES=\n"), "");
  EXPECT_EQ(checker_suites(plans({"04_sequential"}), "cmake\n-DREDUCE_BUILD_TESTS=ON\n"), "");
  // An operation without `suites` in the catalogue is tested by its own.
  OpPlan bare;
  bare.op = "product";
  EXPECT_EQ(checker_suites({bare}, ""), "product");
}

// The course build names the suites to configure: a folder built for lab 04 and then for lab 13
// links both, and lab 04 again configures nothing.
TEST(CourseBuildConfigure, NamesTheSuitesOfTheGradedLabs) {
  if (!find_program("cmake")) GTEST_SKIP() << "cmake is not installed";
  const fs::path dir = make_temp_dir("reduce-grade-suites-");
  fake_course(dir, "r",
              "file(WRITE ${CMAKE_BINARY_DIR}/suites.txt \"${REDUCE_CHECKER_SUITES}\")\n");
  const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  CourseBuildOptions o = fake_course_options(dir);
  const auto build = [&](const std::string& lab) {
    o.plans = course.plans(lab);
    for (OpPlan& plan : o.plans) plan.public_tests = false;  // the fake course has no checkers
    const CourseBuild built = build_course(o);
    EXPECT_TRUE(built.ok) << built.problem;
    return read_file(o.build_dir / "suites.txt");
  };
  EXPECT_EQ(build("04_sequential"), "sum");
  EXPECT_EQ(build("13_argmax"), "argmax;sum");
  EXPECT_EQ(build("04_sequential"), "argmax;sum");
  EXPECT_TRUE(contains(read_file(o.log_dir / "course-configure.log"), "configure skipped"));
  remove_all_quietly(dir);
}

// A grading that builds the course's binaries builds them beside the labs' build, not before it:
// the fake course's checker target waits for the lab's library target (a file in the labs' build
// folder), which a build one after the other would never reach; a failed course build throws
// only once the labs' build has ended. The labs' build, sandboxed, sees nothing of the course's.
class CourseBesideLabs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_program("cmake")) GTEST_SKIP() << "cmake is not installed";
    dir_ = make_temp_dir("reduce-grade-beside-");
    write_file(dir_ / "submission" / "04_sequential" / "sum.cu", "// the lab\n");
    fs::create_directories(dir_ / "build");
    course_ = load_course(REDUCE_GRADE_TEST_ROOT);
    course_.root = dir_ / "course";
    options_.submission = dir_ / "submission";
    options_.labs = {"04_sequential"};
    options_.out = dir_ / "out";
    options_.build_dir = dir_ / "build";
    options_.jobs = 2;
  }
  void TearDown() override { remove_all_quietly(dir_); }

  /// The fake course: its checkers wait up to 2 minutes for the lab's library target to have
  /// run, then build, or fail where \p fail; the lab's target lists what it sees of `course/`.
  void write_course(bool fail) {
    write_file(dir_ / "course" / "wait.sh",
               std::string("for i in $(seq 1200); do [ -e \"$1\" ] && exit ") + (fail ? "1" : "0") +
                   "; sleep 0.1; done; exit 2\n");
    fake_course(dir_, "r",
                "add_custom_target(reduce_course_test COMMAND sh ${CMAKE_SOURCE_DIR}/wait.sh "
                "${CMAKE_BINARY_DIR}/../labs-built VERBATIM)\n"
                "add_custom_target(reduce_course_graded_test)\nadd_custom_target(reduce_bench)\n"
                "add_custom_target(submission_04_sequential_sum COMMAND sh -c "
                "\"ls -A course > course-seen.txt; touch labs-built\" "
                "WORKING_DIRECTORY ${CMAKE_BINARY_DIR} VERBATIM)\n");
  }

  /// prepare_submission() with a GPU said to be present; printed_ gets its progress lines.
  PreparedSubmission prepare() {
    Progress progress;
    ::testing::internal::CaptureStdout();
    try {
      PreparedSubmission p =
          prepare_submission(course_, Rubric{}, options_, GpuProbe{true, "fake", ""}, progress);
      printed_ = ::testing::internal::GetCapturedStdout();
      return p;
    } catch (...) {
      printed_ = ::testing::internal::GetCapturedStdout();
      throw;
    }
  }

  fs::path dir_;
  Course course_;
  GradeOptions options_;
  std::string printed_;
};

TEST_F(CourseBesideLabs, BuildsTheCoursesBinariesWhileTheLabsBuild) {
  write_course(false);
  const PreparedSubmission p = prepare();
  ASSERT_TRUE(p.course && p.course->ok) << printed_;
  EXPECT_EQ(p.course->dir, dir_ / "build" / "course");
  EXPECT_TRUE(contains(printed_, "build finished in")) << printed_;
  EXPECT_TRUE(contains(printed_, "course's binaries built in")) << printed_;
  // Taken from the course's build once it ended: it has no benchmark binary.
  EXPECT_FALSE(p.build.benchmark_ok);
  EXPECT_EQ(p.build.benchmark_problem, "not built");
  if (!starts_with(p.build.isolation, "none"))
    EXPECT_EQ(read_file(dir_ / "build" / "course-seen.txt"), "") << p.build.isolation;
}

TEST_F(CourseBesideLabs, AFailedCourseBuildThrowsOnceTheLabsAreBuilt) {
  write_course(true);
  EXPECT_THROW(prepare(), ConfigError);
  EXPECT_TRUE(contains(printed_, "build finished in")) << printed_;
  EXPECT_TRUE(contains(printed_, "course's binaries failed to build in")) << printed_;
}

}  // namespace
}  // namespace reduce::grade
