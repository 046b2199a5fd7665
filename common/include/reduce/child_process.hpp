/// \file
/// \brief Starting a child process and waiting for it: one way for the grader (builds, checkers,
/// the benchmark, compute-sanitizer, nvidia-smi) and for the checker's side of the lab runner.
///
/// A child gets a process group of its own, stdin from /dev/null and one pipe for its stdout and
/// stderr together. Its output is drained while it runs: the first bytes up to a cap are kept,
/// the rest counted and dropped, and passing the cap may kill the group ("output flood"). At a
/// deadline the group gets SIGTERM, a grace, then SIGKILL; when the child ends, whatever is left
/// of its group is killed too, so nothing it started outlives it. Standard library and POSIX
/// only (no CUDA, no third-party library): the course's checkers link it as well as the grader.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace reduce {

/// What to start, and how.
struct ChildSpec {
  /// Program and arguments; a program name without '/' is looked up in this process's PATH.
  std::vector<std::string> argv;
  /// Environment variables set (or overridden) for the child on top of this process's own, or
  /// alone when clean_environment is set.
  std::vector<std::pair<std::string, std::string>> env;
  /// The child gets `env` alone, nothing of this process's environment.
  bool clean_environment = false;
  /// Working folder of the child (empty: this process's).
  std::string cwd;
  /// Address-space limit of the child and everything it starts (RLIMIT_AS; 0: none).
  std::size_t memory_limit_bytes = 0;
  /// Bytes of output kept, the first ones; later bytes are counted and dropped.
  std::size_t output_cap = std::size_t{8} << 20;
  /// Output beyond output_cap kills the process group at once (ChildEnd::flooded).
  bool cap_kills = true;
  /// Also keep the last this many bytes of output (tail()), for messages about a child that died.
  std::size_t tail_bytes = 0;
  /// Descriptors handed to the child: {descriptor here, number in the child} (above 2).
  std::vector<std::pair<int, int>> pass_fds;
  /// The child keeps no other descriptor of this process above 2 (else only those without
  /// FD_CLOEXEC reach it).
  bool close_other_fds = false;
};

/// How long ChildProcess::wait() waits, and what ends the wait early.
struct WaitLimits {
  /// On the steady clock: then the group gets SIGTERM, kill_grace_s, then SIGKILL.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  /// Seconds between SIGTERM and SIGKILL at the deadline (0: SIGKILL at once).
  double kill_grace_s = 2;
  /// After the child's own exit, seconds for which output is still read while something of its
  /// group holds the pipe open; then the group is killed.
  double drain_after_exit_s = 0.5;
  /// When set and it turns true, the group is killed at once (ChildEnd::cancelled).
  const std::atomic<bool>* cancel = nullptr;
};

/// How a child ended.
struct ChildEnd {
  int exit_code = -1;            ///< its exit status when it exited, else -1
  int signal = 0;                ///< the signal that ended it, else 0
  bool lost = false;             ///< reaped elsewhere: its exit status is unknown
  bool timed_out = false;        ///< still running at the deadline, then killed
  bool flooded = false;          ///< killed when its output passed the cap
  bool cancelled = false;        ///< killed when WaitLimits::cancel turned true
  std::size_t output_bytes = 0;  ///< every byte it wrote, kept or not
};

/// One started child, from its start to its reaping. Neither copied nor moved (a thread may
/// drain its output): hold it by pointer where it must change hands.
class ChildProcess {
 public:
  /// Starts \p spec; started() says whether it did, start_error() why not. Throws nothing for
  /// anything the child does.
  explicit ChildProcess(const ChildSpec& spec);
  /// Kills the group and reaps the child unless wait() or kill_and_wait() has.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// The child is running, or has run: it was found, forked and executed.
  bool started() const { return pid_ > 0; }
  /// Why it did not start: "empty command", "program not found: NAME", "cannot run PATH: ...".
  const std::string& start_error() const { return start_error_; }
  /// Its pid, which is also its process group (-1 when it did not start).
  pid_t pid() const { return pid_; }

  /// From now on a thread of its own drains the output (else wait() does, on the caller's
  /// thread): for a child that runs while the caller does other work.
  void drain_in_background();

  /// Waits for the child to end, draining its output, within \p limits; then kills what is left
  /// of its group and reaps it. A second call returns the first one's answer.
  ChildEnd wait(const WaitLimits& limits);
  /// Kills the whole group now (SIGKILL) and reaps the child.
  ChildEnd kill_and_wait();

  /// The output passed the cap (and the group was killed, when ChildSpec::cap_kills).
  bool flooded() const { return flooded_; }
  /// The output kept so far: at most ChildSpec::output_cap bytes, the first ones.
  std::string output() const;
  /// The last ChildSpec::tail_bytes bytes of output so far.
  std::string tail() const;
  /// Every byte of output read so far, kept or not.
  std::size_t output_bytes() const { return total_; }

 private:
  enum class Stop { kExited, kDeadline, kFlood, kCancel };
  void start(const ChildSpec& spec, const std::string& program);
  void read_output();
  void pump(int timeout_ms);
  void drain_until(std::chrono::steady_clock::time_point until);
  bool has_exited();
  Stop watch(const WaitLimits& limits);
  void end_drain();
  void reap();

  pid_t pid_ = -1;
  int output_fd_ = -1;
  int wake_fd_ = -1;  // wakes the draining thread when it must stop
  std::string start_error_;
  std::size_t cap_ = 0;
  std::size_t tail_cap_ = 0;
  bool cap_kills_ = true;
  mutable std::mutex mutex_;  // guards kept_ and tail_
  std::string kept_, tail_;
  std::atomic<std::size_t> total_{0};
  std::atomic<bool> flooded_{false}, output_open_{false}, stop_drain_{false};
  std::thread drainer_;
  bool done_ = false;  // reaped (or lost): end_ holds the answer
  ChildEnd end_;
};

/// The steady clock's time \p seconds from now (time_point::max() from 1e9 s up, infinity
/// included): a WaitLimits::deadline.
std::chrono::steady_clock::time_point deadline_in(double seconds);

/// Full path of \p program found in PATH (or the path itself when it contains '/' and is
/// executable); nullopt when not found.
std::optional<std::filesystem::path> find_program(const std::string& program);

/// While one lives, no ChildProcess is started or reaped; started_here() then says whether a
/// pid is a child that a ChildProcess started and has not reaped. A process that reaps orphans
/// (the grader) kills only the children it does not find here.
class ChildrenLock {
 public:
  ChildrenLock();
  /// \p pid is a child a ChildProcess started and has not reaped yet.
  bool started_here(pid_t pid) const;

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace reduce
