// The benchmark step against a stand-in benchmark that writes recorded rows: which lab a run's
// evidence belongs to, which lab may run again, and that the run's key decides its inputs.
#include <reduce/keyed_hash.hpp>
#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/grader.hpp>
#include <reduce_vocabulary/launch_spec.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>

namespace reduce::grade {
namespace {

/// A stand-in benchmark's words for the sizes of its launch spec: `sizes` prints them, one line,
/// separated by spaces (the spec's writer puts each on a line of its own).
constexpr const char* kSpecSizes =
    "sizes() { tr -d ' \\n' < \"$REDUCE_LAUNCH_SPEC\" |"
    " sed 's/.*\"sizes\":\\[\\([0-9,]*\\)\\].*/\\1/' | tr , ' '; }\n";

/// The benchmark's launch spec of the run whose logs are \p log_dir.
launch::LaunchSpec spec_of(const fs::path& log_dir) {
  return launch::read_launch_spec((log_dir / "bench.launch.json").string(), launch::Child::kBench);
}

/// A benchmark that writes one row, lab "a"'s, failed with wrong results and a message of the
/// lab's own words; lab "b" gets no row (as if the process ended in "a"'s code first). It keeps
/// the variables REDUCE_* of its environment in env.txt beside itself.
fs::path fake_benchmark(const fs::path& dir) {
  const fs::path script = dir / "reduce_bench";
  write_file(
      script,
      std::string("#!/bin/sh\n") + kSpecSizes +
          "for a in \"$@\"; do case \"$a\" in --benchmark_out=*) out=${a#--benchmark_out=};;"
          " esac; done\n"
          "n=$(sizes)\n"
          "env | grep '^REDUCE_' | sort > \"$(dirname \"$0\")/env.txt\"\n"
          "cat > \"$out\" <<EOF\n"
          "{\"context\": {\"ceiling_gbps\": 1000}, \"benchmarks\": [\n"
          " {\"name\": \"sum/a/$n\", \"run_type\": \"iteration\", \"error_occurred\": true,\n"
          "  \"error_message\": \"the lab threw: HIDDEN-LOG n=2147483651\", \"failure\": 1,\n"
          "  \"wrong_results\": 3, \"warmup_wrong\": 0, \"clocks_agree\": 1}]}\n"
          "EOF\n");
  ::chmod(script.c_str(), 0755);
  return script;
}

/// Two labs graded on the sum by the stand-in benchmark \p bench (written into \p dir), at 2^20.
struct TwoLabs {
  BuildManifest course, labs;
  std::vector<OpPlan> plans = {{"sum", "sum", "float", true, false, "sum"}};
  Rubric rubric;

  TwoLabs(const fs::path& dir, fs::path (*bench)(const fs::path&), const std::string& first,
          const std::string& second) {
    course.bench = bench(dir);
    for (const std::string& lab : {first, second})
      labs.libraries[{lab, "sum"}] = {"/lib" + lab + ".so", lab};
    rubric.performance.size = "1048576";
  }
};

TEST(BenchmarkStep, AFailedRowIsTheLabsOwnAndAMissingRowIsNobodys) {
  const fs::path dir = make_temp_dir("reduce-grade-bench-");
  TwoLabs two(dir, fake_benchmark, "a", "b");
  const BuildManifest& course = two.course;
  const BuildManifest& labs = two.labs;
  const std::vector<OpPlan>& plans = two.plans;
  const Rubric& rubric = two.rubric;
  const std::uint64_t secret = 20261201;
  Isolation sandbox;
  sandbox.runner_prefix = {"/usr/bin/bwrap", "--ro-bind", "/", "/", "--"};
  const std::vector<std::string> gone = {"REDUCE_RUNNER_LABS",   "REDUCE_REFERENCE_LABS",
                                         "REDUCE_BENCH_SIZES",   "REDUCE_SEED",
                                         "REDUCE_RUNNER_PREFIX", "REDUCE_CALL_TIMEOUT_S"};
  for (const std::string& name : gone) ::unsetenv(name.c_str());
  auto perf = run_benchmarks(course, labs, {{"a", plans}, {"b", plans}}, rubric,
                             benchmark_key(secret, 0), dir / "logs", sandbox);
  const PerfFacts& a = perf["a"];
  EXPECT_FALSE(a.ran);
  EXPECT_EQ(a.wrong_results, 3);
  EXPECT_FALSE(a.unattributed) << "its row ran and failed: final";
  EXPECT_FALSE(contains(a.problem, "HIDDEN-LOG")) << a.problem;
  EXPECT_TRUE(contains(a.lab_text, "HIDDEN-LOG")) << "kept for the instructor";
  EXPECT_TRUE(perf["b"].unattributed) << "never reached: it may run again";
  // Everything it was told is in its launch spec, beside its logs, the grader's alone; its
  // environment names the file and holds nothing else of the grading.
  const fs::path spec_path = dir / "logs" / "bench.launch.json";
  const std::string env = read_file(dir / "env.txt");
  EXPECT_TRUE(contains(env, "REDUCE_LAUNCH_SPEC=" + spec_path.string() + "\n")) << env;
  for (const std::string& name : gone) EXPECT_FALSE(contains(env, name + "=")) << env;
  EXPECT_EQ(fs::status(spec_path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  const launch::LaunchSpec first = spec_of(dir / "logs");
  ASSERT_EQ(first.graded.size(), 2u);
  EXPECT_EQ(first.graded[0].name, "a");
  EXPECT_EQ(first.graded[0].op, "sum");
  EXPECT_EQ(first.graded[0].library, "/liba.so");
  EXPECT_EQ(first.graded[1].name, "b");
  EXPECT_TRUE(first.references.empty());
  EXPECT_EQ(first.runner.prefix, sandbox.runner_prefix) << "the lab's runner in the sandbox";
  EXPECT_EQ(first.runner.call_timeout_s, 60);
  ASSERT_EQ(first.sizes.size(), 1u);
  // A rerun's key gives other inputs and another timed size.
  run_benchmark(course, labs, "b", plans, rubric, benchmark_key(secret, 1), dir / "logs-b");
  const launch::LaunchSpec second = spec_of(dir / "logs-b");
  ASSERT_TRUE(first.seed && second.seed);
  EXPECT_EQ(*first.seed, benchmark_key(secret, 0));
  EXPECT_NE(*first.seed, *second.seed);
  ASSERT_EQ(second.sizes.size(), 1u);
  EXPECT_NE(first.sizes[0], second.sizes[0]) << "the timed size comes from the run's key";
  EXPECT_NE(*first.seed, secret) << "the benchmark never gets the grading secret";
  remove_all_quietly(dir);
}

/// A benchmark whose rows, at the first of its sizes, are lab "r"'s at 300 GB/s beside its
/// measure at 400 GB/s (where its launch spec names it: "reference-r") and lab "p"'s at 500
/// GB/s, with a probe of 1000 GB/s; at a second size, "r" at 100 beside its measure at 200. It
/// keeps its filter in filter.txt beside itself.
fs::path reference_benchmark(const fs::path& dir) {
  const fs::path script = dir / "reduce_bench";
  write_file(script, std::string("#!/bin/sh\n") + kSpecSizes + R"(
for a in "$@"; do case "$a" in --benchmark_out=*) out=${a#--benchmark_out=};;
  --benchmark_filter=*) echo "${a#--benchmark_filter=}" > "$(dirname "$0")/filter.txt";; esac; done
refs=$(grep -c '"reference-r"' "$REDUCE_LAUNCH_SPEC")
row() {
  echo "{\"name\": \"sum/$1/$n\", \"median_gbps\": $2, \"failure\": 0, \"wrong_results\": 0,"
  echo " \"warmup_wrong\": 0, \"clocks_agree\": 1},"
}
{
  echo '{"context": {"ceiling_gbps": 1000}, "benchmarks": ['
  first=1
  for n in $(sizes); do
    if [ $first = 1 ]; then
      [ "$refs" != 0 ] && row reference-r 400
      row r 300
      row p 500
    else
      [ "$refs" != 0 ] && row reference-r 200
      row r 100
    fi
    first=0
  done
  echo '{"name": "end/of/0"}]}'
} > "$out"
)");
  ::chmod(script.c_str(), 0755);
  return script;
}

/// Lab "r" of \p rubric judged against \p measure, lab "p" against the probe.
void judge_r_against(Rubric& rubric, const std::string& measure) {
  rubric.labs.resize(2);
  rubric.labs[0].lab = "r";
  rubric.labs[0].measure = measure;
  rubric.labs[1].lab = "p";
}

TEST(BenchmarkStep, ALabOfMeasureReferenceIsAFractionOfItsReferenceTimedInTheSameRun) {
  const fs::path dir = make_temp_dir("reduce-grade-bench-");
  TwoLabs two(dir, reference_benchmark, "r", "p");
  BuildManifest& course = two.course;
  const BuildManifest& labs = two.labs;
  const std::vector<OpPlan>& plans = two.plans;
  Rubric& rubric = two.rubric;
  judge_r_against(rubric, "reference");
  // Without the reference in the course build, "r" is judged against the probe, and says why.
  auto perf = run_benchmarks(course, labs, {{"r", plans}, {"p", plans}}, rubric, 1, dir / "a");
  EXPECT_TRUE(spec_of(dir / "a").references.empty());
  EXPECT_EQ(perf["r"].measure, "probe");
  EXPECT_TRUE(contains(perf["r"].measure_note, "no reference")) << perf["r"].measure_note;
  EXPECT_NEAR(perf["r"].fraction, 0.3, 1e-9);
  // With it, only "r" has a reference row, and its fraction is of the reference.
  course.libraries[{"r", "sum"}] = {"/solutions/libr.so", "r"};
  perf = run_benchmarks(course, labs, {{"r", plans}, {"p", plans}}, rubric, 1, dir / "b");
  const launch::LaunchSpec b = spec_of(dir / "b");
  ASSERT_EQ(b.references.size(), 1u);
  EXPECT_EQ(b.references[0].name, "reference-r");
  EXPECT_EQ(b.references[0].op, "sum");
  EXPECT_EQ(b.references[0].library, "/solutions/libr.so");
  EXPECT_TRUE(perf["r"].ran) << perf["r"].problem;
  EXPECT_EQ(perf["r"].measure, "reference");
  EXPECT_NEAR(perf["r"].fraction, 0.75, 1e-9);
  EXPECT_NEAR(perf["r"].reference_gbps, 400, 1e-9);
  EXPECT_EQ(perf["p"].measure, "probe");
  EXPECT_NEAR(perf["p"].fraction, 0.5, 1e-9);
  remove_all_quietly(dir);
}

// The capstone: against CUB as a lab library, at the rubric's size and a launch-bound one; the
// slower of the two counts, and the other labs are timed at the rubric's size only.
TEST(BenchmarkStep, ALabOfMeasureCubIsTimedAtItsLaunchBoundSizeToo) {
  const fs::path dir = make_temp_dir("reduce-grade-bench-");
  TwoLabs two(dir, reference_benchmark, "r", "p");
  BuildManifest& course = two.course;
  course.cub_references["sum"] = "/references/libcub_sum.so";
  const BuildManifest& labs = two.labs;
  const std::vector<OpPlan>& plans = two.plans;
  Rubric& rubric = two.rubric;
  judge_r_against(rubric, "cub");
  rubric.labs[0].launch_bound_size = "2^12";
  auto perf = run_benchmarks(course, labs, {{"r", plans}, {"p", plans}}, rubric, 7, dir / "a");
  const launch::LaunchSpec a = spec_of(dir / "a");
  ASSERT_EQ(a.references.size(), 1u);
  EXPECT_EQ(a.references[0].library, "/references/libcub_sum.so");
  EXPECT_EQ(a.sizes.size(), 2u) << "the rubric's size and the launch-bound one";
  const PerfFacts& r = perf["r"];
  ASSERT_TRUE(r.ran) << r.problem;
  EXPECT_EQ(r.measure, "cub");
  EXPECT_NEAR(r.fraction, 0.5, 1e-9) << "the launch-bound size is the slower";
  EXPECT_LT(r.n, 4096u);
  EXPECT_GE(r.n, 4096u - 1024) << "at most a quarter below the launch-bound size";
  EXPECT_TRUE(contains(r.detail, "at n = ")) << r.detail;
  EXPECT_NEAR(perf["p"].fraction, 0.5, 1e-9);
  const std::string filter = read_file(dir / "filter.txt");
  EXPECT_TRUE(contains(filter, "/(|r|reference-r)/" + std::to_string(r.n)) ||
              contains(filter, "/(r|reference-r)/" + std::to_string(r.n)))
      << "only r's rows at the launch-bound size: " << filter;
  remove_all_quietly(dir);
}

// Lab 01's case: a lab of measure "reference" with a size of its own is timed there, beside its
// reference, and only there; the other labs at the rubric's size. Without the reference, the lab
// is timed at the rubric's size, beside the probe.
TEST(BenchmarkStep, ALabWithASizeOfItsOwnIsTimedThereBesideItsReference) {
  const fs::path dir = make_temp_dir("reduce-grade-bench-");
  TwoLabs two(dir, reference_benchmark, "r", "p");
  BuildManifest& course = two.course;
  Rubric& rubric = two.rubric;
  judge_r_against(rubric, "reference");
  rubric.labs[0].size = "2^16";
  auto perf =
      run_benchmarks(course, two.labs, {{"r", two.plans}, {"p", two.plans}}, rubric, 3, dir / "a");
  ASSERT_EQ(spec_of(dir / "a").sizes.size(), 1u) << "no reference: the rubric's size alone";
  EXPECT_EQ(perf["r"].measure, "probe");
  EXPECT_GT(perf["r"].n, 65536u);
  EXPECT_NEAR(perf["r"].fraction, 0.3, 1e-9);
  course.libraries[{"r", "sum"}] = {"/solutions/libr.so", "r"};
  perf =
      run_benchmarks(course, two.labs, {{"r", two.plans}, {"p", two.plans}}, rubric, 3, dir / "b");
  const launch::LaunchSpec b = spec_of(dir / "b");
  ASSERT_EQ(b.sizes.size(), 2u) << "the rubric's size and r's";
  const PerfFacts& r = perf["r"];
  ASSERT_TRUE(r.ran) << r.problem;
  EXPECT_EQ(r.measure, "reference");
  EXPECT_EQ(r.n, b.sizes[1]);
  EXPECT_LT(r.n, 65536u);
  EXPECT_GE(r.n, 65536u - 4093) << "a few elements below its size, drawn from the run's key";
  EXPECT_NEAR(r.fraction, 0.5, 1e-9) << "100 GB/s beside its reference's 200 at its own size";
  EXPECT_NEAR(perf["p"].fraction, 0.5, 1e-9);
  const std::string filter = read_file(dir / "filter.txt");
  EXPECT_TRUE(contains(filter, "/(cub|p)/" + std::to_string(b.sizes[0]) + "(/|$)"))
      << "r's rows are not timed at the rubric's size: " << filter;
  EXPECT_TRUE(contains(filter, "/(r|reference-r)/" + std::to_string(r.n) + "(/|$)")) << filter;
  remove_all_quietly(dir);
}

/// A benchmark whose rows at every size are lab "r"'s, at \p lab_us a call on the benchmark's
/// clock and \p lab_event_us on its process's events, beside its measure "reference-r" at 17
/// and 6 us (11 us of each call its request's own cost).
fs::path timed_benchmark(const fs::path& dir, double lab_us, double lab_event_us) {
  const fs::path script = dir / "reduce_bench";
  write_file(script, std::string("#!/bin/sh\n") + kSpecSizes +
                         fmt::format(R"(
for a in "$@"; do case "$a" in --benchmark_out=*) out=${{a#--benchmark_out=}};; esac; done
row() {{
  echo "{{\"name\": \"sum/$1/$n\", \"median_us\": $2, \"runner_event_us\": $3,"
  echo " \"median_gbps\": $4, \"failure\": 0, \"wrong_results\": 0, \"warmup_wrong\": 0,"
  echo " \"clocks_agree\": 1}},"
}}
{{
  echo '{{"context": {{"ceiling_gbps": 1000}}, "benchmarks": ['
  for n in $(sizes); do
    row reference-r 17 6 100
    row r {} {} 90
  done
  echo '{{"name": "end/of/0"}}]}}'
}} > "$out"
)",
                                     lab_us, lab_event_us));
  ::chmod(script.c_str(), 0755);
  return script;
}

// A lab is charged its own clock less the request's own cost that the course's reference
// measured in the same run, and never less than its own events say: its events, which its
// process could forge, can only slow it down.
TEST(BenchmarkStep, TheRequestsOwnCostMeasuredOnTheReferenceIsLeftOutOfTheLabsTime) {
  const struct {
    double lab_us, lab_event_us, fraction;
    const char* why;
  } cases[] = {
      {19, 8, 0.75, "19 - 11 = 8 us a call against the reference's 6"},
      {19, 1, 0.75, "events forged low: still its clock less the request's cost"},
      {19, 12, 0.5, "events longer than its clock less the cost: the events count"},
      {16, 4, 1.2, "faster than the reference: 5 us a call"},
  };
  for (const auto& c : cases) {
    const fs::path dir = make_temp_dir("reduce-grade-bench-");
    BuildManifest course, labs;
    course.bench = timed_benchmark(dir, c.lab_us, c.lab_event_us);
    course.libraries[{"r", "sum"}] = {"/solutions/libr.so", "r"};
    labs.libraries[{"r", "sum"}] = {"/libr.so", "r"};
    Rubric rubric;
    rubric.performance.size = "1048576";
    rubric.labs.resize(1);
    rubric.labs[0].lab = "r";
    rubric.labs[0].measure = "reference";
    const std::vector<OpPlan> plans = {{"sum", "sum", "float", true, false, "sum"}};
    const PerfFacts p = run_benchmarks(course, labs, {{"r", plans}}, rubric, 1, dir / "a")["r"];
    ASSERT_TRUE(p.ran) << p.problem;
    EXPECT_NEAR(p.fraction, c.fraction, 1e-9) << c.why;
    EXPECT_NEAR(p.request_us, c.lab_us - 6 / c.fraction, 1e-9) << c.why;
    EXPECT_EQ(p.median_us, c.lab_us) << "the report keeps the lab's clock whole";
    remove_all_quietly(dir);
  }
}

/// A benchmark that writes the recorded run \p recorded as its output, whatever it is asked.
fs::path replaying_benchmark(const fs::path& dir, const fs::path& recorded) {
  const fs::path script = dir / "reduce_bench";
  write_file(script,
             "#!/bin/sh\n"
             "for a in \"$@\"; do case \"$a\" in --benchmark_out=*) out=${a#--benchmark_out=};;"
             " esac; done\n"
             "cp '" +
                 recorded.string() + "' \"$out\"\n");
  ::chmod(script.c_str(), 0755);
  return script;
}

// The benchmark step's verdict on a real run: lab 15's rows of a grading on an H200, replayed
// with that grading's key and the course's own rubric and plans, give the size and noise its
// report gave (docs/results/capstone/graded_bench_h200.json says where they came from), and the
// fraction with the request's own cost left out: CUB's clock read 18.189 us a call at n = 3457
// and its events 6.382, so 11.807 us of each call were the request's; the capstone's clock read
// 19.526 (its events 7.086), so its call is 19.526 - 11.807 = 7.719 us against CUB's 6.382:
// 0.8268 of CUB's speed, where both clocks whole gave 0.9315.
TEST(BenchmarkStep, ARecordedH200RunGivesTheCapstoneItsFractionWithoutTheRequestsOwnCost) {
  const fs::path root = REDUCE_GRADE_TEST_ROOT;
  const fs::path recorded = root / "docs" / "results" / "capstone" / "graded_bench_h200.json";
  if (!fs::exists(recorded)) GTEST_SKIP() << "no recorded run in docs/results";
  const fs::path dir = make_temp_dir("reduce-grade-bench-");
  const Course course = load_course(root);
  const Rubric rubric = load_rubric(root / "autograder" / "rubric.toml");
  BuildManifest build, labs;
  build.bench = replaying_benchmark(dir, recorded);
  build.cub_references["sum"] = "/references/libcub_sum.so";
  build.cub_references["sum_deterministic"] = "/references/libcub_sum_deterministic.so";
  labs.libraries[{"15_capstone", "sum"}] = {"/lib15_capstone_sum.so", "15_capstone"};
  labs.libraries[{"15_capstone", "sum_deterministic"}] = {"/lib15_capstone_sum_deterministic.so",
                                                          "15_capstone_sum_deterministic"};
  auto perf = run_benchmarks(build, labs, {{"15_capstone", course.plans("15_capstone")}}, rubric,
                             benchmark_key(4955368835581311u, 0), dir / "a");
  const PerfFacts& p = perf["15_capstone"];
  ASSERT_TRUE(p.ran) << p.problem;
  EXPECT_EQ(p.measure, "cub");
  EXPECT_EQ(p.n, 3457u) << "the launch-bound row is the slowest";
  EXPECT_NEAR(p.fraction, 0.8267910388865877, 1e-12);
  EXPECT_NEAR(p.noise, 0.06384060146788806, 1e-12);
  EXPECT_NEAR(p.reference_noise, 0.03097495200708417, 1e-12);
  EXPECT_EQ(p.wrong_results, 0);
  remove_all_quietly(dir);
}

}  // namespace
}  // namespace reduce::grade
