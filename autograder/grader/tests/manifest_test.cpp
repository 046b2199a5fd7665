// The build manifest CMake writes (course-manifest.json): the grader takes every path from it.
#include <reduce_grade/course.hpp>
#include <reduce_grade/manifest.hpp>

#include <gtest/gtest.h>

namespace reduce::grade {
namespace {

constexpr const char* kManifest = R"({
  "version": 2,
  "contract_include_dir": "/b/contract/include",
  "contract_headers": ["reduce/lab.cuh", "reduce/cuda_check.cuh"],
  "runner": "/b/bin/reduce_lab_runner",
  "bench": "",
  "checkers": {"public": "/b/bin/course_test", "graded": "/b/bin/course_graded_test"},
  "operations": {
    "sum": {"entry": "sum", "public_filter": "Sum*.*", "hidden_filter": "HiddenSum*.*", "graded_filter": "Sum*.*:HiddenSum*.*", "export_object": "x.o"},
    "sum_deterministic": {"entry": "sum", "public_filter": "Sum*.*:SumDeterministic*.*", "hidden_filter": "", "graded_filter": "", "export_object": "y.o"}
  },
  "trees": {
    "submission": [
      {"lab": "14_atomic_max", "op": "maximum", "library": "/b/submission/lib/lib14_atomic_max_maximum.so"}
    ]
  }
})";

TEST(BuildManifest, PathsComeFromTheManifest) {
  const BuildManifest m = parse_manifest(kManifest, "course-manifest.json");
  EXPECT_EQ(m.runner, "/b/bin/reduce_lab_runner");
  EXPECT_TRUE(m.bench.empty());
  EXPECT_EQ(m.grading_checker(), "/b/bin/course_graded_test");
  EXPECT_EQ(m.library("14_atomic_max", "maximum"), "/b/submission/lib/lib14_atomic_max_maximum.so");
  EXPECT_TRUE(m.library("14_atomic_max", "atomic_max").empty());
  ASSERT_EQ(m.contract_header_paths().size(), 2u);
  EXPECT_EQ(m.contract_header_paths()[0], "/b/contract/include/reduce/lab.cuh");
}

// Every operation's suites are in the course's two checkers: what selects them is a filter and
// the entry point, each written by the build (the grader names no test).
TEST(BuildManifest, EachOperationsSuitesAreAFilterInTheCoursesCheckers) {
  const BuildManifest m = parse_manifest(kManifest, "course-manifest.json");
  const SuiteSelection pub = m.suites("sum", SuiteKind::kPublic);
  EXPECT_EQ(pub.checker, "/b/bin/course_test");
  EXPECT_EQ(pub.filter, "Sum*.*");
  EXPECT_EQ(pub.args(), (std::vector<std::string>{"--lab-entry=sum", "--lab-filter=Sum*.*"}));
  EXPECT_EQ(m.suites("sum", SuiteKind::kHidden).checker, "/b/bin/course_graded_test");
  EXPECT_EQ(m.suites("sum", SuiteKind::kHidden).filter, "HiddenSum*.*");
  EXPECT_EQ(m.suites("sum", SuiteKind::kGraded).filter, "Sum*.*:HiddenSum*.*");
  // The deterministic sum runs the sum's suites too, on the same entry point, and has no hidden
  // suites: no checker for those.
  EXPECT_EQ(m.suites("sum_deterministic", SuiteKind::kPublic).entry, "sum");
  EXPECT_TRUE(m.suites("sum_deterministic", SuiteKind::kHidden).checker.empty());
  EXPECT_TRUE(m.suites("sum_deterministic", SuiteKind::kGraded).checker.empty());
  EXPECT_TRUE(m.suites("argmax", SuiteKind::kPublic).checker.empty());
  // Without hidden suites built, the public checker serves the grading.
  BuildManifest students = m;
  students.graded_checker.clear();
  EXPECT_EQ(students.grading_checker(), "/b/bin/course_test");
  EXPECT_TRUE(students.suites("sum", SuiteKind::kGraded).checker.empty());
}

TEST(BuildManifest, AMalformedManifestIsAConfigurationError) {
  EXPECT_THROW(parse_manifest("{\"runner\": 3}", "m.json"), ConfigError);
  EXPECT_THROW(parse_manifest("not json", "m.json"), ConfigError);
  EXPECT_THROW(read_manifest("/nonexistent-build-folder"), ConfigError);
}

}  // namespace
}  // namespace reduce::grade
