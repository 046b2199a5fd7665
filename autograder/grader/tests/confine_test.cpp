// `reduce-grade confine`, the sandbox of a submission's build and of the lab's runner: what it
// hides is empty, what it shows again is readable and read-only, the rest of the machine is
// read-only, and a hidden folder cannot be reached through another process's /proc entry.
#include <reduce_grade/isolation.hpp>
#include <reduce_grade/process.hpp>
#include <reduce_grade/util.hpp>

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>

namespace reduce::grade {
namespace {

class ConfineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("reduce-grade-confine-");
    write_file(dir_ / "course" / "hidden" / "answers.txt", "secret\n");
    write_file(dir_ / "course" / "common" / "shared.txt", "shared\n");
    fs::create_directories(dir_ / "build");
  }
  void TearDown() override { remove_all_quietly(dir_); }

  /// `sh -c SCRIPT` confined by \p steps; skips the test where this kernel allows no user
  /// namespace (exit 3, "cannot confine").
  ProcessResult confined(const std::vector<MountStep>& steps, const std::string& script) {
    ProcessSpec spec;
    spec.argv = {REDUCE_GRADE_BINARY, "confine"};
    for (const MountStep& s : steps) spec.argv.push_back(s.argument());
    spec.argv.insert(spec.argv.end(), {"--", "sh", "-c", script});
    spec.timeout_s = 30;
    ProcessResult r = run_process(spec);
    if (r.exit_code == 3 && contains(r.output, "cannot confine")) skipped_ = r.output;
    return r;
  }

  std::vector<MountStep> build_like() const {
    return {{MountStep::Kind::kHide, "/tmp"},
            {MountStep::Kind::kShow, (dir_ / "course").string()},
            {MountStep::Kind::kHide, (dir_ / "course" / "hidden").string()},
            {MountStep::Kind::kWritable, (dir_ / "build").string()}};
  }

  fs::path dir_;
  std::string skipped_;
};

TEST_F(ConfineTest, HiddenFoldersAreEmptyAndShownOnesReadable) {
  const ProcessResult r =
      confined(build_like(), "ls -A " + (dir_ / "course" / "hidden").string() + "; echo; cat " +
                                 (dir_ / "course" / "common" / "shared.txt").string());
  if (!skipped_.empty()) GTEST_SKIP() << skipped_;
  ASSERT_TRUE(r.succeeded()) << r.output;
  EXPECT_EQ(trim(r.output), "shared");
}

TEST_F(ConfineTest, OnlyTheWritableFolderTakesWrites) {
  const std::string course_file = (dir_ / "course" / "common" / "new.txt").string();
  const std::string build_file = (dir_ / "build" / "out.txt").string();
  const ProcessResult r = confined(
      build_like(), "echo x > " + course_file + " 2>/dev/null && echo course-written; echo x > " +
                        build_file + " && echo build-written; echo x > /etc/reduce-probe " +
                        "2>/dev/null && echo etc-written; true");
  if (!skipped_.empty()) GTEST_SKIP() << skipped_;
  ASSERT_TRUE(r.succeeded()) << r.output;
  EXPECT_TRUE(contains(r.output, "build-written")) << r.output;
  EXPECT_FALSE(contains(r.output, "course-written")) << r.output;
  EXPECT_FALSE(contains(r.output, "etc-written")) << r.output;
  EXPECT_FALSE(fs::exists(course_file));
  EXPECT_TRUE(fs::exists(build_file));
}

TEST_F(ConfineTest, AHiddenWorkingFolderIsLeftToo) {
  // A process that starts inside a folder that becomes hidden must not keep it open.
  ProcessSpec spec;
  spec.argv = {REDUCE_GRADE_BINARY, "confine"};
  for (const MountStep& s : build_like()) spec.argv.push_back(s.argument());
  spec.argv.insert(spec.argv.end(), {"--", "cat", "answers.txt"});
  spec.cwd = dir_ / "course" / "hidden";
  spec.timeout_s = 30;
  const ProcessResult r = run_process(spec);
  if (r.exit_code == 3 && contains(r.output, "cannot confine")) GTEST_SKIP() << r.output;
  EXPECT_FALSE(r.succeeded());
  EXPECT_FALSE(contains(r.output, "secret")) << r.output;
}

TEST_F(ConfineTest, AnotherProcessesRootDoesNotLeadBackIn) {
  // /proc/PID/root of a process outside the sandbox (this test) would show the host's view.
  const std::string through_proc = "/proc/" + std::to_string(::getpid()) + "/root" +
                                   (dir_ / "course" / "hidden" / "answers.txt").string();
  const ProcessResult r = confined(build_like(), "cat " + through_proc);
  if (!skipped_.empty()) GTEST_SKIP() << skipped_;
  EXPECT_FALSE(r.succeeded());
  EXPECT_FALSE(contains(r.output, "secret")) << r.output;
}

TEST_F(ConfineTest, ItsOwnProcessesOnlyAndTheCommandsOwnEnd) {
  // PID 2 behind the sandbox's PID 1; a /proc of its own (where the kernel allows one) lists
  // nothing of the host's; no signal reaches the process that started it.
  const ProcessResult r = confined(build_like(), "echo $$; kill -0 " + std::to_string(::getpid()) +
                                                     " 2>/dev/null || echo alone");
  if (!skipped_.empty()) GTEST_SKIP() << skipped_;
  ASSERT_TRUE(r.succeeded()) << r.output;
  EXPECT_EQ(r.output, "2\nalone\n");
  EXPECT_EQ(confined(build_like(), "exit 7").exit_code, 7);
  const ProcessResult killed = confined(build_like(), "kill -SEGV $$");
  EXPECT_EQ(killed.signal, SIGSEGV) << killed.describe();
}

/// What a process sees of its sandbox: its pid, a host process ($2) in /proc, the hidden folder, a
/// write to the course and to the build folder, the network devices.
const char* const kLookAround =
    "echo pid $$; test -e /proc/$2 && echo host-process-visible; ls -A $1/course/hidden; "
    "touch $1/course/x 2>/dev/null && echo course-writable; touch $1/build/x && echo built; "
    "echo net $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ')";

TEST_F(ConfineTest, BubblewrapAndConfinePutUpTheSameWalls) {
  // Each sandbox the grader may choose, forced in turn, on the same view.
  std::map<std::string, std::string> seen;
  for (const char* which : {"confine", "bubblewrap"}) {
    ::setenv("REDUCE_SANDBOX", which, 1);
    const Isolation iso = detect_isolation(build_like(), "the probe");
    ::unsetenv("REDUCE_SANDBOX");
    if (!iso.sandboxed) {
      std::printf("[ skipped  ] %s: %s\n", which, iso.description.c_str());
      continue;
    }
    ProcessSpec spec;
    spec.argv = iso.runner_prefix;
    spec.argv.insert(spec.argv.end(),
                     {"sh", "-c", kLookAround, "sh", dir_.string(), std::to_string(::getpid())});
    spec.timeout_s = 30;
    const ProcessResult r = run_process(spec);
    ASSERT_TRUE(r.succeeded()) << which << ": " << r.output;
    seen[which] = r.output;
  }
  if (seen.size() < 2) GTEST_SKIP() << "only " << seen.size() << " of the two sandboxes works here";
  EXPECT_EQ(seen["confine"], seen["bubblewrap"]);
  EXPECT_NE(seen["confine"].find("pid 2\n"), std::string::npos) << seen["confine"];
  EXPECT_NE(seen["confine"].find("built\n"), std::string::npos) << seen["confine"];
  EXPECT_EQ(seen["confine"].find("course-writable"), std::string::npos) << seen["confine"];
  EXPECT_EQ(seen["confine"].find("host-process-visible"), std::string::npos) << seen["confine"];
}

TEST_F(ConfineTest, UsageErrorsExitTwo) {
  ProcessSpec spec;
  spec.argv = {REDUCE_GRADE_BINARY, "confine", "--hide=relative/path", "--", "true"};
  spec.timeout_s = 30;
  ProcessResult r = run_process(spec);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  spec.argv = {REDUCE_GRADE_BINARY, "confine", "--hide=/tmp"};
  r = run_process(spec);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "no command")) << r.output;
}

TEST(BuildView, HidesTheCoursesSecretsAndShowsTheBuildFolderLast) {
  const std::vector<MountStep> steps =
      build_view("/course", {"/reports", "/work/build/course"}, "/work/build");
  std::vector<std::string> words;
  for (const MountStep& s : steps) words.push_back(s.argument());
  const std::vector<std::string> expected = {"--hide=/tmp",
                                             "--show=/course",
                                             "--hide=/course/autograder/hidden",
                                             "--hide=/course/solutions",
                                             "--hide=/reports",
                                             "--writable=/work/build",
                                             "--hide=/work/build/course"};
  EXPECT_EQ(words, expected);
}

}  // namespace
}  // namespace reduce::grade
