// The process runner: exit codes, time limit, output cap, signals, environment, clean-up.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/process.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

namespace reduce::grade {
namespace {

ProcessResult sh(const std::string& script, double timeout_s = 30, std::size_t cap = 1 << 20) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.timeout_s = timeout_s;
  spec.output_cap = cap;
  return run_process(spec);
}

/// True while \p pid exists and is not a zombie.
bool alive(int pid) {
  const std::string status = read_file("/proc/" + std::to_string(pid) + "/status");
  if (status.empty()) return false;
  return !contains(status, "State:\tZ");
}

TEST(Process, CapturesOutputAndExitCode) {
  const ProcessResult r = sh("echo out; echo err >&2; exit 3");
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.succeeded());
  EXPECT_TRUE(r.exited());
  EXPECT_TRUE(contains(r.output, "out\n"));
  EXPECT_TRUE(contains(r.output, "err\n"));
  EXPECT_EQ(r.describe(), "exit 3");
}

TEST(Process, TimeoutKillsSleep) {
  ProcessSpec spec;
  spec.argv = {"sleep", "100"};
  spec.timeout_s = 1;
  const double start = now_seconds();
  const ProcessResult r = run_process(spec);
  EXPECT_LT(now_seconds() - start, 10);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.succeeded());
  EXPECT_TRUE(contains(r.describe(), "timed out after 1 s"));
}

TEST(Process, CancelKillsTheGroupWellBeforeItsLimit) {
  // The shell starts a grandchild and waits; turning the flag kills both, long before 100 s.
  std::atomic<bool> cancel{false};
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "sleep 100 & echo $!; wait"};
  spec.timeout_s = 100;
  spec.cancel = &cancel;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  const double start = now_seconds();
  const ProcessResult r = run_process(spec);
  stopper.join();
  EXPECT_LT(now_seconds() - start, 10);
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_FALSE(r.succeeded());
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_TRUE(contains(r.describe(), "cancelled"));
  const int grandchild = std::stoi(trim(r.output));
  for (int i = 0; i < 50 && alive(grandchild); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(grandchild));
}

TEST(Process, AFlagNeverTurnedChangesNothing) {
  std::atomic<bool> cancel{false};
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "echo done"};
  spec.cancel = &cancel;
  const ProcessResult r = run_process(spec);
  EXPECT_FALSE(r.cancelled);
  EXPECT_TRUE(r.succeeded());
  EXPECT_TRUE(contains(r.output, "done"));
}

TEST(Process, TimeoutKillsTheWholeProcessGroup) {
  // The shell starts a grandchild and waits; the limit must kill both.
  const ProcessResult r = sh("sleep 100 & echo $!; wait", 1);
  ASSERT_TRUE(r.timed_out);
  const int grandchild = std::stoi(trim(r.output));
  for (int i = 0; i < 50 && alive(grandchild); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(grandchild));
}

TEST(Process, ChildExitingLeavesNothingBehind) {
  // The child exits at once but a background process keeps the output pipe open: the runner
  // must not wait for it, and must kill it.
  const double start = now_seconds();
  const ProcessResult r = sh("sleep 100 & echo $!; exit 0", 30);
  EXPECT_LT(now_seconds() - start, 5);
  EXPECT_TRUE(r.succeeded());
  const int background = std::stoi(trim(r.output));
  for (int i = 0; i < 50 && alive(background); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive(background));
}

// Batch and check-planted grade several submissions at once: one submission's clean-up must
// never take a process another thread has just started (it would wait for it until its time
// limit, and report it as killed).
TEST(Process, StrayKillerSparesChildrenOfOtherThreads) {
  std::atomic<bool> done{false};
  int strays = 0;
  std::thread killer([&] {
    while (!done) {
      strays += kill_stray_processes();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::atomic<int> wrong{0};
  std::vector<std::thread> graders;
  for (int t = 0; t < 4; ++t) {
    graders.emplace_back([&] {
      for (int i = 0; i < 150; ++i) {
        const ProcessResult r = sh("exit 7", 3);
        if (r.exit_code != 7 || r.timed_out) ++wrong;
      }
    });
  }
  for (std::thread& g : graders) g.join();
  done = true;
  killer.join();
  EXPECT_EQ(wrong.load(), 0) << "children of run_process were taken for strays";
  EXPECT_EQ(strays, 0);
}

TEST(Process, AnEndedOrphanIsReapedButNotCountedAsLeftRunning) {
  // As a sandbox's own helper does: a grandchild that ends after its parent, reparented to this
  // subreaper as a zombie. It ran nothing of the submission's beyond its end: not a stray.
  ASSERT_TRUE(become_subreaper());
  const ProcessResult r = sh("(sleep 0.2; exit 0) & echo $!; exit 0", 5);
  const int orphan = std::stoi(trim(r.output));
  for (int i = 0; i < 100 && alive(orphan); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(kill_stray_processes(), 0);
  EXPECT_FALSE(alive(orphan));
}

TEST(Process, MemoryLimitHoldsTheChild) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "ulimit -v"};
  spec.memory_limit_bytes = std::size_t{1} << 30;
  const ProcessResult r = run_process(spec);
  EXPECT_EQ(trim(r.output), "1048576");  // KiB
}

TEST(Process, OutputCapStopsYes) {
  ProcessSpec spec;
  spec.argv = {"yes"};
  spec.timeout_s = 60;
  spec.output_cap = std::size_t{1} << 20;
  const double start = now_seconds();
  const ProcessResult r = run_process(spec);
  EXPECT_LT(now_seconds() - start, 20);
  EXPECT_TRUE(r.output_flood);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.output.size(), std::size_t{1} << 20);
  EXPECT_TRUE(contains(r.describe(), "output flood: more than 1 MiB"));
}

TEST(Process, CrashBySignalIsDecoded) {
  const ProcessResult r = sh("kill -SEGV $$");
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_FALSE(r.exited());
  EXPECT_TRUE(contains(r.describe(), "SIGSEGV (segmentation fault)"));
  EXPECT_TRUE(contains(signal_description(SIGABRT), "abort"));
}

TEST(Process, MissingProgramIsReportedNotThrown) {
  ProcessSpec spec;
  spec.argv = {"reduce-grade-no-such-program"};
  const ProcessResult r = run_process(spec);
  EXPECT_FALSE(r.started);
  EXPECT_TRUE(contains(r.describe(), "not started: program not found"));
}

TEST(Process, EnvironmentAndWorkingDirectory) {
  const fs::path dir = make_temp_dir("reduce-grade-test-");
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "echo $REDUCE_SEED; pwd"};
  spec.env = {{"REDUCE_SEED", "42"}};
  spec.cwd = dir;
  spec.log_file = dir / "log" / "run.log";
  const ProcessResult r = run_process(spec);
  EXPECT_TRUE(r.succeeded());
  EXPECT_TRUE(starts_with(r.output, "42\n"));
  EXPECT_TRUE(contains(r.output, dir.filename().string()));
  const std::string log = read_file(dir / "log" / "run.log");
  EXPECT_TRUE(contains(log, "42"));
  EXPECT_TRUE(contains(log, "exit 0"));
  remove_all_quietly(dir);
}

TEST(Process, InvalidUtf8AndControlCharactersAreSanitized) {
  const ProcessResult r = sh("printf 'ok\\377\\376\\001 end\\n'");
  EXPECT_EQ(r.output, "ok?? end\n");
  EXPECT_EQ(sanitize_text("caf\xc3\xa9"), "caf\xc3\xa9");  // valid UTF-8 is kept
}

TEST(Process, ByteSizes) {
  EXPECT_EQ(byte_size_text(4u << 20), "4 MiB");
  EXPECT_EQ(byte_size_text(65536), "64 KiB");
  EXPECT_EQ(byte_size_text(100), "100 bytes");
}

}  // namespace
}  // namespace reduce::grade
