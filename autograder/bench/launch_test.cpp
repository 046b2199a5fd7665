// Where the benchmark learns what to time (launch.hpp): the grader's launch spec alone, whatever
// the environment holds beside it; a person's command line and variables without one; and the
// refusals of both.
#include "launch.hpp"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce::bench {
namespace {

using launch::Child;
using launch::LaunchSpec;
using launch::LaunchSpecError;

/// The variables a run reads or once read, cleared before each test and after it.
class BenchLaunch : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override {
    clear();
    if (!spec_path_.empty()) std::remove(spec_path_.c_str());
  }

  static void clear() {
    for (const char* name :
         {"REDUCE_LAUNCH_SPEC", "REDUCE_SEED", "REDUCE_BENCH_SIZES", "REDUCE_RUNNER_LABS",
          "REDUCE_REFERENCE_LABS", "REDUCE_RUNNER_PREFIX", "REDUCE_CALL_TIMEOUT_S"})
      unsetenv(name);
  }

  /// Writes \p spec through the spec's writer and names it in REDUCE_LAUNCH_SPEC.
  void use_spec(const LaunchSpec& spec) {
    spec_path_ = ::testing::TempDir() + "bench_launch_" + std::to_string(getpid()) + ".json";
    launch::write_launch_spec(spec_path_, spec);
    setenv("REDUCE_LAUNCH_SPEC", spec_path_.c_str(), 1);
  }

  /// The grader's spec of one graded lab and its reference.
  static LaunchSpec graders_spec() {
    LaunchSpec spec;
    spec.child = Child::kBench;
    spec.seed = 1234567890123u;
    spec.graded = {{"15_capstone", "sum", "/build/submission/lib/lib15_capstone_sum.so"}};
    spec.references = {{"reference-15_capstone", "sum", "/course/references/lib/libcub_sum.so"}};
    spec.sizes = {268431000, 3457};
    spec.runner.prefix = {"/usr/bin/bwrap", "--ro-bind", "/", "/", "--"};
    spec.runner.call_timeout_s = 60;
    return spec;
  }

  std::string spec_path_;
};

TEST_F(BenchLaunch, TheGradersSpecIsAllItReads) {
  use_spec(graders_spec());
  // What the grader once set, or a person's shell still holds: none of it counts beside a spec.
  setenv("REDUCE_SEED", "5", 1);
  setenv("REDUCE_BENCH_SIZES", "2^10", 1);
  setenv("REDUCE_RUNNER_LABS", "04_sequential=sum:/tmp/forged.so", 1);
  setenv("REDUCE_REFERENCE_LABS", "reference-04_sequential=sum:/tmp/forged.so", 1);
  setenv("REDUCE_RUNNER_PREFIX", "", 1);
  const LaunchSpec got = bench_launch({});
  const LaunchSpec want = graders_spec();
  ASSERT_TRUE(got.seed.has_value());
  EXPECT_EQ(*got.seed, *want.seed);
  EXPECT_EQ(got.sizes, want.sizes);
  ASSERT_EQ(got.graded.size(), 1u);
  EXPECT_EQ(got.graded[0].name, "15_capstone");
  EXPECT_EQ(got.graded[0].library, want.graded[0].library);
  ASSERT_EQ(got.references.size(), 1u);
  EXPECT_EQ(got.references[0].name, "reference-15_capstone");
  EXPECT_EQ(got.runner.prefix, want.runner.prefix);
  EXPECT_EQ(got.runner.call_timeout_s, 60);
}

TEST_F(BenchLaunch, ASpecBesideHandFlagsIsRefused) {
  use_spec(graders_spec());
  HandFlags flags;
  flags.graded = {{"04_sequential", "sum", "/tmp/lib.so"}};
  EXPECT_THROW(bench_launch(flags), std::invalid_argument);
}

TEST_F(BenchLaunch, ACheckersSpecOrAMissingOneStopsTheRun) {
  LaunchSpec checker = graders_spec();
  checker.child = Child::kChecker;
  use_spec(checker);
  EXPECT_THROW(bench_launch({}), LaunchSpecError);
  setenv("REDUCE_LAUNCH_SPEC", "/nonexistent/bench.launch.json", 1);
  EXPECT_THROW(bench_launch({}), LaunchSpecError) << "never a hand run in place of a lost spec";
}

TEST_F(BenchLaunch, AHandRunTakesItsFlagsOutOfTheCommandLine) {
  std::vector<std::string> words = {"reduce_bench",
                                    "--graded=15_capstone=sum:/b/lib15.so",
                                    "--benchmark_filter=^sum/",
                                    "--reference=reference-15_capstone=sum:/b/libcub_sum.so",
                                    "--runner-prefix=/g/reduce-grade",
                                    "--runner-prefix=confine",
                                    "--runner-prefix=--",
                                    "--call-timeout-s=60",
                                    "--benchmark_out=x.json"};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(words.size());
  const HandFlags flags = take_hand_flags(argc, argv.data());
  ASSERT_EQ(argc, 3);
  EXPECT_EQ(std::string(argv[1]), "--benchmark_filter=^sum/");
  EXPECT_EQ(std::string(argv[2]), "--benchmark_out=x.json");
  EXPECT_EQ(argv[3], nullptr);
  setenv("REDUCE_SEED", "0x10", 1);
  setenv("REDUCE_BENCH_SIZES", "3457,2^12", 1);
  const LaunchSpec spec = bench_launch(flags);
  ASSERT_EQ(spec.graded.size(), 1u);
  EXPECT_EQ(spec.graded[0].name, "15_capstone");
  EXPECT_EQ(spec.graded[0].op, "sum");
  EXPECT_EQ(spec.graded[0].library, "/b/lib15.so");
  ASSERT_EQ(spec.references.size(), 1u);
  EXPECT_EQ(spec.references[0].library, "/b/libcub_sum.so");
  EXPECT_EQ(spec.runner.prefix, (std::vector<std::string>{"/g/reduce-grade", "confine", "--"}));
  EXPECT_EQ(spec.runner.call_timeout_s, 60);
  ASSERT_TRUE(spec.seed.has_value());
  EXPECT_EQ(*spec.seed, 16u);
  EXPECT_EQ(spec.sizes, (std::vector<std::size_t>{3457, 4096}));
}

TEST_F(BenchLaunch, AHandRunReadsNoGradersVariable) {
  setenv("REDUCE_RUNNER_LABS", "04_sequential=sum:/tmp/lib.so", 1);
  setenv("REDUCE_REFERENCE_LABS", "reference-04_sequential=sum:/tmp/lib.so", 1);
  setenv("REDUCE_RUNNER_PREFIX", "sandbox", 1);
  setenv("REDUCE_CALL_TIMEOUT_S", "5", 1);
  const LaunchSpec spec = bench_launch({});
  EXPECT_TRUE(spec.graded.empty());
  EXPECT_TRUE(spec.references.empty());
  EXPECT_TRUE(spec.runner.prefix.empty());
  EXPECT_EQ(spec.runner.call_timeout_s, 0);
  EXPECT_FALSE(spec.seed.has_value()) << "no REDUCE_SEED: a fresh key";
  EXPECT_TRUE(spec.sizes.empty()) << "no REDUCE_BENCH_SIZES: the default ladder";
}

TEST_F(BenchLaunch, FlagsAndVariablesThatDoNotReadAreRefused) {
  for (const char* bad :
       {"--graded", "--graded=", "--graded=lab", "--graded=lab=sum", "--graded==sum:/lib.so",
        "--graded=lab=:/lib.so", "--graded=lab=sum:", "--reference=lab", "--runner-prefix",
        "--runner-prefix=", "--call-timeout-s=soon", "--call-timeout-s=0", "--call-timeout-s=-1",
        "--call-timeout-s=5s"}) {
    std::string word = bad;
    char name[] = "reduce_bench";
    char* argv[] = {name, word.data(), nullptr};
    int argc = 2;
    EXPECT_THROW(take_hand_flags(argc, argv), std::invalid_argument) << bad;
  }
  for (const char* seed : {"soon", "12x", "-1"}) {
    setenv("REDUCE_SEED", seed, 1);
    EXPECT_THROW(bench_launch({}), std::invalid_argument) << seed;
  }
}

}  // namespace
}  // namespace reduce::bench
