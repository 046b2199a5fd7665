// `reduce-grade confine`, the sandbox of a submission's build and of the lab's runner: what it
// hides is empty, what it shows again is readable and read-only, the rest of the machine is
// read-only, a hidden folder cannot be reached through another process's /proc entry, and its
// /tmp, /dev/shm and /dev are its own (capped, minimal, gone with it). bubblewrap must agree.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/isolation.hpp>
#include <reduce_grade/processes/process.hpp>

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

  /// The places of its own (own_places()), the course (it lies in /tmp) without its hidden
  /// folder, and the build folder writable.
  std::vector<MountStep> build_like() const {
    std::vector<MountStep> steps = own_places(kLabTmpBytes);
    steps.insert(steps.end(), {{MountStep::Kind::kShow, (dir_ / "course").string()},
                               {MountStep::Kind::kHide, (dir_ / "course" / "hidden").string()},
                               {MountStep::Kind::kWritable, (dir_ / "build").string()}});
    return steps;
  }

  /// `sh -c SCRIPT sh DIR PID` in each sandbox the grader may choose, forced in turn, on
  /// build_like(); one that does not work here is left out (and named).
  std::map<std::string, ProcessResult> in_each_sandbox(const std::string& script) {
    std::map<std::string, ProcessResult> seen;
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
                       {"sh", "-c", script, "sh", dir_.string(), std::to_string(::getpid())});
      spec.timeout_s = 60;
      seen[which] = run_process(spec);
    }
    return seen;
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
/// write to the course and to the build folder, the network devices; then its places: which of
/// the usual writable places it can write, its /dev, its /tmp and /dev/shm (filesystem, blocks,
/// block size, what they hold) and its System V IPC objects.
const char* const kLookAround =
    "echo pid $$; test -e /proc/$2 && echo host-process-visible; ls -A $1/course/hidden; "
    "touch $1/course/x 2>/dev/null && echo course-writable; touch $1/build/x && echo built; "
    "echo net $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '); "
    "for d in / /tmp /var/tmp /dev /dev/shm /dev/mqueue /dev/pts /run /run/user /run/shm "
    "/run/lock /root /home \"$HOME\" /etc /sys /sys/fs/cgroup $1 $1/course $1/build; do "
    "test -w \"$d\" && readlink -f \"$d\"; done | LC_ALL=C sort -u | sed 's/^/writable /'; "
    "echo dev $(ls -A /dev | grep -v '^nvidia'); stat -f -c '%T %b %S' /tmp /dev/shm; "
    "echo holds $(ls -A /tmp/ /dev/shm/); echo sysv $(cat /proc/sysvipc/* | grep -vc key)";

TEST_F(ConfineTest, BubblewrapAndConfinePutUpTheSameWalls) {
  // Each sandbox the grader may choose, forced in turn, on the same view.
  const std::map<std::string, ProcessResult> runs = in_each_sandbox(kLookAround);
  std::map<std::string, std::string> seen;
  for (const auto& [which, r] : runs) {
    ASSERT_TRUE(r.succeeded()) << which << ": " << r.output;
    seen[which] = r.output;
  }
  if (seen.size() < 2) GTEST_SKIP() << "only " << seen.size() << " of the two sandboxes works here";
  EXPECT_EQ(seen["confine"], seen["bubblewrap"]);
  const std::string& confine = seen["confine"];
  EXPECT_NE(confine.find("pid 2\n"), std::string::npos) << confine;
  EXPECT_NE(confine.find("built\n"), std::string::npos) << confine;
  EXPECT_EQ(confine.find("course-writable"), std::string::npos) << confine;
  EXPECT_EQ(confine.find("host-process-visible"), std::string::npos) << confine;
  // Writable: its own /dev/shm (/run/shm may link to it), its own /tmp (with the mount points of
  // the course, which lies there), and the build folder; nothing of the machine's.
  std::string writable;
  for (const std::string& line : split_lines(confine))
    if (line.rfind("writable ", 0) == 0) writable += line + "\n";
  EXPECT_EQ(writable, "writable /dev/shm\nwritable /tmp\nwritable " + dir_.string() +
                          "\nwritable " + (dir_ / "build").string() + "\n")
      << confine;
  const std::string blocks = std::to_string(kLabTmpBytes / 4096);
  EXPECT_NE(confine.find("dev fd null shm stderr stdin stdout urandom zero\ntmpfs " + blocks +
                         " 4096\ntmpfs " + blocks + " 4096\n"),
            std::string::npos)
      << confine;
  EXPECT_NE(confine.find("sysv 0\n"), std::string::npos) << confine;
}

TEST_F(ConfineTest, NothingWrittenInItsOwnPlacesOutlivesIt) {
  // Written into /dev/shm and /tmp, in each sandbox: the machine's have no such file after.
  const std::string name = "reduce-confine-probe-" + std::to_string(::getpid());
  const auto runs = in_each_sandbox("echo x > /dev/shm/" + name + " && echo x > /tmp/" + name +
                                    " && test -s /dev/shm/" + name + " && echo written");
  if (runs.empty()) GTEST_SKIP() << "no sandbox works here";
  for (const auto& [which, r] : runs) {
    EXPECT_EQ(r.output, "written\n") << which;
    EXPECT_FALSE(fs::exists("/dev/shm/" + name)) << which << " left it in the machine's /dev/shm";
    EXPECT_FALSE(fs::exists("/tmp/" + name)) << which << " left it in the machine's /tmp";
    std::error_code ec;
    fs::remove("/dev/shm/" + name, ec);
    fs::remove("/tmp/" + name, ec);
  }
}

TEST_F(ConfineTest, ItsOwnPlacesAreCappedAndItsDevMinimal) {
  // 80 MiB into a 64 MiB /dev/shm or /tmp: ENOSPC; nothing new in /dev; the devices it keeps work.
  const auto runs = in_each_sandbox(
      "for f in /dev/shm/big /tmp/big; do dd if=/dev/zero of=$f bs=1M count=80 2>&1 | "
      "grep -o 'No space left on device'; rm -f $f; done; touch /dev/x 2>/dev/null && echo "
      "dev-writable; mkdir /dev/mqueue 2>/dev/null && echo dev-writable; head -c 4 /dev/urandom | "
      "wc -c; head -c 4 /dev/zero | wc -c; echo x > /dev/null && echo null; echo x > /dev/fd/1");
  if (runs.empty()) GTEST_SKIP() << "no sandbox works here";
  for (const auto& [which, r] : runs)
    EXPECT_EQ(r.output, "No space left on device\nNo space left on device\n4\n4\nnull\nx\n")
        << which;
}

TEST_F(ConfineTest, ItsDevicesWorkButTheirTimesAndModeStayTheMachines) {
  // A device bound read-write would let a lab set the machine's node's times (any user who may
  // write to it) or mode (its owner): bits that outlive the sandbox. confine binds them
  // read-only; bubblewrap cannot (see the threat model).
  const ProcessResult r =
      confined(build_like(),
               "echo x > /dev/null && echo written; head -c 2 /dev/zero | wc -c; "
               "touch /dev/null 2>/dev/null && echo touched; chmod 666 /dev/zero "
               "2>/dev/null && echo chmod; true");
  if (!skipped_.empty()) GTEST_SKIP() << skipped_;
  EXPECT_EQ(r.output, "written\n2\n");
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
  // Its own places first, with a /tmp large enough for the CUDA compiler's files.
  const std::size_t own = own_places(kBuildTmpBytes).size();
  ASSERT_GT(words.size(), own);
  EXPECT_EQ(words.front(), "--scratch=/tmp:" + std::to_string(kBuildTmpBytes));
  words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(own));
  const std::vector<std::string> expected = {
      "--show=/course",  "--hide=/course/autograder/hidden", "--hide=/course/solutions",
      "--hide=/reports", "--writable=/work/build",           "--hide=/work/build/course"};
  EXPECT_EQ(words, expected);
}

TEST(OwnPlaces, EachStartGetsAnEmptyCappedTmpAndShmAndAMinimalDev) {
  std::vector<std::string> words;
  for (const MountStep& s : own_places(kLabTmpBytes))
    if (s.argument().find("nvidia") == std::string::npos) words.push_back(s.argument());
  const std::string shm = std::to_string(kOwnShmBytes);
  const std::vector<std::string> expected = {"--scratch=/tmp:" + std::to_string(kLabTmpBytes),
                                             "--hide=/run/user",
                                             "--hide=/dev",
                                             "--device=/dev/null",
                                             "--device=/dev/zero",
                                             "--device=/dev/urandom",
                                             "--link=/dev/fd:/proc/self/fd",
                                             "--link=/dev/stdin:/proc/self/fd/0",
                                             "--link=/dev/stdout:/proc/self/fd/1",
                                             "--link=/dev/stderr:/proc/self/fd/2",
                                             "--scratch=/dev/shm:" + shm};
  EXPECT_EQ(words, expected);
}

TEST(ConfineUsage, AScratchFolderNeedsASizeAndALinkATarget) {
  for (const char* bad : {"--scratch=/tmp", "--scratch=/tmp:0", "--scratch=/tmp:1x", "--link=/x",
                          "--link=/x:", "--device="}) {
    ProcessSpec spec;
    spec.argv = {REDUCE_GRADE_BINARY, "confine", bad, "--", "true"};
    spec.timeout_s = 30;
    EXPECT_EQ(run_process(spec).exit_code, 2) << bad;
  }
}

}  // namespace
}  // namespace reduce::grade
