// The build manifest CMake writes (course-manifest.json): the grader takes every path from it,
// and every name the build gives (getters, benchmark rows).
#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/manifest.hpp>
#include <reduce_grade/base/util.hpp>

#include <gtest/gtest.h>

#include <map>
#include <string>

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
    "sum": {"entry": "sum", "getter": "reduce_sum_lab", "public_filter": "Sum*.*", "hidden_filter": "HiddenSum*.*", "graded_filter": "Sum*.*:HiddenSum*.*", "export_object": "x.o"},
    "sum_deterministic": {"entry": "sum", "getter": "reduce_sum_lab", "public_filter": "Sum*.*:SumDeterministic*.*", "hidden_filter": "", "graded_filter": "", "export_object": "y.o"}
  },
  "trees": {
    "submission": [
      {"lab": "14_atomic_max", "op": "maximum", "library": "/b/submission/lib/lib14_atomic_max_maximum.so", "bench_name": "14_atomic_max"},
      {"lab": "15_capstone", "op": "sum_deterministic", "library": "/b/submission/lib/lib15_capstone_sum_deterministic.so", "bench_name": "15_capstone_sum_deterministic"}
    ]
  }
})";

/// kManifest with \p from replaced by \p to (once).
std::string manifest_with(const std::string& from, const std::string& to) {
  std::string text = kManifest;
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

/// The message of the ConfigError that parsing \p text throws (empty: none).
std::string parse_error(const std::string& text) {
  try {
    parse_manifest(text, "m.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

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

// A lab's left-out tests join the filter's negative patterns (one '-' starts them).
TEST(BuildManifest, AFilterWithoutSomeTests) {
  EXPECT_EQ(filter_without("Sum*.*:*/Sum*.*", {"SumTest.AboveInt32Range"}),
            "Sum*.*:*/Sum*.*-SumTest.AboveInt32Range");
  EXPECT_EQ(filter_without("Sum*.*-SumCompensated*.*", {"SumTest.A", "SumTest.B"}),
            "Sum*.*-SumCompensated*.*:SumTest.A:SumTest.B");
  EXPECT_EQ(filter_without("Sum*.*", {}), "Sum*.*");
  EXPECT_EQ(filter_without("", {"SumTest.A"}), "") << "no tests stay no tests";
}

// The names the build gives, written once by CMake (cmake/LabExports.cmake, ReduceLab.cmake):
// the C getter of an operation's entry point and the name of a library's benchmark rows.
TEST(BuildManifest, GettersAndBenchmarkRowsAreTheBuilds) {
  const BuildManifest m = parse_manifest(kManifest, "course-manifest.json");
  EXPECT_EQ(m.getter("sum"), "reduce_sum_lab");
  EXPECT_EQ(m.getter("sum_deterministic"), "reduce_sum_lab");  // the entry's getter, shared
  EXPECT_THROW(m.getter("argmax"), ConfigError);
  EXPECT_EQ(m.bench_name("14_atomic_max", "maximum"), "14_atomic_max");
  EXPECT_EQ(m.bench_name("15_capstone", "sum_deterministic"), "15_capstone_sum_deterministic");
  EXPECT_TRUE(m.bench_name("15_capstone", "sum").empty());
}

TEST(BuildManifest, AMalformedManifestIsAConfigurationError) {
  EXPECT_THROW(parse_manifest("{\"runner\": 3}", "m.json"), ConfigError);
  EXPECT_THROW(parse_manifest("not json", "m.json"), ConfigError);
  EXPECT_THROW(read_manifest("/nonexistent-build-folder"), ConfigError);
}

// A getter or a row name missing, or not a string, is the manifest's error, which names it.
TEST(BuildManifest, AMissingOrMistypedNameIsAParseError) {
  const std::string getter = "m.json: not a build manifest: operation sum has no string 'getter'";
  EXPECT_EQ(parse_error(manifest_with("\"getter\": \"reduce_sum_lab\", ", "")), getter);
  EXPECT_EQ(parse_error(manifest_with("\"getter\": \"reduce_sum_lab\"", "\"getter\": 3")), getter);
  EXPECT_EQ(parse_error(manifest_with("\"getter\": \"reduce_sum_lab\"", "\"getter\": null")),
            getter);
  const std::string row =
      "m.json: not a build manifest: the library of 14_atomic_max/maximum has no string "
      "'bench_name'";
  EXPECT_EQ(parse_error(manifest_with(", \"bench_name\": \"14_atomic_max\"", "")), row);
  EXPECT_EQ(parse_error(manifest_with("\"bench_name\": \"14_atomic_max\"", "\"bench_name\": []")),
            row);
  EXPECT_EQ(parse_error(kManifest), "");
}

// The course's own build (where the grader is built inside it): every operation has the getter
// the lab libraries' version script exports, one per entry point.
TEST(BuildManifest, TheCourseBuildNamesTheVersionScriptsGetters) {
#ifndef REDUCE_GRADE_COURSE_MANIFEST
  GTEST_SKIP() << "the grader was built alone, without the course's build";
#else
  const BuildManifest m =
      parse_manifest(read_file(REDUCE_GRADE_COURSE_MANIFEST), REDUCE_GRADE_COURSE_MANIFEST);
  const std::string script = read_file(REDUCE_GRADE_LAB_EXPORTS_MAP);
  const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  std::map<std::string, std::string> getter_of_entry;
  for (const CourseOperation& op : course.operations) {
    const std::string& getter = m.getter(op.name);
    EXPECT_TRUE(contains(script, "    " + getter + ";\n")) << op.name << ": " << getter;
    const auto [it, first] = getter_of_entry.emplace(op.entry, getter);
    EXPECT_EQ(it->second, getter) << op.name << " shares " << op.entry;
    if (first) EXPECT_EQ(getter, "reduce_" + op.name + "_lab");  // the first with that entry
  }
  EXPECT_EQ(m.getter("sum_deterministic"), "reduce_sum_lab");
#endif
}

}  // namespace
}  // namespace reduce::grade
