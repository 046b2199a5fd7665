// The pieces of LabRunner that its source files share and its users never see: the checker's
// guarded buffers, the sanitizer's report pipe it drains, a runner on its way out, and small
// helpers. The class
// is defined in lab_runner_process.cpp (start and stop), lab_runner_channels.cpp (the pipes
// and one request), lab_runner_calls.cpp (untimed calls) and lab_runner_timed.cpp (timed ones).
#pragma once

#include <reduce/child_process.hpp>
#include <reduce_runner/lab_runner.hpp>

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace reduce::runner {

/// Milliseconds on the steady clock.
double now_ms();

/// Throws a RunnerError naming \p what unless \p status is cudaSuccess.
void cuda(cudaError_t status, const char* what);

/// Throws what the lab threw, as the same kind of exception, or a RunnerError.
void rethrow(const Reply& reply);

inline constexpr unsigned char kGuardByte = 0xA5;
inline constexpr std::size_t kFrontGuard = 256;  // before the result slot; keeps it aligned

/// A checker-owned allocation: [front guard][the lab's bytes][guard]. Guards are armed before a
/// request and compared afterwards.
struct LabRunner::Guarded {
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
  long long first_change(bool& before) const;
};

/// Drains a sanitizer's report pipe (kSanitizerLogFd in the runner's sandbox) into a log file
/// of the grader's, which no process of the lab's sandbox can see. Ends at end-of-file: when
/// the sanitizer in front of the runner has written its summary and exited.
struct LabRunner::ReportDrain {
  int fd = -1;
  std::thread thread;

  ReportDrain(int pipe_fd, const std::string& path, std::size_t cap);
  ~ReportDrain();
};

/// A runner told to exit, with what it may still map, until it is gone.
struct LabRunner::Exiting {
  std::unique_ptr<ChildProcess> child;
  double deadline_ms = 0;  // then its group is killed
  std::unique_ptr<ReportDrain> report;
  std::vector<std::unique_ptr<Guarded>> retired;
};

}  // namespace reduce::runner
