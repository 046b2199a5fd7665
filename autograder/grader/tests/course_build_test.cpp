// The course build's integrity check: any change to a course binary or to the course's sources
// after the build is reported, so that a grade given while it happened can be withheld.
#include <reduce_grade/build.hpp>
#include <reduce_grade/util.hpp>

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

}  // namespace
}  // namespace reduce::grade
