// reduce/child_process.hpp: the one process starter of the grader and the lab runner. Its cap,
// its deadline (SIGTERM, a grace, SIGKILL to the whole group), how it reports an end, and the
// descriptors and environment a child gets.
#include <reduce/child_process.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>

namespace reduce {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ChildSpec sh(const std::string& script) {
  ChildSpec spec;
  spec.argv = {"sh", "-c", script};
  return spec;
}

WaitLimits within(double seconds, double grace_s = 2) {
  WaitLimits limits;
  limits.deadline = deadline_in(seconds);
  limits.kill_grace_s = grace_s;
  return limits;
}

/// True while \p pid exists and is not a zombie.
bool alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

/// Waits up to a second for \p pid to be gone.
bool gone_soon(int pid) {
  for (int i = 0; i < 100 && alive(pid); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return !alive(pid);
}

TEST(ChildProcess, OutputOverTheCapIsCutAndCounted) {
  ChildSpec spec = sh("yes 0123456789 | head -c 300000");
  spec.output_cap = 1000;
  spec.cap_kills = false;
  spec.tail_bytes = 11;
  ChildProcess child(spec);
  ASSERT_TRUE(child.started()) << child.start_error();
  const ChildEnd end = child.wait(within(30));
  std::string stream;
  while (stream.size() < 300000) stream += "0123456789\n";
  stream.resize(300000);
  EXPECT_EQ(end.exit_code, 0);
  EXPECT_FALSE(end.flooded);  // passed the cap, but the cap does not kill here
  EXPECT_TRUE(child.flooded());
  EXPECT_EQ(end.output_bytes, 300000u);
  EXPECT_EQ(child.output(), stream.substr(0, 1000));
  EXPECT_EQ(child.tail(), stream.substr(300000 - 11));
}

TEST(ChildProcess, PassingTheCapKillsTheGroupAtOnce) {
  ChildSpec spec;
  spec.argv = {"yes"};
  spec.output_cap = std::size_t{1} << 20;
  const auto start = std::chrono::steady_clock::now();
  ChildProcess child(spec);
  const ChildEnd end = child.wait(within(60));
  EXPECT_LT(seconds_since(start), 20);
  EXPECT_TRUE(end.flooded);
  EXPECT_FALSE(end.timed_out);
  EXPECT_EQ(end.signal, SIGKILL);
  EXPECT_EQ(end.exit_code, -1);
  EXPECT_EQ(child.output().size(), std::size_t{1} << 20);
  EXPECT_GT(end.output_bytes, std::size_t{1} << 20);
}

TEST(ChildProcess, DeadlineKillsAGroupThatIgnoresTermAndHoldsThePipe) {
  // The shell and its grandchild (which inherits the ignored SIGTERM) both ignore the deadline's
  // SIGTERM, and the grandchild holds the output pipe: SIGKILL after the grace takes both.
  ChildProcess child(sh("trap '' TERM; sleep 100 & echo $!; while :; do sleep 1; done"));
  const auto start = std::chrono::steady_clock::now();
  const ChildEnd end = child.wait(within(0.5, 0.5));
  const double took = seconds_since(start);
  EXPECT_GE(took, 0.9);  // the deadline, then the whole grace: SIGTERM changed nothing
  EXPECT_LT(took, 5);
  EXPECT_TRUE(end.timed_out);
  EXPECT_EQ(end.signal, SIGKILL);
  const int grandchild = std::stoi(child.output());
  EXPECT_TRUE(gone_soon(grandchild));
}

TEST(ChildProcess, TermComesFirstAndTheGraceLetsTheChildEndItsOwnWay) {
  // (The shell's own stderr goes: it reports the SIGTERM of its sleep there.)
  ChildProcess child(
      sh("exec 2>/dev/null; trap 'echo terminated; exit 3' TERM; while :; do sleep 0.05; done"));
  const ChildEnd end = child.wait(within(0.3, 10));
  EXPECT_TRUE(end.timed_out);
  EXPECT_EQ(end.exit_code, 3);
  EXPECT_EQ(end.signal, 0);
  EXPECT_EQ(child.output(), "terminated\n");
}

TEST(ChildProcess, ExitStatusAndSignalAreReported) {
  ChildProcess exits(sh("echo out; echo err >&2; exit 7"));
  const ChildEnd exited = exits.wait(within(30));
  EXPECT_EQ(exited.exit_code, 7);
  EXPECT_EQ(exited.signal, 0);
  EXPECT_FALSE(exited.timed_out || exited.flooded || exited.cancelled || exited.lost);
  EXPECT_EQ(exits.output(), "out\nerr\n");

  ChildProcess crashes(sh("kill -SEGV $$"));
  const ChildEnd crashed = crashes.wait(within(30));
  EXPECT_EQ(crashed.signal, SIGSEGV);
  EXPECT_EQ(crashed.exit_code, -1);
  EXPECT_FALSE(crashed.timed_out);
}

TEST(ChildProcess, AChildThatClosesItsOutputEarlyIsStillWaitedFor) {
  for (const bool background : {false, true}) {
    ChildProcess child(sh("echo bye; exec >&- 2>&-; sleep 0.5; exit 5"));
    if (background) child.drain_in_background();
    const auto start = std::chrono::steady_clock::now();
    const ChildEnd end = child.wait(within(30));
    EXPECT_GE(seconds_since(start), 0.4) << "background " << background;
    EXPECT_EQ(end.exit_code, 5) << "background " << background;
    EXPECT_FALSE(end.timed_out);
    EXPECT_EQ(child.output(), "bye\n");
  }
}

TEST(ChildProcess, AChildExitingLeavesNothingOfItsGroupBehind) {
  // A background process keeps the pipe open after the child's exit: its output is read for a
  // moment, then it is killed with the group.
  ChildProcess child(sh("sleep 100 & echo $!; exit 0"));
  WaitLimits limits = within(30);
  limits.drain_after_exit_s = 0.2;
  const auto start = std::chrono::steady_clock::now();
  const ChildEnd end = child.wait(limits);
  EXPECT_LT(seconds_since(start), 5);
  EXPECT_EQ(end.exit_code, 0);
  EXPECT_TRUE(gone_soon(std::stoi(child.output())));
}

TEST(ChildProcess, OutputIsDrainedInTheBackgroundWhileTheCallerWorks) {
  // 2 MB is far more than a pipe holds: without a drainer the child would block.
  ChildSpec spec = sh("yes | head -c 2000000; exit 4");
  spec.output_cap = std::size_t{4} << 20;
  ChildProcess child(spec);
  child.drain_in_background();
  for (int i = 0; i < 500 && child.output_bytes() < 2000000; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(child.output_bytes(), 2000000u);
  const ChildEnd end = child.wait(within(30));
  EXPECT_EQ(end.exit_code, 4);
  EXPECT_EQ(child.output().size(), 2000000u);
}

TEST(ChildProcess, CancelKillsTheGroupAtOnce) {
  std::atomic<bool> cancel{true};
  ChildProcess child(sh("sleep 100"));
  WaitLimits limits = within(100);
  limits.cancel = &cancel;
  const auto start = std::chrono::steady_clock::now();
  const ChildEnd end = child.wait(limits);
  EXPECT_LT(seconds_since(start), 5);
  EXPECT_TRUE(end.cancelled);
  EXPECT_EQ(end.signal, SIGKILL);
}

TEST(ChildProcess, PassesChosenDescriptorsAndACleanEnvironmentOnly) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  const int leak = ::open("/dev/null", O_RDONLY);  // not close-on-exec: it would reach a child
  ASSERT_GE(leak, 0);
  const std::string leak_path = "/proc/$$/fd/" + std::to_string(leak);
  ASSERT_NE(leak, 7);
  ChildSpec spec = sh("echo through >&7; echo \"$ONLY:${HOME:-none}\"; [ -e " + leak_path +
                      " ] && echo leaked || echo closed");
  spec.env = {{"ONLY", "1"}};
  spec.clean_environment = true;
  spec.pass_fds = {{pipe_fds[1], 7}};
  spec.close_other_fds = true;
  ChildProcess child(spec);
  ::close(pipe_fds[1]);
  const ChildEnd end = child.wait(within(30));
  char got[64] = {};
  const ssize_t n = ::read(pipe_fds[0], got, sizeof got - 1);
  ::close(pipe_fds[0]);
  ::close(leak);
  EXPECT_EQ(end.exit_code, 0);
  EXPECT_EQ(std::string(got, n > 0 ? static_cast<std::size_t>(n) : 0), "through\n");
  EXPECT_EQ(child.output(), "1:none\nclosed\n");
}

TEST(ChildProcess, StartFailuresAreReportedNotThrown) {
  ChildProcess missing(ChildSpec{{"reduce-no-such-program"}});
  EXPECT_FALSE(missing.started());
  EXPECT_EQ(missing.start_error(), "program not found: reduce-no-such-program");
  EXPECT_EQ(missing.wait(within(1)).exit_code, -1);

  ChildProcess empty(ChildSpec{});
  EXPECT_EQ(empty.start_error(), "empty command");

  ChildSpec nowhere = sh("true");
  nowhere.cwd = "/reduce-no-such-folder";
  ChildProcess lost(nowhere);
  EXPECT_FALSE(lost.started());
  const std::string error = lost.start_error();
  EXPECT_EQ(error.rfind("cannot run /", 0), 0u) << error;
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

TEST(ChildProcess, ItsChildrenAreKnownUntilReaped) {
  ChildProcess child(sh("sleep 100"));
  ASSERT_TRUE(child.started());
  {
    const ChildrenLock lock;
    EXPECT_TRUE(lock.started_here(child.pid()));
  }
  const ChildEnd end = child.kill_and_wait();
  EXPECT_EQ(end.signal, SIGKILL);
  const ChildrenLock lock;
  EXPECT_FALSE(lock.started_here(child.pid()));
}

TEST(ChildProcess, FindsProgramsInPath) {
  const auto sh_path = find_program("sh");
  ASSERT_TRUE(sh_path.has_value());
  EXPECT_EQ(sh_path->filename(), "sh");
  EXPECT_FALSE(find_program("reduce-no-such-program").has_value());
  EXPECT_FALSE(find_program("").has_value());
}

}  // namespace
}  // namespace reduce
