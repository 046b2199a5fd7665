// The one process starter (reduce/child_process.hpp): fork and exec into a new process group
// with one pipe for stdout and stderr, drain that pipe while waiting, and kill the whole group
// at the deadline (SIGTERM, a grace, SIGKILL), on an output flood, or once the child has ended.
#include <reduce/child_process.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char** environ;

namespace reduce {
namespace {

using Clock = std::chrono::steady_clock;

/// After the group is killed, how long its output is still read (until every writer is gone).
constexpr double kDrainAfterKillS = 0.5;

std::mutex g_children_mutex;
std::set<pid_t> g_children;  // started by a ChildProcess, not reaped yet

/// Milliseconds from now to \p until (at least 0, at most \p most).
int ms_until(Clock::time_point until, int most) {
  const auto now = Clock::now();
  if (until <= now) return 0;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
  return static_cast<int>(std::min<long long>(left + 1, most));
}

/// "KEY=VALUE" strings: this process's environment (unless \p clean) with \p overrides applied,
/// in the order the variables first appear.
std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& overrides, bool clean) {
  std::map<std::string, std::string> vars;
  std::vector<std::string> order;
  for (char** e = clean ? nullptr : environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = entry.substr(0, eq);
    if (vars.emplace(key, entry.substr(eq + 1)).second) order.push_back(key);
  }
  for (const auto& [key, value] : overrides) {
    if (vars.find(key) == vars.end()) order.push_back(key);
    vars[key] = value;
  }
  std::vector<std::string> env;
  env.reserve(order.size());
  for (const std::string& key : order) env.push_back(key + "=" + vars[key]);
  return env;
}

std::vector<char*> c_strings(const std::vector<std::string>& words) {
  std::vector<char*> list;
  list.reserve(words.size() + 1);
  for (const std::string& w : words) list.push_back(const_cast<char*>(w.c_str()));
  list.push_back(nullptr);
  return list;
}

/// Everything the forked child needs, prepared before the fork: after it only async-signal-safe
/// calls are made (the parent may run threads, and a lock one of them held stays held).
struct Plan {
  const char* program = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;  // nullptr: stay
  rlim_t memory = 0;
  int output = -1;  // the pipe's write end
  int report = -1;  // where an exec failure's errno goes (closed on exec)
  const std::pair<int, int>* passes = nullptr;
  int* moved = nullptr;  // one slot per pass
  std::size_t pass_count = 0;
  int high = 3;  // above every descriptor the child is to hold
  bool close_others = false;
};

/// Marks every descriptor above 2 close-on-exec.
void cloexec_all() {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
#endif
  for (int fd = 3; fd < 1024; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

[[noreturn]] void exec_child(const Plan& plan) {
  ::setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  // Every descriptor to keep first moves above every number it may go to, so that no dup2()
  // below closes another one's source.
  int output = ::fcntl(plan.output, F_DUPFD_CLOEXEC, plan.high);
  if (output < 0) output = plan.output;
  int report = ::fcntl(plan.report, F_DUPFD_CLOEXEC, plan.high);
  if (report < 0) report = plan.report;
  for (std::size_t i = 0; i < plan.pass_count; ++i) {
    plan.moved[i] = ::fcntl(plan.passes[i].first, F_DUPFD_CLOEXEC, plan.high);
    if (plan.moved[i] < 0) plan.moved[i] = plan.passes[i].first;
  }
  if (plan.close_others) cloexec_all();
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  ::dup2(output, STDOUT_FILENO);
  ::dup2(output, STDERR_FILENO);
  for (std::size_t i = 0; i < plan.pass_count; ++i) ::dup2(plan.moved[i], plan.passes[i].second);
  if (plan.memory > 0) {
    const struct rlimit limit{plan.memory, plan.memory};
    ::setrlimit(RLIMIT_AS, &limit);
  }
  if (plan.cwd == nullptr || ::chdir(plan.cwd) == 0) ::execve(plan.program, plan.argv, plan.envp);
  const int e = errno;
  (void)!::write(report, &e, sizeof e);
  ::_exit(127);
}

void forget_child(pid_t pid) {
  const std::lock_guard<std::mutex> lock(g_children_mutex);
  g_children.erase(pid);
}

}  // namespace

std::chrono::steady_clock::time_point deadline_in(double seconds) {
  if (!(seconds < 1e9)) return Clock::time_point::max();  // never, in effect (inf, NaN)
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(std::max(0.0, seconds)));
}

std::optional<std::filesystem::path> find_program(const std::string& program) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), X_OK) == 0) return std::filesystem::path(program);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t from = 0; from <= dirs.size();) {
    std::size_t to = dirs.find(':', from);
    if (to == std::string::npos) to = dirs.size();
    if (to > from) {
      const std::filesystem::path candidate =
          std::filesystem::path(dirs.substr(from, to - from)) / program;
      struct stat st{};
      if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
          ::access(candidate.c_str(), X_OK) == 0)
        return candidate;
    }
    from = to + 1;
  }
  return std::nullopt;
}

ChildrenLock::ChildrenLock() : lock_(g_children_mutex) {}

bool ChildrenLock::started_here(pid_t pid) const {
  return g_children.count(pid) > 0;
}

ChildProcess::ChildProcess(const ChildSpec& spec)
    : cap_(spec.output_cap), tail_cap_(spec.tail_bytes), cap_kills_(spec.cap_kills) {
  if (spec.argv.empty()) {
    start_error_ = "empty command";
    return;
  }
  const std::optional<std::filesystem::path> program = find_program(spec.argv[0]);
  if (!program) {
    start_error_ = "program not found: " + spec.argv[0];
    return;
  }
  start(spec, program->string());
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !done_) kill_and_wait();
  end_drain();
}

void ChildProcess::start(const ChildSpec& spec, const std::string& program) {
  const std::vector<std::string> env = child_environment(spec.env, spec.clean_environment);
  const std::vector<char*> argv = c_strings(spec.argv), envp = c_strings(env);
  std::vector<int> moved(spec.pass_fds.size(), -1);
  Plan plan;
  plan.program = program.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  plan.memory = static_cast<rlim_t>(spec.memory_limit_bytes);
  plan.passes = spec.pass_fds.data();
  plan.moved = moved.data();
  plan.pass_count = spec.pass_fds.size();
  for (const auto& pass : spec.pass_fds) plan.high = std::max(plan.high, pass.second + 1);
  plan.close_others = spec.close_other_fds;

  int out[2], report[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    start_error_ = std::string("pipe: ") + std::strerror(errno);
    return;
  }
  if (::pipe2(report, O_CLOEXEC) != 0) {
    start_error_ = std::string("pipe: ") + std::strerror(errno);
    ::close(out[0]);
    ::close(out[1]);
    return;
  }
  plan.output = out[1];
  plan.report = report[1];
  // Forked and registered under the lock: a ChildrenLock never sees a child of ours unknown.
  std::unique_lock<std::mutex> forking(g_children_mutex);
  const pid_t pid = ::fork();
  const int fork_errno = errno;
  if (pid == 0) exec_child(plan);
  if (pid > 0) {
    ::setpgid(pid, pid);  // also in the parent: kill(-pid) can follow at once
    g_children.insert(pid);
  }
  forking.unlock();
  ::close(out[1]);
  ::close(report[1]);
  if (pid < 0) {
    ::close(out[0]);
    ::close(report[0]);
    start_error_ = std::string("fork: ") + std::strerror(fork_errno);
    return;
  }
  int child_errno = 0;
  ssize_t got = 0;
  while ((got = ::read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof child_errno)) {  // it never executed the program
    ::close(out[0]);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    forget_child(pid);
    start_error_ = "cannot run " + program + ": " + std::strerror(child_errno);
    return;
  }
  ::fcntl(out[0], F_SETFL, ::fcntl(out[0], F_GETFL) | O_NONBLOCK);
  output_fd_ = out[0];
  output_open_ = true;
  pid_ = pid;
}

void ChildProcess::drain_in_background() {
  if (pid_ <= 0 || done_ || drainer_.joinable()) return;
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
  drainer_ = std::thread([this] {
    while (!stop_drain_ && output_open_) {
      pollfd p[2] = {{output_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      // Without a wake-up descriptor, stop_drain_ is looked at every 100 ms.
      if (::poll(p, wake_fd_ >= 0 ? 2 : 1, wake_fd_ >= 0 ? -1 : 100) > 0 && p[0].revents != 0)
        read_output();
    }
  });
}

void ChildProcess::read_output() {
  char buffer[65536];
  // A bounded round: a child that writes without pause must not keep the waiter from its clock.
  for (int round = 0; round < 64; ++round) {
    const ssize_t n = ::read(output_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0 || errno != EAGAIN) output_open_ = false;  // every writer closed the pipe
      return;
    }
    const std::size_t got = static_cast<std::size_t>(n);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      kept_.append(buffer, std::min(got, cap_ - std::min(cap_, kept_.size())));
      if (tail_cap_ > 0) {
        tail_.append(buffer, got);
        if (tail_.size() > 2 * tail_cap_) tail_.erase(0, tail_.size() - tail_cap_);
      }
    }
    if ((total_ += got) > cap_ && !flooded_.exchange(true) && cap_kills_) ::kill(-pid_, SIGKILL);
  }
}

void ChildProcess::pump(int timeout_ms) {
  if (drainer_.joinable() || !output_open_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return;
  }
  pollfd p{output_fd_, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) > 0) read_output();
}

void ChildProcess::drain_until(Clock::time_point until) {
  while (output_open_ && Clock::now() < until) pump(ms_until(until, drainer_.joinable() ? 1 : 50));
}

bool ChildProcess::has_exited() {
  for (;;) {
    siginfo_t info{};
    // WNOWAIT: the child stays a zombie, so its pid (its group's id) is not reused before the
    // group is killed.
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0)
      return info.si_pid == pid_;
    if (errno == EINTR) continue;
    if (errno == ECHILD) end_.lost = true;  // reaped elsewhere: its exit status is unknown
    return true;
  }
}

ChildProcess::Stop ChildProcess::watch(const WaitLimits& limits) {
  int idle_ms = 1;  // sleeps grow while nothing is read, so a short child costs little wait
  for (;;) {
    if (cap_kills_ && flooded_) return Stop::kFlood;
    if (has_exited()) return Stop::kExited;
    if (limits.cancel != nullptr && limits.cancel->load()) return Stop::kCancel;
    if (Clock::now() >= limits.deadline) return Stop::kDeadline;
    const bool polling = output_open_ && !drainer_.joinable();
    pump(ms_until(limits.deadline, polling ? 50 : idle_ms));
    idle_ms = std::min(idle_ms * 2, 20);
  }
}

ChildEnd ChildProcess::wait(const WaitLimits& limits) {
  if (pid_ <= 0 || done_) return end_;
  switch (watch(limits)) {
    case Stop::kDeadline:
      end_.timed_out = true;
      if (limits.kill_grace_s > 0) {
        ::kill(-pid_, SIGTERM);
        WaitLimits grace;
        grace.deadline = deadline_in(limits.kill_grace_s);
        (void)watch(grace);  // its exit, or the grace's end
      }
      break;
    case Stop::kFlood:
      end_.flooded = true;
      break;
    case Stop::kCancel:
      end_.cancelled = true;
      break;
    case Stop::kExited:
      drain_until(deadline_in(limits.drain_after_exit_s));
      break;
  }
  return kill_and_wait();
}

ChildEnd ChildProcess::kill_and_wait() {
  if (pid_ <= 0 || done_) return end_;
  ::kill(-pid_, SIGKILL);  // whatever is left of the group, the child included
  drain_until(deadline_in(kDrainAfterKillS));
  end_drain();
  reap();
  return end_;
}

void ChildProcess::end_drain() {
  if (drainer_.joinable()) {
    stop_drain_ = true;
    const std::uint64_t one = 1;
    if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof one);
    drainer_.join();
  }
  for (int* fd : {&output_fd_, &wake_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  output_open_ = false;
}

void ChildProcess::reap() {
  int status = 0;
  while (!end_.lost && ::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) end_.lost = true;
  }
  if (!end_.lost && WIFEXITED(status)) end_.exit_code = WEXITSTATUS(status);
  if (!end_.lost && WIFSIGNALED(status)) end_.signal = WTERMSIG(status);
  end_.output_bytes = total_;
  forget_child(pid_);
  done_ = true;
}

std::string ChildProcess::output() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return kept_;
}

std::string ChildProcess::tail() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return tail_.size() > tail_cap_ ? tail_.substr(tail_.size() - tail_cap_) : tail_;
}

}  // namespace reduce
