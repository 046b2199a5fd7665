// The grader's process runner: one child started by the course's process starter
// (reduce/child_process.hpp), its end told in the grader's words, its output sanitized and
// logged; and the clean-up of whatever a submission left behind.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/process.hpp>

#include <sys/prctl.h>

#include <cctype>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <cstring>

namespace reduce::grade {

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

namespace {

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
      // Checked again under the lock every start holds until its child is registered: a child of
      // a ChildProcess is known by now, or already reaped and gone (its pid not ours any more).
      const ChildrenLock started;
      for (pid_t pid : seen) {
        const ProcState state = proc_state(std::to_string(pid));
        if (started.started_here(pid) || state.parent != ::getpid()) continue;
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

ProcessResult run_process(const ProcessSpec& spec) {
  ProcessResult result;
  result.timeout_s = spec.timeout_s;
  result.output_cap = spec.output_cap;
  const double start = now_seconds();
  ChildSpec child_spec;
  child_spec.argv = spec.argv;
  child_spec.env = spec.env;
  child_spec.cwd = spec.cwd.string();
  child_spec.memory_limit_bytes = spec.memory_limit_bytes;
  child_spec.output_cap = spec.output_cap;
  ChildProcess child(child_spec);
  if (!child.started()) {
    result.start_error = child.start_error();
  } else {
    result.started = true;
    WaitLimits limits;
    limits.deadline = deadline_in(spec.timeout_s);
    limits.kill_grace_s = spec.kill_grace_s;
    limits.cancel = spec.cancel;
    const ChildEnd end = child.wait(limits);
    result.timed_out = end.timed_out;
    result.output_flood = end.flooded;
    result.cancelled = end.cancelled;
    // Killed by the grader, or reaped elsewhere: no exit status of its own to report.
    if (!end.timed_out && !end.flooded && !end.cancelled && !end.lost) {
      result.exit_code = end.exit_code;
      result.signal = end.signal;
    }
    result.output = sanitize_text(child.output());
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
