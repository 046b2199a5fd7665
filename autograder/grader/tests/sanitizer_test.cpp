// compute-sanitizer summaries, and a sanitizer run against a stand-in script.
#include <reduce_grade/sanitizer.hpp>
#include <reduce_grade/util.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

namespace reduce::grade {
namespace {

TEST(SanitizerSummary, MemcheckErrors) {
  const SanitizerSummary clean =
      parse_sanitizer_summary("memcheck", "========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(clean.found);
  EXPECT_EQ(clean.problems(), 0);
  const SanitizerSummary one =
      parse_sanitizer_summary("memcheck", "========= ERROR SUMMARY: 1 error\n");
  EXPECT_EQ(one.problems(), 1);
  EXPECT_EQ(parse_sanitizer_summary("synccheck", "========= ERROR SUMMARY: 12 errors").problems(),
            12);
}

TEST(SanitizerSummary, RacecheckCountsHazardsNotErrors) {
  // Warp-level hazards are reported as warnings only: the count must come from the hazards.
  const SanitizerSummary s = parse_sanitizer_summary(
      "racecheck",
      "========= RACECHECK SUMMARY: 5 hazards displayed (0 errors, 175 warnings)\n"
      "========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(s.found);
  EXPECT_EQ(s.hazards, 5);
  EXPECT_EQ(s.errors, 0);
  EXPECT_EQ(s.warnings, 175);
  EXPECT_EQ(s.problems(), 5);
  const SanitizerSummary single = parse_sanitizer_summary(
      "racecheck", "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n");
  EXPECT_EQ(single.problems(), 1);
  const SanitizerSummary none =
      parse_sanitizer_summary("racecheck", "========= ERROR SUMMARY: 0 errors\n");
  EXPECT_EQ(none.problems(), 0);
  EXPECT_FALSE(parse_sanitizer_summary("racecheck", "segfault").found);
}

/// A stand-in for compute-sanitizer: runs the test binary with the gtest flags it was given and
/// prints a racecheck summary with hazards.
fs::path fake_sanitizer(const fs::path& dir) {
  const fs::path script = dir / "compute-sanitizer";
  write_file(script,
             "#!/bin/sh\n"
             "# compute-sanitizer --tool T --print-limit 5 BINARY ARGS...\n"
             "shift 4\n"
             "echo '========= COMPUTE-SANITIZER'\n"
             "\"$@\"\n"
             "echo '========= Warning: Race reported between Read access at 0x1 in sum.cu:42'\n"
             "echo '========= RACECHECK SUMMARY: 5 hazards displayed (0 errors, 5 warnings)'\n");
  ::chmod(script.c_str(), 0755);
  return script;
}

/// A checker that does what a real one does under the sanitizer: it starts its lab runner with
/// REDUCE_RUNNER_PREFIX in front (here: writes the log that compute-sanitizer would write).
fs::path fake_checker(const fs::path& dir) {
  const fs::path script = dir / "fake-checker";
  write_file(script,
             "#!/bin/sh\n"
             "log=$(printf '%s' \"$REDUCE_RUNNER_PREFIX\" | tr '\\037' '\\n' | "
             "sed -n '/^--log-file$/{n;p}' | sed 's/%n/1/')\n"
             "printf '%s\\n' '========= COMPUTE-SANITIZER' "
             "'========= Warning: Race reported between Read access at 0x1 in sum.cu:42' "
             "'========= RACECHECK SUMMARY: 5 hazards displayed (0 errors, 5 warnings)' > \"$log\"\n"
             "exec " REDUCE_GRADE_FAKE_SUITE " \"$@\"\n");
  ::chmod(script.c_str(), 0755);
  return script;
}

SanitizerSpec spec_for(const fs::path& dir, const std::string& filter) {
  SanitizerSpec spec;
  spec.sanitizer = "/bin/true";
  spec.tool = "racecheck";
  spec.checker = fake_checker(dir);
  spec.filter = filter;
  spec.timeout_s = 30;
  spec.output_cap = 1 << 20;
  spec.log_file = dir / "racecheck.log";
  return spec;
}

TEST(SanitizerRun, HazardsMakeItUnclean) {
  const fs::path dir = make_temp_dir("reduce-grade-san-");
  const SanitizerRun run = run_sanitizer(spec_for(dir, "Fake.Passes:Fake.After1"));
  EXPECT_TRUE(run.ran) << run.problem;
  EXPECT_TRUE(run.tests_passed);
  EXPECT_EQ(run.summary.problems(), 5);
  EXPECT_FALSE(run.clean());
  EXPECT_TRUE(contains(run.describe(), "racecheck: 5 hazards (0 errors, 5 warnings)"));
  EXPECT_TRUE(contains(run.excerpt, "Race reported"));
  EXPECT_TRUE(contains(read_file(sanitizer_log_dir(dir / "racecheck.log") / "runner-1.log"),
                       "RACECHECK SUMMARY"));
  remove_all_quietly(dir);
}

TEST(SanitizerRun, FailingTestsUnderTheToolMakeItUnclean) {
  const fs::path dir = make_temp_dir("reduce-grade-san-");
  const SanitizerRun run = run_sanitizer(spec_for(dir, "Fake.Fails"));
  EXPECT_FALSE(run.tests_passed);
  EXPECT_FALSE(run.clean());
  remove_all_quietly(dir);
}

TEST(SanitizerRun, MissingToolIsAProblemNotACrash) {
  SanitizerSpec spec;
  spec.checker = REDUCE_GRADE_FAKE_SUITE;
  spec.tool = "memcheck";
  spec.filter = "*";
  const SanitizerRun run = run_sanitizer(spec);
  EXPECT_FALSE(run.ran);
  EXPECT_TRUE(contains(run.problem, "compute-sanitizer not found"));
}

}  // namespace
}  // namespace reduce::grade
