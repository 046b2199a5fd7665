// The runner's walls (walls.hpp), raised in a child process that then tries what a hostile lab
// would: each forbidden step must end the child by SIGSYS, each allowed one must work.
#include <reduce_runner/walls.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

namespace {

using reduce::runner::Walls;

/// Runs \p attempt in a child behind the walls; returns its wait status. The child exits 0 when
/// the attempt returns, 90 when seccomp could not be raised, 91 when \p need_landlock and
/// Landlock could not.
int behind_walls(const std::function<void()>& attempt, bool need_landlock = false) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    Walls walls;
    reduce::runner::raise_landlock(walls);
    reduce::runner::raise_seccomp(walls);
    if (!walls.seccomp) ::_exit(90);
    if (need_landlock && walls.landlock_abi == 0) ::_exit(91);
    attempt();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

bool seccomp_here() {
  const int status = behind_walls([] {});
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#define REQUIRE_WALLS()                                         \
  if (!seccomp_here())                                          \
  GTEST_SKIP() << "this kernel refuses a seccomp filter here: " \
                  "the runner would report 'no seccomp'"

bool killed_by_wall(int status) {
  return WIFSIGNALED(status) && WTERMSIG(status) == reduce::runner::kWallSignal;
}

TEST(RunnerWalls, ThreadsAndSignalsToItselfStillWork) {
  REQUIRE_WALLS();
  const int status = behind_walls([] {
    std::thread t([] {});
    t.join();
    ::signal(SIGUSR1, [](int) {});
    if (::raise(SIGUSR1) != 0 || ::kill(::getpid(), 0) != 0) ::_exit(1);
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(RunnerWalls, NewProcessesEndIt) {
  REQUIRE_WALLS();
  EXPECT_TRUE(killed_by_wall(behind_walls([] { ::fork(); })));
  EXPECT_TRUE(killed_by_wall(behind_walls([] { ::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); })));
  EXPECT_TRUE(killed_by_wall(behind_walls([] {
    char* argv[] = {const_cast<char*>("true"), nullptr};
    ::execv("/bin/true", argv);
  })));
  EXPECT_TRUE(killed_by_wall(behind_walls([] { (void)std::system("true"); })));
  EXPECT_TRUE(killed_by_wall(behind_walls([] {
    wordexp_t words;
    ::wordexp("$(true)", &words, 0);
  })));
}

TEST(RunnerWalls, SignalsToOtherProcessesEndIt) {
  REQUIRE_WALLS();
  const pid_t parent = ::getpid();
  EXPECT_TRUE(killed_by_wall(behind_walls([&] { ::kill(parent, 0); })));
  EXPECT_TRUE(killed_by_wall(behind_walls([] { ::kill(0, 0); })));
  EXPECT_TRUE(killed_by_wall(behind_walls([] { ::kill(-1, 0); })));
  EXPECT_TRUE(killed_by_wall(behind_walls([&] { ::sigqueue(parent, 0, sigval{}); })));
  EXPECT_TRUE(killed_by_wall(behind_walls([&] { ::syscall(SYS_tgkill, parent, parent, 0); })));
  EXPECT_TRUE(killed_by_wall(behind_walls([&] { ::syscall(SYS_pidfd_open, parent, 0); })));
}

TEST(RunnerWalls, TracingAndNamespacesEndIt) {
  REQUIRE_WALLS();
  const pid_t parent = ::getpid();
  EXPECT_TRUE(killed_by_wall(behind_walls([&] { ::ptrace(PTRACE_ATTACH, parent, 0, 0); })));
  EXPECT_TRUE(killed_by_wall(behind_walls([&] {
    char byte = 0;
    iovec local{&byte, 1}, remote{&byte, 1};
    ::syscall(SYS_process_vm_readv, parent, &local, 1, &remote, 1, 0);
  })));
  EXPECT_TRUE(killed_by_wall(behind_walls([] { ::umount2("/proc", MNT_DETACH); })));
  EXPECT_TRUE(killed_by_wall(behind_walls([] { ::syscall(SYS_unshare, 0); })));
}

TEST(RunnerWalls, LandlockKeepsOtherProcessesMemoryAndFilesAway) {
  REQUIRE_WALLS();
  // This test process: same user, dumpable, so only Landlock stands between it and the child.
  const std::string mem = "/proc/" + std::to_string(::getpid()) + "/mem";
  const std::string fd = "/proc/" + std::to_string(::getpid()) + "/fd/0";
  const int status = behind_walls(
      [&] {
        if (::open(mem.c_str(), O_RDONLY) >= 0 || ::open(fd.c_str(), O_RDONLY) >= 0) ::_exit(1);
      },
      true);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 91)
    GTEST_SKIP() << "no Landlock on this kernel: the runner would report 'no Landlock'";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
