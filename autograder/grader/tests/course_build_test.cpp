// The course build's integrity check: any change to a course binary or to the course's sources
// after the build is reported, so that a grade given while it happened can be withheld.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/submission/build.hpp>

#include <gtest/gtest.h>

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

// A course build folder graded again with the same configure arguments is not configured again
// (its seconds saved); a changed CMake input is still seen, since the build configures again by
// itself, and the manifest is read after it. A small CMake project stands in for the course.
TEST(CourseBuildConfigure, SkippedWhenUnchangedAndRedoneByTheBuildWhenAnInputChanged) {
  if (!find_program("cmake")) GTEST_SKIP() << "cmake is not installed";
  const fs::path dir = make_temp_dir("reduce-grade-configure-");
  const auto project = [&](const std::string& runner) {
    write_file(dir / "course" / "CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.20)\nproject(fake NONE)\n"
               "file(WRITE ${CMAKE_BINARY_DIR}/course-manifest.json [=[{\"runner\": \"" +
                   runner +
                   "\", \"contract_include_dir\": \"i\", \"contract_headers\": [], "
                   "\"operations\": {}, \"trees\": {}}]=])\n"
                   "add_custom_target(reduce_lab_runner)\n");
  };
  project("first");
  CourseBuildOptions o;
  o.course_root = dir / "course";
  o.build_dir = dir / "build";
  o.log_dir = dir / "logs";
  o.benchmark = false;
  o.hidden = false;
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

}  // namespace
}  // namespace reduce::grade
