// The runner's walls (walls.hpp), raised in a child process that then tries what a hostile lab
// would: each forbidden step must end the child by SIGSYS, each allowed one must work. Then the
// walk of the places a lab could write to or share (places.hpp), on a folder made for it.
#include <reduce_runner/places.hpp>
#include <reduce_runner/walls.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// The lab keeps the CPUs it was started on: widening its affinity fails (EPERM), reading works.
TEST(RunnerWalls, ItsCpuAffinityStaysAsGiven) {
  REQUIRE_WALLS();
  const int status = behind_walls([] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) ::_exit(1);
    if (::sched_setaffinity(0, sizeof set, &set) != -1 || errno != EPERM) ::_exit(2);
    std::thread t([] {
      cpu_set_t all;
      CPU_ZERO(&all);
      for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
      if (::sched_setaffinity(0, sizeof all, &all) != -1 || errno != EPERM) ::_exit(3);
    });
    t.join();
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
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

/// A folder of its own for a walk, removed afterwards.
class RunnerPlaces : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/reduce-places-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    dir_ = name;
  }
  void TearDown() override {
    ::chmod((dir_ + "/locked").c_str(), 0755);
    const std::string remove = "rm -rf '" + dir_ + "'";
    (void)!std::system(remove.c_str());
  }
  std::string dir_;
};

TEST_F(RunnerPlaces, FindsEachWritableFilesystemsTopFolderSocketsPipesAndDevices) {
  ASSERT_EQ(::mkdir((dir_ + "/a").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir_ + "/a/b").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir_ + "/locked").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((dir_ + "/locked/open").c_str(), 0755), 0);
  ASSERT_EQ(::chmod((dir_ + "/locked").c_str(), 0555), 0);
  ASSERT_EQ(::mkfifo((dir_ + "/a/pipe").c_str(), 0600), 0);
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s/a/b/sock", dir_.c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ::close(sock);
  const reduce::runner::Places places = reduce::runner::find_places(dir_);
  EXPECT_TRUE(places.complete);
  std::vector<std::string> writable;
  for (const auto& f : places.writable) writable.push_back(f.path);
  // a/ and a/b/ lie in a writable folder of the same filesystem: no place of their own. A
  // writable folder below one that is not is one (root writes everywhere: only the top then).
  std::vector<std::string> expected = {dir_};
  if (::geteuid() != 0) expected.push_back(dir_ + "/locked/open");
  EXPECT_EQ(writable, expected);
  EXPECT_EQ(places.sockets, std::vector<std::string>{dir_ + "/a/b/sock"});
  EXPECT_EQ(places.fifos, std::vector<std::string>{dir_ + "/a/pipe"});
  EXPECT_TRUE(places.devices.empty());
  ASSERT_FALSE(places.writable.empty());
  EXPECT_FALSE(places.writable[0].filesystem.empty());
  const std::string summary = places.summary();
  EXPECT_EQ(summary.rfind("places: writable " + dir_ + " (", 0), 0u) << summary;
  EXPECT_NE(summary.find("sockets on the filesystem " + dir_ + "/a/b/sock;"), std::string::npos)
      << summary;
  EXPECT_NE(places.details().find("pipe " + dir_ + "/a/pipe\n"), std::string::npos);
}

TEST_F(RunnerPlaces, TheWalkStopsAtItsLimitAndSaysSo) {
  for (int i = 0; i < 10; ++i)
    ASSERT_EQ(::mkdir((dir_ + "/" + std::to_string(i)).c_str(), 0755), 0);
  const reduce::runner::Places places = reduce::runner::find_places(dir_, {4, 20});
  EXPECT_FALSE(places.complete);
  EXPECT_NE(places.summary().find("the walk stopped after 5 entries"), std::string::npos)
      << places.summary();
}

TEST(RunnerPlacesHere, DevicesAreSeenAndTheKernelsFoldersSkipped) {
  // The whole machine from /, with a tight budget: /proc and /sys never appear.
  const reduce::runner::Places places = reduce::runner::find_places("/", {200000, 5});
  for (const auto& list : {places.sockets, places.fifos, places.devices})
    for (const std::string& path : list) {
      EXPECT_NE(path.rfind("/proc/", 0), 0u) << path;
      EXPECT_NE(path.rfind("/sys/", 0), 0u) << path;
    }
  const reduce::runner::Places dev = reduce::runner::find_places("/dev", {200000, 5});
  EXPECT_NE(std::find(dev.devices.begin(), dev.devices.end(), "/dev/null"), dev.devices.end());
}

}  // namespace
