// LabRunner's channels to its runner: the sanitizer's report pipe, drained by a thread (the
// output pipe is the process starter's), and the socket on which one request goes out and its
// reply comes back.
#include "lab_runner_parts.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace reduce::runner {

namespace {

/// How the runner ended.
std::string describe_end(const ChildEnd& end) {
  if (end.signal != 0) {
    if (end.signal == kWallSignal)  // the runner's seccomp filter (walls.hpp)
      return "killed by signal " + std::to_string(end.signal) + ": " + kForbiddenCallMark +
             " (a new process, exec, a signal to another process, ptrace or a namespace change), "
             "which the sandbox stops; flagged for review";
    return "killed by signal " + std::to_string(end.signal) + " (" + strsignal(end.signal) + ")";
  }
  if (end.exit_code >= 0) return "exited with status " + std::to_string(end.exit_code);
  return "ended, its status unknown";
}

}  // namespace

// ---- the sanitizer's report -----------------------------------------------------------------

LabRunner::ReportDrain::ReportDrain(int pipe_fd, const std::string& path, std::size_t cap)
    : fd(pipe_fd) {
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

LabRunner::ReportDrain::~ReportDrain() {
  if (thread.joinable()) thread.join();
  ::close(fd);
}

// ---- one request ----------------------------------------------------------------------------

Reply LabRunner::request(Request& rq) {
  // This process's copies and memsets (inputs, staged outputs, armed guards) may still be
  // queued on the GPU: the lab's process must not start before they land.
  cuda(cudaDeviceSynchronize(), "finishing the checker's own work before the call");
  if (child_ && socket_ < 0) stop();  // told to exit (begin_stop): wait, then start anew
  if (!child_) start();
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
  // A timed request: this process too waits for the reply without sleeping at first, so that
  // waking it adds nothing to its own clock.
  for (const double awake_until = now_ms() + rq.awake_us * 1e-3; now_ms() < awake_until;) {
    pollfd pfd{socket_, POLLIN, 0};
    if (::poll(&pfd, 1, 0) != 0) break;
  }
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
      if (child_->flooded()) break;
      continue;
    }
    const ssize_t got = ::read(socket_, q, left);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    q += got;
    left -= static_cast<std::size_t>(got);
  }
  if (left > 0) {
    if (child_->flooded())
      fail("output flood: the lab printed more than " + std::to_string(options_.output_cap) +
           " bytes; its process was killed");
    const std::string how = describe_end(child_->kill_and_wait());
    const std::string printed = child_->tail();
    child_.reset();
    retired_.clear();
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

}  // namespace reduce::runner
