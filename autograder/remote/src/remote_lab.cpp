#include <reduce_remote/remote_lab.hpp>
#include <reduce_remote/walls.hpp>

#include <cuda.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>

#ifndef REDUCE_DEFAULT_RUNNER
#define REDUCE_DEFAULT_RUNNER "reduce_lab_runner"
#endif

namespace reduce::remote {

namespace {

std::atomic<int> g_process_starts{0};  // runners started by every RemoteLab of this process

constexpr unsigned char kGuardByte = 0xA5;
constexpr std::size_t kFrontGuard = 256;  // before the result slot; keeps it 256-byte aligned

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

void cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw RunnerError(std::string("checker: ") + what + ": " + cudaGetErrorString(status));
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == kWallSignal)  // the runner's seccomp filter (walls.hpp)
      return "killed by signal " + std::to_string(sig) + ": " + kForbiddenCallMark +
             " (a new process, exec, a signal to another process, ptrace or a namespace change), "
             "which the sandbox stops; flagged for review";
    return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

}  // namespace

// ---- guarded buffers ----------------------------------------------------------------------

/// A checker-owned allocation: [front guard][the lab's bytes][guard]. Guards are armed before a
/// request and compared afterwards.
struct RemoteLab::Guarded {
  char* base = nullptr;
  std::size_t capacity = 0;
  std::size_t front = 0;   // guard bytes before the lab's pointer
  std::size_t usable = 0;  // the lab's bytes in the current request

  Guarded(std::size_t bytes, std::size_t front_guard) : front(front_guard) {
    // Room to grow, so that a larger n seldom needs a new buffer (and a new runner).
    capacity = front + std::max(2 * bytes, std::size_t{1} << 20) + kGuardBytes;
    cuda(cudaMalloc(&base, capacity), "allocating a guarded buffer");
  }
  ~Guarded() { cudaFree(base); }
  char* lab_ptr() const { return base + front; }
  bool fits(std::size_t bytes) const { return front + bytes + kGuardBytes <= capacity; }

  void arm(std::size_t bytes) {
    usable = bytes;
    cuda(cudaMemset(base, kGuardByte, front + usable + kGuardBytes), "arming guards");
  }

  /// Offset (from the lab's pointer) of the first changed guard byte, or 0 if intact; \p before
  /// tells whether it lies before the lab's pointer.
  long long first_change(bool& before) const {
    // Only the guards cross to the host: the lab's bytes between them can be tens of megabytes
    // (a segmented call's results), and copying them took longer than the call.
    std::vector<unsigned char> head(front), tail(kGuardBytes);
    if (front > 0)
      cuda(cudaMemcpy(head.data(), base, front, cudaMemcpyDeviceToHost), "reading guards");
    cuda(cudaMemcpy(tail.data(), base + front + usable, kGuardBytes, cudaMemcpyDeviceToHost),
         "reading guards");
    for (std::size_t i = 0; i < front; ++i)
      if (head[i] != kGuardByte) {
        before = true;
        return static_cast<long long>(front - i);
      }
    for (std::size_t i = 0; i < kGuardBytes; ++i)
      if (tail[i] != kGuardByte) {
        before = false;
        return static_cast<long long>(i) + 1;
      }
    return 0;
  }
};

// ---- the runner's output -----------------------------------------------------------------

/// Drains the runner's stdout and stderr: keeps the last bytes for messages, and kills the
/// runner's process group when it prints more than the cap.
struct RemoteLab::Output {
  int fd = -1;
  pid_t group = -1;
  std::size_t cap = 0;
  std::atomic<bool> stop{false}, flood{false};
  std::atomic<std::size_t> total{0};
  std::mutex mutex;
  std::string tail;
  std::thread thread;

  Output(int pipe_fd, pid_t pgid, std::size_t output_cap)
      : fd(pipe_fd), group(pgid), cap(output_cap) {
    thread = std::thread([this] { drain(); });
  }
  ~Output() {
    stop = true;
    if (thread.joinable()) thread.join();
    ::close(fd);
  }
  void drain() {
    char buffer[16384];
    while (!stop) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t got = ::read(fd, buffer, sizeof buffer);
      if (got <= 0) {
        if (got < 0 && errno == EINTR) continue;
        return;  // every writer is gone
      }
      total += static_cast<std::size_t>(got);
      {
        std::lock_guard<std::mutex> lock(mutex);
        tail.append(buffer, static_cast<std::size_t>(got));
        if (tail.size() > 4096) tail.erase(0, tail.size() - 4096);
      }
      if (total > cap && !flood) {
        flood = true;
        ::kill(-group, SIGKILL);
      }
    }
  }
  std::string last_lines() {
    std::lock_guard<std::mutex> lock(mutex);
    return tail;
  }
};

/// Drains a sanitizer's report pipe (kSanitizerLogFd in the runner's sandbox) into a log file
/// of the grader's, which no process of the lab's sandbox can see. Ends at end-of-file: when
/// the sanitizer in front of the runner has written its summary and exited.
struct RemoteLab::ReportDrain {
  int fd = -1;
  std::thread thread;

  ReportDrain(int pipe_fd, const std::string& path, std::size_t cap) : fd(pipe_fd) {
    thread = std::thread([this, path, cap] {
      std::FILE* log = std::fopen(path.c_str(), "w");
      std::size_t total = 0;
      char buffer[16384];
      for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        const std::size_t keep = total >= cap ? 0 : std::min<std::size_t>(got, cap - total);
        total += static_cast<std::size_t>(got);
        if (log != nullptr && keep > 0) std::fwrite(buffer, 1, keep, log);
      }
      if (log != nullptr) std::fclose(log);
    });
  }
  ~ReportDrain() {
    if (thread.joinable()) thread.join();
    ::close(fd);
  }
};

// ---- options ------------------------------------------------------------------------------

RunnerOptions RunnerOptions::from_environment() {
  RunnerOptions o;

  o.runner = env_or("REDUCE_LAB_RUNNER", REDUCE_DEFAULT_RUNNER);
  const auto split = [](const std::string& text, char separator) {
    std::vector<std::string> out;
    std::string word;
    for (char c : text) {
      if (c == separator) {
        if (!word.empty()) out.push_back(word);
        word.clear();
      } else {
        word += c;
      }
    }
    if (!word.empty()) out.push_back(word);
    return out;
  };
  if (std::string library = env_or("REDUCE_LAB_LIBRARY", ""); !library.empty())
    o.libraries.push_back(std::move(library));
  for (std::string& library : split(env_or("REDUCE_LAB_LIBRARIES", ""), '\x1f'))
    o.libraries.push_back(std::move(library));
  o.prefix = split(env_or("REDUCE_RUNNER_PREFIX", ""), '\x1f');
  for (const std::string& list : split(env_or("REDUCE_RUNNER_REPETITION_PREFIXES", ""), '\x1e'))
    o.repetition_prefixes.push_back(split(list, '\x1f'));
  o.repetition_reports = split(env_or("REDUCE_RUNNER_REPETITION_REPORTS", ""), '\x1e');
  // Numbers never throw: one that does not read, or lies outside its range, keeps the default.
  const auto seconds = [](const char* name, double fallback, double most) {
    const std::string text = env_or(name, "");
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool ok = !text.empty() && error == std::errc() && end == text.data() + text.size() &&
                    std::isfinite(value) && value >= 0 && value <= most;
    return ok ? value : fallback;
  };
  o.call_timeout_s = seconds("REDUCE_CALL_TIMEOUT_S", o.call_timeout_s, 7 * 24 * 3600.0);
  o.exit_grace_s = seconds("REDUCE_RUNNER_EXIT_GRACE_S", o.exit_grace_s, 3600.0);
  const std::string cap = env_or("REDUCE_RUNNER_OUTPUT_CAP", "");
  std::size_t bytes = 0;
  const auto [end, error] = std::from_chars(cap.data(), cap.data() + cap.size(), bytes);
  if (!cap.empty() && error == std::errc() && end == cap.data() + cap.size() && bytes > 0)
    o.output_cap = bytes;
  return o;
}

// ---- the runner process ---------------------------------------------------------------------

RemoteLab::RemoteLab(RunnerOptions options) : options_(std::move(options)) {
  // No process of the same user may read or write this one's memory (ptrace, /proc/pid/mem):
  // the lab's process cannot reach the expected values, the clock or the verdicts here.
  prctl(PR_SET_DUMPABLE, 0);
}

/// A runner told to exit, with what it may still map, until it is gone.
struct RemoteLab::Exiting {
  pid_t pid = -1;
  double deadline_ms = 0;  // then its group is killed
  std::unique_ptr<Output> output;
  std::unique_ptr<ReportDrain> report;
  std::vector<std::unique_ptr<Guarded>> retired;
};

RemoteLab::~RemoteLab() {
  try {
    stop();
  } catch (...) {
  }
}

RemoteLab& RemoteLab::from_environment() {
  static RemoteLab lab(RunnerOptions::from_environment());
  return lab;
}

void RemoteLab::start() {
  if (options_.libraries.empty())
    throw RunnerError("checker: no lab library given (set REDUCE_LAB_LIBRARY)");
  int sv[2], out[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    throw RunnerError(std::string("checker: cannot create the runner's channels: ") +
                      std::strerror(errno));
  // The prefix: the sandbox, then a sanitizer (which starts inside it).
  std::vector<std::string> words = options_.prefix;
  if (static_cast<std::size_t>(repetition_) < options_.repetition_prefixes.size()) {
    const std::vector<std::string>& more = options_.repetition_prefixes[repetition_];
    words.insert(words.end(), more.begin(), more.end());
  }
  for (std::string& w : words) {  // %n: this runner's number (one sanitizer log per runner)
    const auto at = w.find("%n");
    if (at != std::string::npos) w.replace(at, 2, std::to_string(starts_ + 1));
  }
  words.push_back(options_.runner);
  words.insert(words.end(), options_.libraries.begin(), options_.libraries.end());
  // A sanitizer in front of the runner writes its report into a pipe of this process
  // (--log-file /dev/fd/5), drained into the grader's logs: the lab neither holds the pipe (the
  // runner closes its copies) nor sees the log.
  std::string report_path;
  if (static_cast<std::size_t>(repetition_) < options_.repetition_reports.size())
    report_path = options_.repetition_reports[repetition_];
  if (const auto at = report_path.find("%n"); at != std::string::npos)
    report_path.replace(at, 2, std::to_string(starts_ + 1));
  int report[2] = {-1, -1};
  if (!report_path.empty() && ::pipe2(report, O_CLOEXEC) != 0)
    throw RunnerError(std::string("checker: cannot create the sanitizer's report pipe: ") +
                      std::strerror(errno));
  std::vector<std::string> env_words;
  for (const char* name : kRunnerEnvironment)
    if (const char* v = std::getenv(name)) env_words.push_back(std::string(name) + "=" + v);
  std::vector<char*> argv, envp;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  for (std::string& e : env_words) envp.push_back(e.data());
  envp.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw RunnerError(std::string("checker: fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(sv[1], kRunnerSocketFd);
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (report[1] >= 0) {
      if (report[1] == kSanitizerLogFd)
        ::fcntl(kSanitizerLogFd, F_SETFD, 0);
      else
        ::dup2(report[1], kSanitizerLogFd);
    }
    for (int fd = kRunnerSocketFd + 1; fd < 1024; ++fd)  // nothing else of ours
      if (fd != kSanitizerLogFd || report[1] < 0) ::close(fd);
    ::execvpe(argv[0], argv.data(), envp.data());
    std::fprintf(stderr, "cannot start %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(sv[1]);
  ::close(out[1]);
  pid_ = pid;
  socket_ = sv[0];
  output_ = std::make_unique<Output>(out[0], pid, options_.output_cap);
  if (report[1] >= 0) {
    ::close(report[1]);
    report_ = std::make_unique<ReportDrain>(report[0], report_path, options_.output_cap);
  }
  ++starts_;
  ++g_process_starts;
  std::fprintf(stderr, "%s%d\n", kLabProcessLine, starts_);
  started_ms_ = now_ms();
  first_reply_due_ = true;
}

int RemoteLab::process_starts() {
  return g_process_starts;
}

void RemoteLab::use_library(std::size_t index) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (index >= options_.libraries.size())
    throw RunnerError("checker: no lab library " + std::to_string(index));
  library_ = static_cast<std::uint32_t>(index);
}

void RemoteLab::start_early() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (pid_ < 0) start();
}

void RemoteLab::begin_repetition(int repetition) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (repetition == repetition_) return;
  park_runner();  // its exit (a sanitizer writing its report) overlaps the next runner's start
  repetition_ = repetition;
}

void RemoteLab::park_runner() {
  begin_stop();
  if (pid_ < 0) return;
  auto exiting = std::make_unique<Exiting>();
  exiting->pid = pid_;
  // The grace counts from begin_stop(): a runner told to exit earlier has had part of it.
  exiting->deadline_ms = stop_begun_ms_ + options_.exit_grace_s * 1e3;
  exiting->output = std::move(output_);
  exiting->report = std::move(report_);
  exiting->retired = std::move(retired_);
  retired_.clear();
  exiting_.push_back(std::move(exiting));
  pid_ = -1;
}

void RemoteLab::begin_stop() {
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

void RemoteLab::stop() {
  park_runner();
  for (const std::unique_ptr<Exiting>& e : exiting_) {
    int status = 0;
    while (::waitpid(e->pid, &status, WNOHANG) == 0 && now_ms() < e->deadline_ms)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ::kill(-e->pid, SIGKILL);  // the runner and anything it started in its group
    ::waitpid(e->pid, &status, 0);
  }
  exiting_.clear();  // frees their outgrown workspaces: no process maps them any more
  retired_.clear();
}

void RemoteLab::fail(const std::string& what) {
  std::string text = what;
  const std::string printed = output_ ? output_->last_lines() : std::string();
  stop();
  if (!printed.empty()) text += "\nthe lab's process printed (last lines):\n" + printed;
  throw RunnerError(text);
}

Reply RemoteLab::request(Request& rq) {
  // This process's copies and memsets (inputs, staged outputs, armed guards) may still be
  // queued on the GPU: the lab's process must not start before they land.
  cuda(cudaDeviceSynchronize(), "finishing the checker's own work before the call");
  if (pid_ >= 0 && socket_ < 0) stop();  // told to exit (begin_stop): wait, then start anew
  if (pid_ < 0) start();
  rq.forget_buffers = rq.forget_buffers != 0 || !retired_.empty() ? 1 : 0;
  rq.library = library_;
  const double deadline = now_ms() + options_.call_timeout_s * 1e3;
  const char* p = reinterpret_cast<const char*>(&rq);
  for (std::size_t left = sizeof rq; left > 0;) {
    const ssize_t put = ::send(socket_, p, left, MSG_NOSIGNAL);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) break;
    p += put;
    left -= static_cast<std::size_t>(put);
  }
  Reply reply;
  char* q = reinterpret_cast<char*>(&reply);
  std::size_t left = sizeof reply;
  while (left > 0) {
    const double remaining = deadline - now_ms();
    if (remaining <= 0) {
      fail("the lab did not finish within " +
           std::to_string(static_cast<int>(options_.call_timeout_s)) +
           " s (a hang, or far too slow); its process was killed");
    }
    pollfd pfd{socket_, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min(remaining, 200.0)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      if (output_ && output_->flood) break;
      continue;
    }
    const ssize_t got = ::read(socket_, q, left);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    q += got;
    left -= static_cast<std::size_t>(got);
  }
  if (left > 0) {
    if (output_ && output_->flood)
      fail("output flood: the lab printed more than " + std::to_string(options_.output_cap) +
           " bytes; its process was killed");
    ::kill(-pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    const std::string how = describe_status(status);
    pid_ = -1;
    retired_.clear();
    const std::string printed = output_ ? output_->last_lines() : std::string();
    output_.reset();
    report_.reset();  // the sanitizer went with the process group: its pipe is at its end
    ::close(socket_);
    socket_ = -1;
    throw RunnerError("the lab's process died during the call (" + how + ")" +
                      (printed.empty() ? "" : "\nit printed (last lines):\n" + printed));
  }
  if (reply.version != kProtocolVersion) fail("the lab's process answered out of protocol");
  retired_.clear();  // the runner unmapped them before it answered
  reply.message[sizeof reply.message - 1] = '\0';
  if (first_reply_due_) {  // where a test's time goes: a runner's start is most of a short test's
    first_reply_due_ = false;
    std::fprintf(stderr,
                 "[ startup  ] the lab's process (start %d) answered its first request %.2f s "
                 "after it was started\n",
                 starts_, (now_ms() - started_ms_) * 1e-3);
  }
  if (reply.exiting) stop();
  return reply;
}

// ---- calls ------------------------------------------------------------------------------------

int RemoteLab::op_index(const std::string& op) const {
  const int index = find_operation(op);
  if (index < 0) throw RunnerError("checker: unknown operation " + op);
  return index;
}

BufferRef RemoteLab::ref(const void* device_ptr, std::size_t bytes, bool persistent) const {
  BufferRef r;
  if (device_ptr == nullptr) return r;
  // The driver's cuMemGetAddressRange, found through the runtime: linking libcuda itself would
  // stop every checker from starting (even to list its tests) on a machine without a driver.
  using AddressRange = CUresult (*)(CUdeviceptr*, std::size_t*, CUdeviceptr);
  static const AddressRange address_range = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    cuda(cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault,
                                          &found),
         "finding cuMemGetAddressRange");
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw RunnerError("checker: the driver has no cuMemGetAddressRange");
    return reinterpret_cast<AddressRange>(fn);
  }();
  CUdeviceptr base = 0;
  std::size_t size = 0;
  if (address_range(&base, &size, reinterpret_cast<CUdeviceptr>(device_ptr)) != CUDA_SUCCESS)
    throw RunnerError("checker: a buffer given to the lab is not device memory of this process");
  cuda(cudaIpcGetMemHandle(&r.handle, reinterpret_cast<void*>(base)), "cudaIpcGetMemHandle");
  r.offset = reinterpret_cast<CUdeviceptr>(device_ptr) - base;
  r.bytes = bytes;
  r.present = 1;
  r.persistent = persistent ? 1 : 0;
  return r;
}

namespace {

/// Throws what the lab threw, as the same kind of exception, or a RunnerError.
void rethrow(const Reply& reply) {
  switch (reply.status) {
    case Status::kOk:
      return;
    case Status::kLabThrew:
      if (reply.error_kind == ErrorKind::kInvalidArgument)
        throw std::invalid_argument(reply.message);
      if (reply.error_kind == ErrorKind::kLogicError) throw std::logic_error(reply.message);
      throw std::runtime_error(reply.message);
    case Status::kCudaError:
      throw RunnerError(std::string("CUDA error in the lab's process: ") + reply.message);
    default:
      throw RunnerError(reply.message);
  }
}

}  // namespace

std::size_t RemoteLab::workspace_bytes(const std::string& op, std::size_t n) {
  return workspace_bytes(op, n, 0);
}

std::size_t RemoteLab::workspace_bytes(const std::string& op, std::size_t n, std::size_t segments) {
  std::lock_guard<std::mutex> lock(mutex_);
  Request rq;
  rq.command = Command::kWorkspaceBytes;
  rq.op = static_cast<std::uint32_t>(op_index(op));
  rq.n = n;
  rq.segments = segments;
  const Reply reply = request(rq);
  rethrow(reply);
  if (reply.value > (std::size_t{1} << 40))
    throw RunnerError(op + "_workspace_bytes(" + std::to_string(n) + ") asked for " +
                      std::to_string(reply.value) + " bytes");
  return reply.value;
}

void RemoteLab::check_guards(const std::string& op, std::size_t n) {
  bool before = false;
  if (const long long at = out_->first_change(before)) {
    throw RunnerError("the lab wrote " + std::string(before ? "before" : "past") + " its " +
                      (op == "argmax"                                ? "one-index"
                       : per_segment(kOperations[op_index(op)].kind) ? "per-segment"
                                                                     : "one-float") +
                      " output (" + std::to_string(at) + " bytes " +
                      (before ? "before it" : "past its end") + ", n = " + std::to_string(n) + ")");
  }
  if (const long long at = workspace_->first_change(before)) {
    throw RunnerError("the lab wrote past its workspace: " + op + "_workspace_bytes(" +
                      std::to_string(n) + ") asked for " + std::to_string(workspace_->usable) +
                      " bytes, and guard byte " + std::to_string(at) + " after them changed");
  }
}

/// A guarded workspace of at least \p bytes. The runner maps persistent buffers once and keeps
/// them, so an outgrown workspace it may still map is not freed yet (freeing memory another
/// process maps is undefined, and a new allocation could get the old one's handle): the next
/// request tells the runner to unmap what it keeps, and the old workspace is freed once it
/// answers. The runner keeps running, with the timed inputs it holds.
void RemoteLab::ensure_workspace(std::size_t bytes) {
  if (workspace_ && workspace_->fits(bytes)) return;
  if (workspace_ && pid_ >= 0) retired_.push_back(std::move(workspace_));
  workspace_ = std::make_unique<Guarded>(bytes, 0);
}

void RemoteLab::ensure_buffer(std::unique_ptr<Guarded>& slot, std::size_t bytes,
                              std::size_t front_guard) {
  if (slot && slot->fits(bytes)) return;
  if (slot && pid_ >= 0) retired_.push_back(std::move(slot));  // as ensure_workspace() says
  slot = std::make_unique<Guarded>(bytes, front_guard);
}

void RemoteLab::reduce_segments(const std::string& op, const float* in, std::size_t n,
                                const std::int64_t* offsets, std::size_t segments, float* out,
                                cudaStream_t stream) {
  call_once(op, in, n, offsets, segments, out, stream);
}

void RemoteLab::reduce(const std::string& op, const float* in, std::size_t n, void* out,
                       cudaStream_t stream) {
  call_once(op, in, n, nullptr, 0, out, stream);
}

void RemoteLab::call_once(const std::string& op, const float* in, std::size_t n,
                          const std::int64_t* offsets, std::size_t segments, void* out,
                          cudaStream_t stream) {
  const int index = op_index(op);
  const std::size_t ws = workspace_bytes(op, n, segments);
  std::lock_guard<std::mutex> lock(mutex_);
  cuda(cudaStreamSynchronize(stream), "waiting for the caller's stream");
  const std::size_t rb = call_result_bytes(kOperations[index].kind, segments);
  ensure_buffer(out_, std::max<std::size_t>(rb, 256), kFrontGuard);
  ensure_buffer(capture_, std::max<std::size_t>(rb, 256), 0);
  ensure_workspace(ws);
  out_->arm(rb);
  workspace_->arm(ws);
  // The lab's output starts as the caller's did: a test's own poison (a NaN, or a pattern that
  // is no NaN when NaN is the expected answer) must still tell a result from no write at all.
  if (out != nullptr && rb > 0)
    cuda(cudaMemcpy(out_->lab_ptr(), out, rb, cudaMemcpyDeviceToDevice), "staging the output");
  Request rq;
  rq.command = Command::kRun;
  rq.op = static_cast<std::uint32_t>(index);
  rq.n = n;
  rq.segments = segments;
  rq.calls = 1;
  rq.input_count = 1;
  rq.poison = out != nullptr ? kPoisonAux : kPoisonOut | kPoisonAux;
  rq.inputs[0] = ref(in, n * sizeof(float), false);
  rq.inputs[0].bytes = 0;  // inputs are never poisoned
  if (offsets != nullptr) {
    rq.offsets = ref(offsets, (segments + 1) * sizeof(std::int64_t), false);
    rq.offsets.bytes = 0;
  }
  rq.stage_input = stage_inputs_ ? 1 : 0;
  rq.out = ref(out_->lab_ptr(), rb, true);
  rq.aux = ref(workspace_->lab_ptr(), ws, true);
  rq.capture = ref(capture_->lab_ptr(), rb, true);
  const Reply reply = request(rq);
  rethrow(reply);
  check_guards(op, n);
  if (rb > 0)
    cuda(cudaMemcpyAsync(out, capture_->lab_ptr(), rb, cudaMemcpyDeviceToDevice, stream),
         "copying the results");
}

void RemoteLab::atomic_max_apply(const float* values, std::size_t n, float* address,
                                 float* old_values, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  cuda(cudaStreamSynchronize(stream), "waiting for the caller's stream");
  const std::size_t olds = n * sizeof(float);
  if (!out_) out_ = std::make_unique<Guarded>(256, kFrontGuard);
  ensure_workspace(olds);
  out_->arm(sizeof(float));
  workspace_->arm(olds);
  if (address != nullptr)
    cuda(cudaMemcpy(out_->lab_ptr(), address, sizeof(float), cudaMemcpyDeviceToDevice),
         "staging *address");
  // old_values start as the caller's did, so that an old value never written reads as the
  // caller's poison and not as what an earlier call left.
  if (old_values != nullptr && olds > 0)
    cuda(cudaMemcpy(workspace_->lab_ptr(), old_values, olds, cudaMemcpyDeviceToDevice),
         "staging old_values");
  Request rq;
  rq.command = Command::kRun;
  rq.op = static_cast<std::uint32_t>(op_index("atomic_max_apply"));
  rq.n = n;
  rq.calls = 1;
  rq.input_count = 1;
  rq.poison = 0;  // *address and old_values start as the caller's (staged above)
  rq.inputs[0] = ref(values, 0, false);
  rq.stage_input = stage_inputs_ ? 1 : 0;
  rq.out = ref(out_->lab_ptr(), sizeof(float), true);
  rq.aux = ref(workspace_->lab_ptr(), olds, true);
  const Reply reply = request(rq);
  rethrow(reply);
  bool before = false;
  if (out_->first_change(before))
    throw RunnerError("the lab wrote " + std::string(before ? "before" : "past") +
                      " the one float at address");
  if (const long long at = workspace_->first_change(before))
    throw RunnerError("the lab wrote past old_values (" + std::to_string(n) +
                      " floats): guard byte " + std::to_string(at) + " after them changed");
  if (address != nullptr)
    cuda(cudaMemcpyAsync(address, out_->lab_ptr(), sizeof(float), cudaMemcpyDeviceToDevice, stream),
         "returning *address");
  if (old_values != nullptr && olds > 0)
    cuda(cudaMemcpyAsync(old_values, workspace_->lab_ptr(), olds, cudaMemcpyDeviceToDevice, stream),
         "returning old_values");
}

std::vector<float*> RemoteLab::allocate_timed_inputs(std::size_t n, int count) {
  return allocate_timed_inputs(n, count, 0);
}

std::vector<float*> RemoteLab::allocate_timed_inputs(std::size_t n, int count,
                                                     std::size_t segments) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (count < 1 || count > kMaxInputs) throw RunnerError("checker: bad number of timed inputs");
  // The runner frees its earlier inputs before it allocates these: unmapped here first, or this
  // process's mappings would keep them alive (a runner that serves many rows would run out of
  // memory, and slow down before it did).
  for (void* p : timed_inputs_) cudaIpcCloseMemHandle(p);
  timed_inputs_.clear();
  if (timed_offsets_ != nullptr) cudaIpcCloseMemHandle(timed_offsets_);
  timed_offsets_ = nullptr;
  timed_bytes_ = 0;
  Request rq;
  rq.command = Command::kAllocateInputs;
  rq.n = n;
  rq.segments = segments;
  rq.input_count = static_cast<std::uint32_t>(count);
  const Reply reply = request(rq);
  rethrow(reply);
  if (segments > 0) {
    void* p = nullptr;
    cuda(cudaIpcOpenMemHandle(&p, reply.offsets, cudaIpcMemLazyEnablePeerAccess),
         "mapping the runner's timed offsets");
    timed_offsets_ = static_cast<std::int64_t*>(p);
  }
  std::vector<float*> mapped;
  for (int i = 0; i < count; ++i) {
    void* p = nullptr;
    cuda(cudaIpcOpenMemHandle(&p, reply.inputs[i], cudaIpcMemLazyEnablePeerAccess),
         "mapping the runner's timed inputs");
    timed_inputs_.push_back(p);
    mapped.push_back(static_cast<float*>(p));
  }
  timed_bytes_ = static_cast<std::size_t>(count) * std::max<std::size_t>(n, 1) * sizeof(float) +
                 (segments > 0 ? (segments + 1) * sizeof(std::int64_t) : 0);
  return mapped;
}

TimedRun RemoteLab::run_timed(const std::string& op, int count, std::size_t n, int calls,
                              void* capture) {
  return run_timed(op, count, n, calls, capture, 0);
}

TimedRun RemoteLab::run_timed(const std::string& op, int count, std::size_t n, int calls,
                              void* capture, std::size_t segments) {
  const int index = op_index(op);
  if (count < 1 || count > kMaxInputs || calls < 1 || pid_ < 0)
    throw RunnerError("checker: bad timed request (inputs allocated?)");
  const std::size_t ws = workspace_bytes(op, n, segments);
  std::lock_guard<std::mutex> lock(mutex_);
  const std::size_t rb = call_result_bytes(kOperations[index].kind, segments);
  ensure_buffer(out_, rb, kFrontGuard);
  ensure_workspace(ws);
  out_->arm(rb);
  workspace_->arm(ws);
  Request rq;
  rq.command = Command::kRun;
  rq.op = static_cast<std::uint32_t>(index);
  rq.n = n;
  rq.calls = static_cast<std::uint32_t>(calls);
  rq.input_count = static_cast<std::uint32_t>(count);
  rq.own_inputs = 1;
  rq.segments = segments;
  rq.out = ref(out_->lab_ptr(), rb, true);
  rq.aux = ref(workspace_->lab_ptr(), ws, true);
  rq.capture = ref(capture, rb * static_cast<std::size_t>(calls), true);
  // The caller's capture stays mapped in the runner from request to request. A new one (the
  // next benchmark row's, maybe where the last one was freed) first has the runner forget the
  // mappings it holds: a stale one would be written, or refuse the new one (AlreadyMapped).
  const std::string capture_key(reinterpret_cast<const char*>(&rq.capture.handle),
                                sizeof rq.capture.handle);
  if (capture_key != capture_key_) rq.forget_buffers = 1;
  capture_key_ = capture_key;
  // A call's result is read whole when it is small. A segmented call's results can be tens of
  // megabytes: reading them all would put the copy on the clock, so a window of kWindow bytes
  // at a place the lab cannot know is read from each call (the caller checks every result
  // afterwards).
  constexpr std::size_t kWindow = 4096;
  const std::size_t window = std::min(rb, kWindow);
  static std::mt19937_64 places(std::random_device{}());
  std::vector<std::size_t> at(static_cast<std::size_t>(calls));
  for (std::size_t c = 0; c < at.size(); ++c) {
    const std::size_t floats_before =
        rb > window ? places() % ((rb - window) / sizeof(float) + 1) : 0;
    at[c] = c * rb + floats_before * sizeof(float);
  }
  // Whole results: one copy, as the scalar operations always had. Windows: pinned, so that their
  // copies are queued together and waited for once.
  std::vector<unsigned char> whole(window == rb ? rb * at.size() : 0);
  unsigned char* windows = nullptr;
  if (window < rb)
    cuda(cudaMallocHost(&windows, window * at.size()), "allocating the results' host buffer");
  const std::unique_ptr<unsigned char, cudaError_t (*)(void*)> release(windows, cudaFreeHost);
  cuda(cudaDeviceSynchronize(), "finishing the checker's own work before the timed calls");
  const double t0 = now_ms();
  const Reply reply = request(rq);
  // The clock stops once the results are readable here: a reply sent before the work finished
  // gains nothing, because the capture would still hold poison.
  if (window == rb) {
    cuda(cudaMemcpy(whole.data(), capture, whole.size(), cudaMemcpyDeviceToHost),
         "reading the results");
  } else {
    for (std::size_t c = 0; c < at.size(); ++c)
      cuda(cudaMemcpyAsync(windows + c * window, static_cast<char*>(capture) + at[c], window,
                           cudaMemcpyDeviceToHost, nullptr),
           "reading the results");
    cuda(cudaStreamSynchronize(nullptr), "reading the results");
  }
  const double t1 = now_ms();
  rethrow(reply);
  check_guards(op, n);
  return TimedRun{t1 - t0, reply.event_ms};
}

}  // namespace reduce::remote
