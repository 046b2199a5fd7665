/// \file
/// \brief The file descriptors and the signal by which the lab's runner and the course's
/// processes around it know each other: the only facts of the runner that the grader (built
/// without CUDA) needs too.
#pragma once

namespace reduce::runner {

/// The file descriptor on which a runner finds its socket to the checker.
inline constexpr int kRunnerSocketFd = 3;

/// Under a sanitizer, the file descriptor of its report (`--log-file /dev/fd/5`): a pipe that
/// the checker drains into the grader's logs. The runner closes every copy of it before it loads
/// the lab.
inline constexpr int kSanitizerLogFd = 5;

/// The signal by which the runner's seccomp filter ends it (SIGSYS on Linux): a checker that
/// sees its runner end by it says that the lab made a forbidden system call.
inline constexpr int kWallSignal = 31;

/// How the checker says that the seccomp filter ended the runner; the grader flags the lab for
/// review where a failure carries it (the checker's words reach the grader through its own
/// output, which the lab cannot write).
inline constexpr const char* kForbiddenCallMark = "the lab made a forbidden system call";

/// The line a checker prints once it has made its own CUDA context (followed by the seconds it
/// took); the grader counts the CUDA contexts of a grading by it.
inline constexpr const char* kCheckerContextLine = "[ startup  ] the checker's CUDA context: ";

/// The line a checker prints when it has started a lab's process (followed by the start's
/// number, 1 for the first of that checker); the grader counts the lab processes (each with a
/// CUDA context of its own) by it. A diagnostic, not a verdict: only the count is read.
inline constexpr const char* kLabProcessLine = "[ startup  ] the lab's process started: ";

/// The line a checker started while its labs still build prints once released from its hold
/// (LaunchSpec::hold), followed by the seconds it waited; the grader leaves them out of the
/// checker's test seconds. It comes before any lab's code can run, so only the first counts.
inline constexpr const char* kCheckerHeldLine = "[ startup  ] held until the labs were built: ";

}  // namespace reduce::runner
