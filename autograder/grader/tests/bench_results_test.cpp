// Benchmark JSON: both Google Benchmark formats for failed rows, and a real run from an H200.
#include <reduce_grade/base/bench_results.hpp>
#include <reduce_grade/base/util.hpp>

#include <gtest/gtest.h>

namespace reduce::grade {
namespace {

TEST(BenchSizes, Parse) {
  EXPECT_EQ(parse_size("2^28"), std::size_t{1} << 28);
  EXPECT_EQ(parse_size("268435456"), std::size_t{1} << 28);
  EXPECT_EQ(parse_size(" 1000 "), 1000u);
  EXPECT_EQ(parse_size("2^x"), 0u);
  EXPECT_EQ(parse_size("big"), 0u);
}

TEST(BenchJson, Version17ErrorRows) {
  const BenchResults r = parse_bench_json(R"({
    "context": {"ceiling_gbps": "4408.1", "gpu": "NVIDIA H200"},
    "benchmarks": [
      {"name": "sum/stream_read/268435456/min_time:0.100/manual_time", "run_type": "iteration",
       "median_us": 243.8, "median_gbps": 4403.5, "wrong_results": 0},
      {"name": "sum/04_sequential/268435456/min_time:0.100/manual_time", "run_type": "iteration",
       "median_us": 1154.5, "median_gbps": 930.1, "wrong_results": 0},
      {"name": "sum/09_warp_shuffle/268435456/min_time:0.100/manual_time", "run_type": "iteration",
       "error_occurred": true, "error_message": "WRONG in 7 timed runs"}]})");
  ASSERT_TRUE(r.parsed);
  EXPECT_DOUBLE_EQ(r.ceiling_gbps, 4408.1);
  EXPECT_EQ(r.gpu, "NVIDIA H200");
  const BenchRow* four = r.find("04_sequential", std::size_t{1} << 28);
  ASSERT_NE(four, nullptr);
  EXPECT_EQ(four->family, "sum");
  EXPECT_DOUBLE_EQ(four->median_gbps, 930.1);
  EXPECT_FALSE(four->error);
  const BenchRow* nine = r.find("09_warp_shuffle", std::size_t{1} << 28, "sum");
  ASSERT_NE(nine, nullptr);
  EXPECT_TRUE(nine->error);
  EXPECT_EQ(nine->error_message, "WRONG in 7 timed runs");
  EXPECT_EQ(r.find("04_sequential", 1024), nullptr);
  EXPECT_EQ(r.find("04_sequential", std::size_t{1} << 28, "maximum"), nullptr);
}

TEST(BenchJson, LabProcessStartsAreTheLargestCountOfTheRows) {
  const BenchResults r = parse_bench_json(R"({"benchmarks": [
      {"name": "sum/04_sequential/268435456", "median_gbps": 930.1, "lab_process_starts": 1},
      {"name": "sum/05_first_add_load/268435456", "median_gbps": 1801.0, "lab_process_starts": 2},
      {"name": "sum/09_warp_shuffle/268435456", "error_occurred": true,
       "error_message": "the lab's process died"},
      {"name": "sum/cub/268435456", "median_gbps": 3000.0, "lab_process_starts": "1e300"}]})");
  ASSERT_TRUE(r.parsed);
  EXPECT_EQ(r.lab_process_starts, 1000000);  // a huge count is clipped, never undefined
  const BenchResults none = parse_bench_json(R"({"benchmarks": []})");
  EXPECT_EQ(none.lab_process_starts, 0);
}

TEST(BenchJson, AGradedRowsNoiseIsReadAndAMissingOneIsZero) {
  const BenchResults r = parse_bench_json(R"({"benchmarks": [
      {"name": "sum/15_capstone/3834", "median_gbps": 0.7, "noise": 0.0125},
      {"name": "sum/cub/3834", "median_gbps": 0.9},
      {"name": "sum/04_sequential/3834", "median_gbps": 0.8, "noise": "loud"}]})");
  ASSERT_TRUE(r.parsed);
  EXPECT_DOUBLE_EQ(r.find("15_capstone", 3834)->noise, 0.0125);
  EXPECT_EQ(r.find("cub", 3834)->noise, 0.0);
  EXPECT_EQ(r.find("04_sequential", 3834)->noise, 0.0) << "not a number: none";
}

TEST(BenchJson, AGradedRowsThrottledSamplesAreReadAndClipped) {
  const BenchResults r = parse_bench_json(R"({"benchmarks": [
      {"name": "sum/15_capstone/3834", "median_gbps": 0.7, "throttled_samples": 3,
       "throttled_figure": 0},
      {"name": "sum/04_sequential/3834", "median_gbps": 0.8, "throttled_samples": -5,
       "throttled_figure": 1},
      {"name": "sum/09_warp_shuffle/3834", "median_gbps": 0.8, "throttled_samples": "1e300"}]})");
  ASSERT_TRUE(r.parsed);
  EXPECT_EQ(r.find("15_capstone", 3834)->throttled_samples, 3);
  EXPECT_FALSE(r.find("15_capstone", 3834)->throttled_figure);
  EXPECT_EQ(r.find("04_sequential", 3834)->throttled_samples, 0) << "never negative";
  EXPECT_TRUE(r.find("04_sequential", 3834)->throttled_figure);
  EXPECT_EQ(r.find("09_warp_shuffle", 3834)->throttled_samples, 1000000) << "clipped";
}

TEST(BenchJson, Version18SkippedRows) {
  const BenchResults r = parse_bench_json(R"({"context": {"ceiling_gbps": "3100.0"},
    "benchmarks": [
      {"name": "maximum/10_max_min/1024/min_time:0.100/manual_time", "run_type": "iteration",
       "skipped": true, "skip_message": "not implemented: see labs/10_max_min/maximum.cu"},
      {"name": "sum/cub/1024/manual_time", "run_type": "aggregate", "median_gbps": 1}]})");
  ASSERT_TRUE(r.parsed);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].family, "maximum");
  EXPECT_TRUE(r.rows[0].error);
  EXPECT_TRUE(contains(r.rows[0].error_message, "not implemented"));
}

TEST(BenchJson, GarbageIsAProblemNotACrash) {
  EXPECT_FALSE(parse_bench_json("").parsed);
  EXPECT_FALSE(parse_bench_json("{truncated").parsed);
  EXPECT_TRUE(parse_bench_json("{}").rows.empty());
}

/// A graded row of the benchmark's JSON: \p fields after its name.
BenchRow graded_row(const std::string& fields) {
  const BenchResults r = parse_bench_json(
      R"j({"benchmarks": [{"name": "sum/09_warp_shuffle/268435455", "run_type": "iteration", )j" +
      fields + "}]}");
  EXPECT_TRUE(r.parsed);
  EXPECT_EQ(r.rows.size(), 1u);
  return r.rows.empty() ? BenchRow{} : r.rows[0];
}

TEST(BenchVerdict, AGradedRowPassesOnItsFields) {
  const GradedVerdict v = graded_verdict(graded_row(
      R"j("median_us": 80.1, "median_gbps": 3350.2, "failure": 0, "wrong_results": 0,
         "warmup_wrong": 0, "clocks_agree": 1)j"));
  EXPECT_TRUE(v.passed) << v.reason;
  EXPECT_FALSE(v.clocks_disagree);
  EXPECT_EQ(v.wrong_results, 0);
  EXPECT_EQ(v.reason, "");
}

TEST(BenchVerdict, FailuresComeFromTheFields) {
  GradedVerdict v = graded_verdict(graded_row(
      R"j("error_occurred": true, "error_message": "WRONG in 7 timed calls (2 of them warm-up calls)",
         "failure": 1, "wrong_results": 7, "warmup_wrong": 2, "clocks_agree": 1)j"));
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.wrong_results, 7);
  EXPECT_FALSE(v.clocks_disagree);
  EXPECT_TRUE(contains(v.reason, "wrong results in 7 timed call")) << v.reason;
  v = graded_verdict(graded_row(
      R"j("error_occurred": true, "error_message": "clocks disagree: 358.4 us, 563.5 us",
         "failure": 2, "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": 0)j"));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(v.clocks_disagree);
  EXPECT_EQ(v.wrong_results, 0);
  // A wrong-results row without its count still costs at least one wrong result.
  v = graded_verdict(graded_row(R"j("error_occurred": true, "failure": 1)j"));
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.wrong_results, 1);
  v = graded_verdict(graded_row(
      R"j("error_occurred": true, "error_message": "the lab's process died", "failure": 3)j"));
  EXPECT_FALSE(v.passed);
  EXPECT_TRUE(contains(v.reason, "the row stopped")) << v.reason;
}

TEST(BenchVerdict, TheLabsWordsNeverReachTheReason) {
  // What a lab throws in the benchmark may be a log of the hidden tests: the reason is the
  // course's words for the failure code, and the message stays in the benchmark's log.
  const GradedVerdict v = graded_verdict(graded_row(
      R"j("error_occurred": true, "failure": 3,
         "error_message": "the lab threw: HIDDEN-LOG n=2147483651 n=33554431")j"));
  EXPECT_FALSE(v.passed);
  EXPECT_FALSE(contains(v.reason, "HIDDEN-LOG")) << v.reason;
  EXPECT_FALSE(contains(v.reason, "2147483651")) << v.reason;
}

TEST(BenchVerdict, AForgedMessageChangesNoVerdict) {
  // The lab's own exception text reaches the message of a row that threw: whatever it says,
  // the fields decide.
  GradedVerdict v = graded_verdict(graded_row(
      R"j("error_occurred": true, "error_message": "WRONG in 7 timed runs", "failure": 3)j"));
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.wrong_results, 0);
  v = graded_verdict(graded_row(
      R"j("error_occurred": true, "failure": 3,
         "error_message": "clocks disagree: the lab's process reports 1 us per call")j"));
  EXPECT_FALSE(v.clocks_disagree);
  // A message on a row whose fields say it passed is no failure either.
  v = graded_verdict(graded_row(
      R"j("error_message": "WRONG in 9 timed runs", "median_gbps": 3000, "failure": 0,
         "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": 1)j"));
  EXPECT_TRUE(v.passed) << v.reason;
  EXPECT_EQ(v.wrong_results, 0);
}

TEST(BenchVerdict, AMissingOrIllTypedFieldFailsTheRow) {
  const std::string good =
      R"j("failure": 0, "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": 1)j";
  ASSERT_TRUE(graded_verdict(graded_row(good)).passed);
  // {fields, what the reason names}
  const std::pair<const char*, const char*> cases[] = {
      // the format before verdict fields (and what forged_bench_json writes)
      {R"j("median_gbps": 3600.0, "wrong_results": 0, "warmup_wrong": 0)j", "'failure'"},
      {R"j("failure": "0", "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": 1)j",
       "'failure'"},
      {R"j("failure": 0.5, "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": 1)j",
       "'failure'"},
      {R"j("failure": 9, "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": 1)j", "'failure'"},
      {R"j("failure": -1, "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": 1)j", "'failure'"},
      {R"j("failure": null, "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": 1)j",
       "'failure'"},
      {R"j("failure": 0, "warmup_wrong": 0, "clocks_agree": 1)j", "'wrong_results'"},
      {R"j("failure": 0, "wrong_results": -2, "warmup_wrong": 0, "clocks_agree": 1)j",
       "'wrong_results'"},
      {R"j("failure": 0, "wrong_results": 1e300, "warmup_wrong": 0, "clocks_agree": 1)j",
       "'wrong_results'"},
      {R"j("failure": 0, "wrong_results": 0, "clocks_agree": 1)j", "'warmup_wrong'"},
      {R"j("failure": 0, "wrong_results": 0, "warmup_wrong": 0)j", "'clocks_agree'"},
      {R"j("failure": 0, "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": 2)j",
       "'clocks_agree'"},
      {R"j("failure": 0, "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": true)j",
       "'clocks_agree'"},
      {R"j("failure": 0, "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": [1])j",
       "'clocks_agree'"},
      // fields at odds with each other
      {R"j("failure": 0, "wrong_results": 3, "warmup_wrong": 0, "clocks_agree": 1)j",
       "contradicts"},
      {R"j("failure": 0, "wrong_results": 0, "warmup_wrong": 0, "clocks_agree": 0)j",
       "contradicts"},
      {R"j("error_occurred": true, "failure": 0, "wrong_results": 0, "warmup_wrong": 0,
          "clocks_agree": 1)j",
       "'failure'"},
  };
  for (const auto& [fields, named] : cases) {
    const GradedVerdict v = graded_verdict(graded_row(fields));
    EXPECT_FALSE(v.passed) << fields;
    EXPECT_TRUE(contains(v.reason, named)) << fields << " -> " << v.reason;
  }
  EXPECT_EQ(graded_verdict(graded_row(R"j("failure": 0, "wrong_results": 3, "warmup_wrong": 0,
                                          "clocks_agree": 1)j"))
                .wrong_results,
            3);
}

TEST(BenchJson, RealH200Run) {
  const fs::path file = fs::path(REDUCE_GRADE_TEST_ROOT) / "docs" / "results" / "ladder_h200.json";
  if (!fs::exists(file)) GTEST_SKIP() << "no recorded run in docs/results";
  const BenchResults r = parse_bench_json(read_file(file));
  ASSERT_TRUE(r.parsed);
  EXPECT_GT(r.ceiling_gbps, 1000);
  const BenchRow* nine = r.find("09_warp_shuffle", std::size_t{1} << 28);
  if (nine == nullptr) GTEST_SKIP() << "the recorded run has no 2^28 row of lab 09";
  EXPECT_GT(nine->median_gbps / r.ceiling_gbps, 0.5);
  EXPECT_EQ(nine->wrong_results, 0);
}

}  // namespace
}  // namespace reduce::grade
