// LabRunner's runner process: the options it starts with, its start (by the course's process
// starter, reduce/child_process.hpp: a process group of its own, behind the sandbox and
// sanitizer the grader puts in front), and its stop, which may overlap the caller's next work
// (begin_stop, begin_repetition).
#include "lab_runner_parts.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#ifndef REDUCE_DEFAULT_RUNNER
#define REDUCE_DEFAULT_RUNNER "reduce_lab_runner"
#endif

namespace reduce::runner {

namespace {

std::atomic<int> g_process_starts{0};  // runners started by every LabRunner of this process

}  // namespace

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

void cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw RunnerError(std::string("checker: ") + what + ": " + cudaGetErrorString(status));
}

// ---- options ------------------------------------------------------------------------------

RunnerOptions RunnerOptions::from_launch(const launch::RunnerLaunch& launch) {
  RunnerOptions o;
  o.runner = REDUCE_DEFAULT_RUNNER;
  o.prefix = launch.prefix;
  for (const launch::RunnerLaunch::Repetition& repetition : launch.repetitions) {
    o.repetition_prefixes.push_back(repetition.prefix);
    o.repetition_reports.push_back(repetition.report);
  }
  if (launch.call_timeout_s > 0) o.call_timeout_s = launch.call_timeout_s;
  if (launch.exit_grace_s > 0) o.exit_grace_s = launch.exit_grace_s;
  return o;
}

// ---- the runner process ---------------------------------------------------------------------

LabRunner::LabRunner(RunnerOptions options) : options_(std::move(options)) {
  // No process of the same user may read or write this one's memory (ptrace, /proc/pid/mem):
  // the lab's process cannot reach the expected values, the clock or the verdicts here.
  prctl(PR_SET_DUMPABLE, 0);
}

LabRunner::~LabRunner() {
  try {
    stop();
  } catch (...) {
  }
}

namespace {

/// The options of LabRunner::of_process(), once configure_process() has given them.
std::optional<RunnerOptions>& process_options() {
  static std::optional<RunnerOptions> options;
  return options;
}

}  // namespace

void LabRunner::configure_process(RunnerOptions options) {
  process_options() = std::move(options);
}

LabRunner& LabRunner::of_process() {
  static LabRunner lab(process_options() ? *process_options() : RunnerOptions::from_launch({}));
  return lab;
}

namespace {

/// The runner's command line: the prefix (the sandbox, then a sanitizer, which starts inside
/// it) and the repetition's words, with %n as the runner's \p number (one sanitizer log per
/// runner), then the runner and every library.
std::vector<std::string> runner_command(const RunnerOptions& o, int repetition, int number) {
  std::vector<std::string> words = o.prefix;
  if (static_cast<std::size_t>(repetition) < o.repetition_prefixes.size()) {
    const std::vector<std::string>& more = o.repetition_prefixes[repetition];
    words.insert(words.end(), more.begin(), more.end());
  }
  for (std::string& w : words) {
    const auto at = w.find("%n");
    if (at != std::string::npos) w.replace(at, 2, std::to_string(number));
  }
  words.push_back(o.runner);
  words.insert(words.end(), o.libraries.begin(), o.libraries.end());
  return words;
}

/// Where the sanitizer's report of runner \p number goes (empty: no report pipe).
std::string report_path(const RunnerOptions& o, int repetition, int number) {
  std::string path;
  if (static_cast<std::size_t>(repetition) < o.repetition_reports.size())
    path = o.repetition_reports[repetition];
  if (const auto at = path.find("%n"); at != std::string::npos)
    path.replace(at, 2, std::to_string(number));
  return path;
}

/// The runner's environment: kRunnerEnvironment alone.
std::vector<std::pair<std::string, std::string>> runner_environment() {
  std::vector<std::pair<std::string, std::string>> env;
  for (const char* name : kRunnerEnvironment)
    if (const char* v = std::getenv(name)) env.emplace_back(name, v);
  return env;
}

/// What a runner starts with: the socket on kRunnerSocketFd, the report pipe (if any) on
/// kSanitizerLogFd and nothing else of the checker's; its output kept to the cap, the last
/// bytes for messages.
ChildSpec runner_spec(const RunnerOptions& o, std::vector<std::string> words, int socket,
                      int report) {
  ChildSpec spec;
  spec.argv = std::move(words);
  spec.env = runner_environment();
  spec.clean_environment = true;
  spec.output_cap = o.output_cap;
  spec.tail_bytes = 4096;
  spec.pass_fds = {{socket, kRunnerSocketFd}};
  if (report >= 0) spec.pass_fds.emplace_back(report, kSanitizerLogFd);
  spec.close_other_fds = true;
  return spec;
}

}  // namespace

void LabRunner::start() {
  if (options_.libraries.empty())
    throw RunnerError("checker: no lab library given (--lab=LIBRARY)");
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw RunnerError(std::string("checker: cannot create the runner's channels: ") +
                      std::strerror(errno));
  // A sanitizer in front of the runner writes its report into a pipe of this process
  // (--log-file /dev/fd/5), drained into the grader's logs: the lab neither holds the pipe (the
  // runner closes its copies) nor sees the log.
  const std::string report_to = report_path(options_, repetition_, starts_ + 1);
  int report[2] = {-1, -1};
  if (!report_to.empty() && ::pipe2(report, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    throw RunnerError(std::string("checker: cannot create the sanitizer's report pipe: ") +
                      std::strerror(e));
  }
  auto child = std::make_unique<ChildProcess>(
      runner_spec(options_, runner_command(options_, repetition_, starts_ + 1), sv[1], report[1]));
  ::close(sv[1]);
  if (report[1] >= 0) ::close(report[1]);
  if (!child->started()) {
    ::close(sv[0]);
    if (report[0] >= 0) ::close(report[0]);
    throw RunnerError("checker: cannot start the lab's process: " + child->start_error());
  }
  child->drain_in_background();  // the lab may print while this process waits on the socket
  child_ = std::move(child);
  socket_ = sv[0];
  if (report[0] >= 0)
    report_ = std::make_unique<ReportDrain>(report[0], report_to, options_.output_cap);
  ++starts_;
  ++g_process_starts;
  std::fprintf(stderr, "%s%d\n", kLabProcessLine, starts_);
  started_ms_ = now_ms();
  first_reply_due_ = true;
}

int LabRunner::process_starts() {
  return g_process_starts;
}

void LabRunner::use_library(std::size_t index) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (index >= options_.libraries.size())
    throw RunnerError("checker: no lab library " + std::to_string(index));
  library_ = static_cast<std::uint32_t>(index);
}

void LabRunner::start_early() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!child_) start();
}

void LabRunner::begin_repetition(int repetition) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (repetition == repetition_) return;
  park_runner();  // its exit (a sanitizer writing its report) overlaps the next runner's start
  repetition_ = repetition;
}

void LabRunner::park_runner() {
  begin_stop();
  if (!child_) return;
  auto exiting = std::make_unique<Exiting>();
  // The grace counts from begin_stop(): a runner told to exit earlier has had part of it.
  exiting->deadline_ms = stop_begun_ms_ + options_.exit_grace_s * 1e3;
  exiting->child = std::move(child_);
  exiting->report = std::move(report_);
  exiting->retired = std::move(retired_);
  retired_.clear();
  exiting_.push_back(std::move(exiting));
}

void LabRunner::begin_stop() {
  for (void* p : timed_inputs_) cudaIpcCloseMemHandle(p);
  timed_inputs_.clear();
  timed_bytes_ = 0;  // the runner's memory goes with it
  if (timed_offsets_ != nullptr) cudaIpcCloseMemHandle(timed_offsets_);
  timed_offsets_ = nullptr;
  if (socket_ < 0) return;
  ::close(socket_);  // the runner reads end-of-file and exits
  socket_ = -1;
  stop_begun_ms_ = now_ms();
}

void LabRunner::stop() {
  park_runner();
  for (const std::unique_ptr<Exiting>& e : exiting_) {
    // Told to exit by its socket's end: past its grace, the runner and anything it started in
    // its group are killed at once.
    WaitLimits limits;
    limits.deadline = deadline_in((e->deadline_ms - now_ms()) * 1e-3);
    limits.kill_grace_s = 0;
    limits.drain_after_exit_s = 0;
    e->child->wait(limits);
  }
  exiting_.clear();  // frees their outgrown workspaces: no process maps them any more
  retired_.clear();
}

void LabRunner::fail(const std::string& what) {
  std::string text = what;
  const std::string printed = child_ ? child_->tail() : std::string();
  stop();
  if (!printed.empty()) text += "\nthe lab's process printed (last lines):\n" + printed;
  throw RunnerError(text);
}

}  // namespace reduce::runner
