// The build manifest CMake writes (course-manifest.json): the grader takes every path from it.
#include <reduce_grade/course.hpp>
#include <reduce_grade/manifest.hpp>

#include <gtest/gtest.h>

namespace reduce::grade {
namespace {

constexpr const char* kManifest = R"({
  "version": 1,
  "contract_include_dir": "/b/contract/include",
  "contract_headers": ["reduce/lab.cuh", "reduce/cuda_check.cuh"],
  "runner": "/b/bin/reduce_lab_runner",
  "bench": "",
  "operations": {
    "sum": {"public": "/b/bin/sum_test", "hidden": "/b/bin/sum_hidden_test", "graded": "/b/bin/sum_graded_test", "export_object": "x.o"},
    "sum_deterministic": {"public": "/b/bin/sum_deterministic_test", "hidden": "", "export_object": "y.o"}
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
  EXPECT_EQ(m.checker("sum", false), "/b/bin/sum_test");
  EXPECT_EQ(m.checker("sum", true), "/b/bin/sum_hidden_test");
  EXPECT_TRUE(m.checker("sum_deterministic", true).empty());
  EXPECT_TRUE(m.checker("argmax", false).empty());
  EXPECT_EQ(m.graded_checker("sum"), "/b/bin/sum_graded_test");
  EXPECT_TRUE(m.graded_checker("sum_deterministic").empty());  // an older manifest has none
  EXPECT_EQ(m.library("14_atomic_max", "maximum"), "/b/submission/lib/lib14_atomic_max_maximum.so");
  EXPECT_TRUE(m.library("14_atomic_max", "atomic_max").empty());
  ASSERT_EQ(m.contract_header_paths().size(), 2u);
  EXPECT_EQ(m.contract_header_paths()[0], "/b/contract/include/reduce/lab.cuh");
}

TEST(BuildManifest, AMalformedManifestIsAConfigurationError) {
  EXPECT_THROW(parse_manifest("{\"runner\": 3}", "m.json"), ConfigError);
  EXPECT_THROW(parse_manifest("not json", "m.json"), ConfigError);
  EXPECT_THROW(read_manifest("/nonexistent-build-folder"), ConfigError);
}

}  // namespace
}  // namespace reduce::grade
