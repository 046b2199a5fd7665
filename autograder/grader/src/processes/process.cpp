// The process runner: fork/exec into a new process group, one pipe for stdout+stderr, poll()
// with a deadline, kill the group on expiry or on an output flood, decode how it ended.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/process.hpp>

#include <sys/prctl.h>

#include <cctype>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>

extern char** environ;

namespace reduce::grade {
namespace {

/// Builds "KEY=VALUE" strings from the grader's environment with \p overrides applied.
std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::map<std::string, std::string> vars;
  std::vector<std::string> order;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
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

void kill_group(pid_t pgid) {
  if (pgid > 0) ::kill(-pgid, SIGKILL);
}

}  // namespace

std::string byte_size_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (std::size_t{1} << 20)) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

std::string signal_description(int signal) {
  static const std::map<int, const char*> names = {
      {SIGSEGV, "SIGSEGV (segmentation fault)"},
      {SIGABRT, "SIGABRT (abort: an uncaught exception or a failed assertion)"},
      {SIGBUS, "SIGBUS (bus error)"},
      {SIGFPE, "SIGFPE (arithmetic exception)"},
      {SIGILL, "SIGILL (illegal instruction)"},
      {SIGKILL, "SIGKILL (killed)"},
      {SIGTERM, "SIGTERM (terminated)"},
      {SIGINT, "SIGINT (interrupted)"},
      {SIGPIPE, "SIGPIPE (broken pipe)"},
      {SIGXCPU, "SIGXCPU (CPU time limit)"},
      {SIGTRAP, "SIGTRAP (trap)"},
  };
  const auto it = names.find(signal);
  if (it != names.end()) return it->second;
  const char* text = ::strsignal(signal);
  return fmt::format("signal {} ({})", signal, text != nullptr ? text : "unknown");
}

std::string ProcessResult::describe() const {
  if (!started) return "not started: " + start_error;
  if (timed_out) return fmt::format("timed out after {} s (killed)", points_text(timeout_s));
  if (cancelled) return "cancelled: its result was no longer wanted (killed)";
  if (output_flood)
    return fmt::format("output flood: more than {} of output (killed)", byte_size_text(output_cap));
  if (signal != 0) return "killed by " + signal_description(signal);
  return fmt::format("exit {}", exit_code);
}

std::optional<std::filesystem::path> find_program(const std::string& program) {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), X_OK) == 0) return std::filesystem::path(program);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  for (const std::string& dir :
       split(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin", ":")) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / program;
    struct stat st{};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return std::nullopt;
}

namespace {

std::mutex g_live_mutex;
std::set<pid_t> g_live;  // children run_process() is waiting for

/// Registers a child for the time run_process() waits for it. The fork happens under
/// g_live_mutex (held by the caller) and the child is registered before it is released, so that
/// kill_stray_processes() on another thread never takes a child just started for a stray.
struct LiveChild {
  pid_t pid;
  explicit LiveChild(pid_t p) : pid(p) { g_live.insert(p); }  // g_live_mutex held by the caller
  LiveChild(const LiveChild&) = delete;
  LiveChild& operator=(const LiveChild&) = delete;
  ~LiveChild() {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    g_live.erase(pid);
  }
};

/// The parent of \p pid from /proc/PID/stat, or -1 when it is gone.
/// What /proc says of process \p pid: its state ('R', 'S', 'Z'...; 0 when unreadable) and parent
/// (-1 when unreadable).
struct ProcState {
  char state = 0;
  pid_t parent = -1;
};

ProcState proc_state(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  ProcState found;
  if (!std::getline(stat, line)) return found;
  const auto close = line.rfind(')');  // the command may hold spaces and parentheses
  if (close == std::string::npos) return found;
  std::istringstream rest(line.substr(close + 2));
  rest >> found.state >> found.parent;
  return found;
}

pid_t parent_of(const std::string& pid) {
  return proc_state(pid).parent;
}

/// The pids of this process's children, as /proc lists them now.
std::vector<pid_t> children() {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    if (parent_of(name) == ::getpid()) found.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return found;
}

}  // namespace

bool become_subreaper() {
  return ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
}

int kill_stray_processes() {
  // One killer at a time: a stray is reaped only here, so a pid read below cannot be reaped and
  // reused by a new child before this round waits for it.
  static std::mutex killing;
  const std::lock_guard<std::mutex> one_at_a_time(killing);
  int killed = 0;
  for (int round = 0; round < 20; ++round) {
    std::vector<pid_t> strays, ended;
    const std::vector<pid_t> seen = children();
    {
      // Checked again under the lock every fork holds until its child is registered: a child of
      // run_process is in g_live by now, or already reaped and gone (its pid not ours any more).
      std::lock_guard<std::mutex> lock(g_live_mutex);
      for (pid_t pid : seen) {
        const ProcState state = proc_state(std::to_string(pid));
        if (g_live.count(pid) > 0 || state.parent != ::getpid()) continue;
        // A process that already ended (a sandbox's own helper, reparented to this subreaper) is
        // reaped but was not left running.
        if (state.state == 'Z') {
          ended.push_back(pid);
          continue;
        }
        ::kill(pid, SIGKILL);  // killed children reparent theirs to us: the next round finds them
        strays.push_back(pid);
      }
    }
    for (pid_t pid : ended) ::waitpid(pid, nullptr, 0);
    for (pid_t pid : strays) ::waitpid(pid, nullptr, 0);
    if (strays.empty() && ended.empty()) break;
    killed += static_cast<int>(strays.size());
  }
  return killed;
}

namespace {

/// A started child: its pid (registered in g_live for as long as this lives) and the read end
/// of its output pipe.
struct Child {
  pid_t pid = -1;
  int output = -1;
  std::unique_ptr<LiveChild> live;  ///< moves with the child; never copied
};

/// Forks and executes \p spec's command with its output on a pipe; on failure returns nullopt
/// with \p error set.
std::optional<Child> start_child(const ProcessSpec& spec, const std::string& program,
                                 std::string& error) {
  // Everything the child needs is prepared before fork(): after it, only async-signal-safe
  // calls (the grader may run threads).
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::vector<std::string> env_strings = child_environment(spec.env);
  std::vector<char*> envp;
  for (const std::string& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string cwd = spec.cwd.string();

  int out_pipe[2];
  int err_pipe[2];  // reports an exec failure (errno) from the child; closed on exec
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    error = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::unique_lock<std::mutex> forking(g_live_mutex);
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    error = std::string("fork: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(out_pipe[1], STDERR_FILENO);
    // Default signal dispositions and mask for the child.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (spec.memory_limit_bytes > 0) {
      const struct rlimit limit{spec.memory_limit_bytes, spec.memory_limit_bytes};
      ::setrlimit(RLIMIT_AS, &limit);
    }
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
      const int e = errno;
      (void)!::write(err_pipe[1], &e, sizeof e);
      ::_exit(127);
    }
    ::execve(program.c_str(), argv.data(), envp.data());
    const int e = errno;
    (void)!::write(err_pipe[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also in the parent: no race with kill(-pid) later
  Child child;
  child.pid = pid;
  child.live = std::make_unique<LiveChild>(pid);
  forking.unlock();
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  int child_errno = 0;
  const ssize_t got = ::read(err_pipe[0], &child_errno, sizeof child_errno);
  ::close(err_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof child_errno)) {
    ::close(out_pipe[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    error = fmt::format("cannot run {}: {}", program, std::strerror(child_errno));
    return std::nullopt;
  }
  ::fcntl(out_pipe[0], F_SETFL, ::fcntl(out_pipe[0], F_GETFL) | O_NONBLOCK);
  child.output = out_pipe[0];
  return child;
}

/// Reads the child's output until it exits and its pipe closes, its time limit passes, or its
/// output passes the cap; then kills its group and reaps it into \p result.
void wait_for(Child& child, const ProcessSpec& spec, double start, ProcessResult& result) {
  const double deadline = start + spec.timeout_s;
  bool reaped = false, lost = false;
  int status = 0;
  bool open = true;
  double drain_until = 0;  // after the child exits, read what is left for a moment
  char buffer[65536];
  while (true) {
    if (!reaped) {
      const pid_t w = ::waitpid(child.pid, &status, WNOHANG);
      if (w == child.pid || (w < 0 && errno == ECHILD)) {
        lost = w != child.pid;  // reaped elsewhere: its exit status is unknown
        reaped = true;
        drain_until = now_seconds() + 0.5;
      }
    }
    if (!open) {
      if (reaped) break;
    } else {
      struct pollfd pfd{child.output, POLLIN, 0};
      if (::poll(&pfd, 1, reaped ? 20 : 50) > 0) {
        while (true) {
          const ssize_t n = ::read(child.output, buffer, sizeof buffer);
          if (n > 0) {
            const std::size_t room =
                spec.output_cap - std::min(spec.output_cap, result.output.size());
            result.output.append(buffer, std::min<std::size_t>(room, static_cast<std::size_t>(n)));
            if (static_cast<std::size_t>(n) > room) {
              result.output_flood = true;
              break;
            }
            continue;
          }
          if (n == 0) open = false;  // every writer closed the pipe
          break;                     // EAGAIN or error: wait for more
        }
      }
      if (result.output_flood) break;
    }
    if (reaped && (!open || now_seconds() > drain_until)) break;
    if (!reaped && now_seconds() > deadline) {
      result.timed_out = true;
      break;
    }
    if (!reaped && spec.cancel != nullptr && spec.cancel->load()) {
      result.cancelled = true;
      break;
    }
  }
  kill_group(child.pid);  // the child's leftovers, or the child itself on timeout or flood
  ::close(child.output);
  if (!reaped) {
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (result.timed_out || result.output_flood || result.cancelled || lost) {
    result.exit_code = -1;
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
}

}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  ProcessResult result;
  result.timeout_s = spec.timeout_s;
  result.output_cap = spec.output_cap;
  const double start = now_seconds();
  const auto program = spec.argv.empty() ? std::nullopt : find_program(spec.argv[0]);
  if (spec.argv.empty()) {
    result.start_error = "empty command";
  } else if (!program) {
    result.start_error = "program not found: " + spec.argv[0];
  } else if (std::optional<Child> child =
                 start_child(spec, program->string(), result.start_error)) {
    result.started = true;
    wait_for(*child, spec, start, result);
    result.output = sanitize_text(result.output);
  }
  result.seconds = now_seconds() - start;
  if (!spec.log_file.empty()) {
    std::string log = result.output;
    log += fmt::format("\n[reduce-grade] {}: {} ({:.1f} s)\n",
                       spec.argv.empty() ? "" : spec.argv[0], result.describe(), result.seconds);
    try {
      write_file(spec.log_file, log);
    } catch (const std::exception&) {
    }
  }
  return result;
}

}  // namespace reduce::grade
