// compute-sanitizer summaries, and a sanitizer run against a stand-in script.
#include "fake_checkers.hpp"

#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/sanitizer.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// Shell lines of a stand-in checker that loop over its repetitions (one per tool): each sets $i
/// (1, 2...), $tool and $log, the report of the repetition's first runner; the loop's body and
/// "done" follow.
#define REDUCE_FAKE_EACH_REPETITION                                                   \
  "i=0\n" REDUCE_GRADE_FAKE_SUITE                                                     \
  " --spec=repetitions |\n"                                                           \
  "while IFS= read -r words; do\n"                                                    \
  "  i=$((i + 1))\n"                                                                  \
  "  tool=$(printf '%s\\n' \"$words\" | tr '\\t' '\\n' | sed -n '/^--tool$/{n;p}')\n" \
  "  log=$(printf '%s\\n' \"$words\" | cut -f1 | sed 's/%n/1/')\n"

/// The names of the REDUCE_ variables a checker started now should see, one per line and
/// sorted bytewise: REDUCE_LAUNCH_SPEC, which the grader adds, and whatever this test
/// inherited (CI exports REDUCE_FORMAT_REQUIRED), which the grader passes through untouched.
std::string expected_checker_variables() {
  std::vector<std::string> names{"REDUCE_LAUNCH_SPEC"};
  for (char** entry = ::environ; *entry != nullptr; ++entry) {
    const std::string_view variable(*entry);
    const std::string name(variable.substr(0, variable.find('=')));
    if (name.rfind("REDUCE_", 0) == 0 && name != "REDUCE_LAUNCH_SPEC") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::string lines;
  for (const std::string& name : names) lines += name + "\n";
  return lines;
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

/// A checker that does what a real one does under the sanitizer: for each repetition of its
/// tests it starts a lab runner under that repetition's tool and drains its report pipe into
/// that repetition's log (both from its launch spec's runner). Here it writes, up front, the log
/// that each tool's report would fill: racecheck finds hazards, the other tools nothing; and
/// beside itself the spec's runner prefix (prefix.txt) and the names of the REDUCE_ variables of
/// its environment (env.txt).
fs::path fake_checker(const fs::path& dir) {
  const fs::path script = dir / "fake-checker";
  write_file(
      script,
      "#!/bin/sh\n"
      "d=$(dirname \"$0\")\n" REDUCE_GRADE_FAKE_SUITE
      " --spec=prefix > \"$d/prefix.txt\"\n"
      "env | sed -n 's/^\\(REDUCE_[A-Z_]*\\)=.*/\\1/p' | LC_ALL=C sort > "
      "\"$d/env.txt\"\n" REDUCE_FAKE_EACH_REPETITION
      "  if [ \"$tool\" = racecheck ]; then\n"
      "    printf '%s\\n' '========= COMPUTE-SANITIZER' "
      "'========= Warning: Race reported between Read access at 0x1 in sum.cu:42' "
      "'========= RACECHECK SUMMARY: 5 hazards displayed (0 errors, 5 warnings)' > \"$log\"\n"
      "  else\n"
      "    printf '%s\\n' '========= COMPUTE-SANITIZER' '========= ERROR SUMMARY: 0 errors'"
      " > \"$log\"\n"
      "  fi\n"
      "done\n"
      "exec " REDUCE_GRADE_FAKE_SUITE " \"$@\"\n");
  ::chmod(script.c_str(), 0755);
  return script;
}

SanitizerSpec spec_for(const fs::path& dir, const std::string& filter,
                       std::vector<std::string> tools = {"racecheck"}) {
  SanitizerSpec spec;
  spec.sanitizer = "/bin/true";
  spec.tools = std::move(tools);
  spec.checker = fake_checker(dir);
  spec.filter = filter;
  spec.timeout_s = 30;
  spec.output_cap = 1 << 20;
  spec.log_file = dir / "sanitizer.log";
  return spec;
}

TEST(SanitizerRun, HazardsMakeItUnclean) {
  const fs::path dir = make_temp_dir("reduce-grade-san-");
  const std::vector<SanitizerRun> runs = run_sanitizer(spec_for(dir, "Fake.Passes:Fake.After1"));
  ASSERT_EQ(runs.size(), 1u);
  const SanitizerRun& run = runs[0];
  EXPECT_TRUE(run.ran) << run.problem;
  EXPECT_TRUE(run.tests_passed);
  EXPECT_EQ(run.summary.problems(), 5);
  EXPECT_FALSE(run.clean());
  EXPECT_TRUE(contains(run.describe(), "racecheck: 5 hazards (0 errors, 5 warnings)"));
  EXPECT_TRUE(contains(run.excerpt, "Race reported"));
  EXPECT_TRUE(
      contains(read_file(sanitizer_log_dir(dir / "sanitizer.log", "racecheck") / "runner-1.log"),
               "RACECHECK SUMMARY"));
  remove_all_quietly(dir);
}

TEST(SanitizerRun, EachToolOfOneCheckerGetsItsOwnResult) {
  const fs::path dir = make_temp_dir("reduce-grade-san-");
  SanitizerSpec spec = spec_for(dir, "Fake.Passes:Fake.After1", {"memcheck", "racecheck"});
  // The sandbox and the tools' words reach the checker in its launch spec alone, beside its
  // log, and the grader adds nothing else to its environment.
  spec.launch.runner.prefix = {"/usr/bin/env", "A=b c"};
  spec.launch.seed = 7;
  const std::vector<SanitizerRun> runs = run_sanitizer(spec);
  EXPECT_EQ(read_file(dir / "prefix.txt"), "/usr/bin/env\nA=b c\n");
  EXPECT_EQ(read_file(dir / "env.txt"), expected_checker_variables());
  const launch::LaunchSpec told =
      launch::read_launch_spec((dir / "sanitizer.launch.json").string(), launch::Child::kChecker);
  EXPECT_EQ(told.seed, std::optional<std::uint64_t>(7));
  ASSERT_EQ(told.runner.repetitions.size(), 2u);
  EXPECT_EQ(told.runner.repetitions[1].prefix,
            (std::vector<std::string>{"/bin/true", "--tool", "racecheck", "--print-limit", "5",
                                      "--log-file", "/dev/fd/5"}));
  EXPECT_EQ(told.runner.repetitions[1].report,
            (sanitizer_log_dir(dir / "sanitizer.log", "racecheck") / "runner-%n.log").string());
  EXPECT_EQ(told.runner.exit_grace_s, 60) << "the sanitizer's summary comes as the runner exits";
  EXPECT_EQ(fs::status(dir / "sanitizer.launch.json").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].tool, "memcheck");
  EXPECT_TRUE(runs[0].clean()) << runs[0].problem;
  EXPECT_EQ(runs[1].tool, "racecheck");
  EXPECT_TRUE(runs[1].ran) << runs[1].problem;
  EXPECT_TRUE(runs[1].tests_passed);
  EXPECT_EQ(runs[1].summary.problems(), 5);
  EXPECT_TRUE(runs[0].excerpt.empty()) << "memcheck must not show racecheck's findings";
  remove_all_quietly(dir);
}

TEST(SanitizerRun, FailingTestsUnderTheToolMakeItUnclean) {
  const fs::path dir = make_temp_dir("reduce-grade-san-");
  const std::vector<SanitizerRun> runs =
      run_sanitizer(spec_for(dir, "Fake.Fails", {"memcheck", "synccheck"}));
  ASSERT_EQ(runs.size(), 2u);
  for (const SanitizerRun& run : runs) {
    EXPECT_FALSE(run.tests_passed) << run.tool;
    EXPECT_FALSE(run.clean()) << run.tool;
  }
  remove_all_quietly(dir);
}

TEST(SanitizerRun, ACheckerThatDiesSpoilsOnlyTheToolsItDidNotFinish) {
  const fs::path dir = make_temp_dir("reduce-grade-san-");
  SanitizerSpec spec =
      spec_for(dir, "Fake.Passes:Fake.Misbehaves", {"memcheck", "racecheck", "synccheck"});
  spec.env = {{"FAKE_MODE", "crash_again"}};
  const std::vector<SanitizerRun> runs = run_sanitizer(spec);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_TRUE(runs[0].clean()) << runs[0].problem;
  EXPECT_FALSE(runs[1].ran);
  EXPECT_TRUE(contains(runs[1].problem, "SIGSEGV")) << runs[1].problem;
  EXPECT_FALSE(runs[2].ran);
  EXPECT_TRUE(contains(runs[2].problem, "not reached: the checker stopped during racecheck"))
      << runs[2].problem;
  remove_all_quietly(dir);
}

TEST(SanitizerRun, TheLabsWordsDecideNoTestUnderATool) {
  // The lab's failure quotes GoogleTest's lines of a pass (and the tool reports nothing): the
  // tests under the tool still failed, so the tool's run earns nothing.
  const fs::path dir = make_temp_dir("reduce-grade-san-");
  SanitizerSpec spec = spec_for(dir, "Fake.Passes:Fake.Misbehaves", {"memcheck"});
  spec.env = {{"FAKE_MODE", "forge"}};
  const std::vector<SanitizerRun> runs = run_sanitizer(spec);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].ran) << runs[0].problem;
  EXPECT_FALSE(runs[0].tests_passed);
  EXPECT_FALSE(runs[0].clean());
  remove_all_quietly(dir);
}

/// A checker of several labs (its launch spec's labs and mark) as checker_main runs one: for
/// each repetition (tool) and part (a lab's operation), the mark line and the fake suite run
/// with \p tests (FAKE_MODE is the lab's name); each tool's one runner report is written up
/// front. racecheck's report has hazards (whose, it cannot say).
fs::path fake_group_checker(const fs::path& dir, const std::string& tests = "Fake.Passes") {
  const fs::path script = dir / "fake-group-checker";
  write_file(
      script,
      "#!/bin/sh\n"
      "mark=$(" REDUCE_GRADE_FAKE_SUITE
      " --spec=mark) || exit 2\n"
      "record=''\n"
      "for a in \"$@\"; do case \"$a\" in --record=*) record=$a;; esac; "
      "done\n" REDUCE_FAKE_EACH_REPETITION
      "  if [ \"$tool\" = racecheck ]; then\n"
      "    printf '%s\\n' '========= RACECHECK SUMMARY: 5 hazards displayed (0 errors, 5 warnings)'"
      " > \"$log\"\n"
      "  else\n"
      "    printf '%s\\n' '========= ERROR SUMMARY: 0 errors' > \"$log\"\n"
      "  fi\n"
      "  k=0\n"
      "  " REDUCE_GRADE_FAKE_SUITE
      " --spec=labs | cut -f1,2 | while read -r lab op; do\n"
      "    echo \"[ lab      ] $mark $((i - 1)) $lab $op\"\n"
      "    FAKE_MODE=$lab " REDUCE_GRADE_FAKE_SUITE " --gtest_filter=" +
          tests +
          " --gtest_color=no $record --record-part=$k,$((i - 1))\n"
          "    k=$((k + 1))\n"
          "  done\n"
          "done\n");
  ::chmod(script.c_str(), 0755);
  return script;
}

/// A one-lab checker whose racecheck report has hazards for the lab "b" only.
fs::path fake_alone_checker(const fs::path& dir) {
  const fs::path script = dir / "fake-alone-checker";
  write_file(script,
             "#!/bin/sh\n"
             "log=$(" REDUCE_GRADE_FAKE_SUITE
             " --spec=repetitions | cut -f1 | sed 's/%n/1/')\n"
             "case \"$*\" in *--lab-name=b*) printf '%s\\n' '========= RACECHECK SUMMARY: 5 "
             "hazards displayed (0 errors, 5 warnings)' > \"$log\";;\n"
             "  *) printf '%s\\n' '========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, "
             "0 warnings)' > \"$log\";; esac\n"
             "exec " REDUCE_GRADE_FAKE_SUITE " \"$@\"\n");
  ::chmod(script.c_str(), 0755);
  return script;
}

TEST(SanitizerGroup, CleanToolsServeEveryLabAndAFindingGoesToTheLabThatMakesItAlone) {
  const fs::path dir = make_temp_dir("reduce-grade-san-");
  SanitizerGroupSpec group;
  group.common = spec_for(dir, "", {"memcheck", "racecheck"});  // each part has its filters
  group.common.checker = fake_group_checker(dir);
  group.common.log_file = dir / "sanitizer" / "group_0.log";
  // Two labs of two operations in one checker: each part has its operation's filter and the
  // sanitizer's sizes.
  for (const auto& [name, op] :
       {std::pair<std::string, std::string>{"a", "sum"}, {"b", "maximum"}}) {
    SanitizerSpec alone = spec_for(dir / name, "Fake.Passes", {"memcheck", "racecheck"});
    fs::create_directories(dir / name);
    alone.checker = fake_alone_checker(dir);
    alone.args = {"--lab-name=" + name};
    alone.log_file = dir / name / "sanitizer.log";
    group.labs.push_back(
        {{name, op, "tree", op, "/lib" + name + ".so", {op + "-filter", "*EmptyInput*"}}, alone});
  }
  const std::vector<std::vector<SanitizerRun>> runs = run_sanitizer_group(group);
  ASSERT_EQ(runs.size(), 2u);
  for (std::size_t lab = 0; lab < 2; ++lab) {
    ASSERT_EQ(runs[lab].size(), 2u);
    EXPECT_EQ(runs[lab][0].tool, "memcheck");
    EXPECT_TRUE(runs[lab][0].clean()) << runs[lab][0].problem;
    EXPECT_EQ(runs[lab][0].log, group.common.log_file.string());  // from the group's run
    EXPECT_EQ(runs[lab][1].tool, "racecheck");
    EXPECT_EQ(runs[lab][1].log, (dir / group.labs[lab].part.name / "sanitizer.log").string());
  }
  EXPECT_TRUE(runs[0][1].clean()) << runs[0][1].problem;  // a, alone: no hazard
  EXPECT_EQ(runs[1][1].summary.problems(), 5);            // b, alone: its hazards
  EXPECT_TRUE(contains(planned_lines(dir / "sanitizer" / "group_0.launch.json"),
                       "b\tmaximum\ttree\tmaximum\t/libb.so\tmaximum-filter\t*EmptyInput*\n"));
  remove_all_quietly(dir);
}

TEST(SanitizerGroup, AStubsPartIsKeptButARealFailureRunsAlone) {
  // An untouched stub fails its tests only by its own "not implemented": a lone run would say
  // the same (clean, tests failed), so its part is kept from the group. Any other failure (here
  // a poisoned context) runs alone.
  const fs::path dir = make_temp_dir("reduce-grade-san-");
  SanitizerGroupSpec group;
  group.common = spec_for(dir, "", {"memcheck"});
  group.common.checker = fake_group_checker(dir, "Fake.Passes:Fake.Misbehaves");
  group.common.log_file = dir / "sanitizer" / "group_0.log";
  for (const std::string name : {"stub", "sticky"}) {
    SanitizerSpec alone = spec_for(dir / name, "Fake.Passes:Fake.Fails", {"memcheck"});
    fs::create_directories(dir / name);
    alone.checker = fake_alone_checker(dir);
    alone.log_file = dir / name / "sanitizer.log";
    group.labs.push_back({{name, "sum", "tree", "sum", "/lib" + name + ".so", {"*"}}, alone});
  }
  const std::vector<std::vector<SanitizerRun>> runs = run_sanitizer_group(group);
  ASSERT_EQ(runs.size(), 2u);
  ASSERT_EQ(runs[0].size(), 1u);
  EXPECT_EQ(runs[0][0].log, group.common.log_file.string()) << "the stub's part is kept";
  EXPECT_TRUE(runs[0][0].ran);
  EXPECT_EQ(runs[0][0].summary.problems(), 0);
  EXPECT_FALSE(runs[0][0].tests_passed);
  EXPECT_FALSE(runs[0][0].clean());
  ASSERT_EQ(runs[1].size(), 1u);
  EXPECT_EQ(runs[1][0].log, (dir / "sticky" / "sanitizer.log").string()) << "it ran alone";
  EXPECT_FALSE(runs[1][0].clean());
  remove_all_quietly(dir);
}

TEST(SanitizerRun, MissingToolIsAProblemNotACrash) {
  SanitizerSpec spec;
  spec.checker = REDUCE_GRADE_FAKE_SUITE;
  spec.tools = {"memcheck"};
  spec.filter = "*";
  const std::vector<SanitizerRun> runs = run_sanitizer(spec);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_FALSE(runs[0].ran);
  EXPECT_TRUE(contains(runs[0].problem, "compute-sanitizer not found"));
}

}  // namespace
}  // namespace reduce::grade
