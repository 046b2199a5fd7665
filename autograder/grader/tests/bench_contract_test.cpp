// The benchmark's verdicts as the grader reads them: rows reported by reduce_bench's own JSON
// reporter (autograder/bench/reporting.cpp), passed and failed, parsed by parse_bench_json() and
// judged by graded_verdict(). No GPU: the rows only report.
#include "reporting.hpp"

#include <reduce_grade/base/bench_results.hpp>
#include <reduce_grade/base/util.hpp>

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace reduce::grade {
namespace {

/// A graded row as reduce_bench reports one: its counters, then passed or failed.
void graded_row(benchmark::State& state, bench::Rows& rows, const std::string& impl, double wrong,
                bool clocks_agree) {
  bench::Row& row = rows.open(bench::RowId::of("sum", impl, 1024));
  for (auto _ : state) state.SetIterationTime(1e-4);
  state.counters["median_us"] = 100;
  state.counters["median_gbps"] = 0.04;
  state.counters[bench::kWrongResults] = wrong;
  state.counters[bench::kWarmupWrong] = wrong > 0 ? 1 : 0;
  state.counters[bench::kClocksAgree] = clocks_agree ? 1 : 0;
  if (wrong > 0)
    bench::fail_row(state, row, bench::RowFailure::kWrongResults,
                    "WRONG in " + std::to_string(static_cast<int>(wrong)) + " timed calls");
  else if (!clocks_agree)
    bench::fail_row(state, row, bench::RowFailure::kClocksDisagree, "clocks disagree: 1 us, 9 us");
  else
    bench::pass_row(state, row);
}

TEST(BenchContract, FailedRowsKeepTheirVerdictInTheJson) {
  const fs::path dir = make_temp_dir("reduce-bench-contract-");
  const std::string out = "--benchmark_out=" + (dir / "bench.json").string();
  std::vector<std::string> args = {"reduce_bench", out, "--benchmark_out_format=json",
                                   "--benchmark_filter=^sum/"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  bench::Rows rows;
  const auto reporter = bench::verdict_file_reporter(argc, argv.data(), rows);
  ASSERT_NE(reporter, nullptr);
  benchmark::Initialize(&argc, argv.data());
  const std::pair<const char*, std::pair<double, bool>> cases[] = {
      {"passes", {0, true}}, {"wrong", {3, true}}, {"slow_clock", {0, false}}};
  for (const auto& [impl, verdict] : cases)
    benchmark::RegisterBenchmark(
        ("sum/" + std::string(impl) + "/1024").c_str(),
        [&rows, impl = std::string(impl), verdict = verdict](benchmark::State& s) {
          graded_row(s, rows, impl, verdict.first, verdict.second);
        })
        ->UseManualTime()
        ->Iterations(1);
  benchmark::RunSpecifiedBenchmarks(nullptr, reporter.get());
  benchmark::ClearRegisteredBenchmarks();

  const BenchResults results = parse_bench_json(read_file(dir / "bench.json"));
  ASSERT_TRUE(results.parsed) << results.problem;
  const BenchRow* passes = results.find("passes", 1024);
  const BenchRow* wrong = results.find("wrong", 1024);
  const BenchRow* slow = results.find("slow_clock", 1024);
  ASSERT_TRUE(passes && wrong && slow);
  EXPECT_TRUE(graded_verdict(*passes).passed) << graded_verdict(*passes).reason;
  // Google Benchmark drops the counters of a failed row: the reporter keeps its verdict's.
  EXPECT_TRUE(wrong->error);
  const GradedVerdict w = graded_verdict(*wrong);
  EXPECT_FALSE(w.passed);
  EXPECT_EQ(w.wrong_results, 3);
  EXPECT_EQ(wrong->verdict.warmup_wrong, 1);
  EXPECT_EQ(wrong->median_gbps, 0);  // only the verdict fields are kept
  const GradedVerdict c = graded_verdict(*slow);
  EXPECT_FALSE(c.passed);
  EXPECT_TRUE(c.clocks_disagree);
  EXPECT_EQ(c.wrong_results, 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace reduce::grade
