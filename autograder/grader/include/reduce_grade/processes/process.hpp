/// \file
/// \brief Runs one child process under a wall-clock limit and an output cap.
///
/// The child is started by the course's one process starter (reduce/child_process.hpp): its
/// own process group, stdin from /dev/null and one pipe for stdout and stderr together. When
/// the limit expires the whole group gets SIGTERM, a grace, then SIGKILL; when the output
/// exceeds the cap it is killed at once; when the child exits, the rest of its group is killed
/// too, so nothing it started survives. Nothing the child does makes run_process() throw.
#pragma once

#include <reduce/child_process.hpp>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// What to run, and the limits it runs under.
struct ProcessSpec {
  /// Program and arguments; a program name without '/' is looked up in PATH.
  std::vector<std::string> argv;
  /// Environment variables set (or overridden) for the child on top of the grader's own.
  std::vector<std::pair<std::string, std::string>> env;
  /// Working directory of the child (empty: the grader's).
  std::filesystem::path cwd;
  /// Wall-clock limit in seconds; on expiry the process group is killed.
  double timeout_s = 600;
  /// Seconds between SIGTERM and SIGKILL when the limit expires (0: SIGKILL at once).
  double kill_grace_s = 2;
  /// Bytes of output kept; one more byte kills the process group ("output flood").
  std::size_t output_cap = std::size_t{8} << 20;
  /// When set, the captured output is also written to this file.
  std::filesystem::path log_file;
  /// Address-space limit of the child and everything it starts (RLIMIT_AS; 0: none). A compiler
  /// told to `#include "/dev/zero"` then fails at once instead of filling the host's memory.
  std::size_t memory_limit_bytes = 0;
  /// When set and it turns true, the process group is killed (ProcessResult::cancelled): its
  /// result is no longer wanted.
  const std::atomic<bool>* cancel = nullptr;
};

/// What happened to the child.
struct ProcessResult {
  bool started = false;        ///< false when the program could not be found or started
  std::string start_error;     ///< why it did not start
  int exit_code = -1;          ///< exit status when it exited normally, else -1
  int signal = 0;              ///< the signal that ended it (0 if none)
  bool timed_out = false;      ///< killed at the wall-clock limit
  bool output_flood = false;   ///< killed for exceeding the output cap
  bool cancelled = false;      ///< killed when ProcessSpec::cancel turned true
  std::string output;          ///< stdout and stderr interleaved, at most output_cap bytes
  double seconds = 0;          ///< wall-clock run time
  double timeout_s = 0;        ///< the limit it ran under (for messages)
  std::size_t output_cap = 0;  ///< the cap it ran under (for messages)

  /// Exited by itself with status 0.
  bool succeeded() const {
    return started && !timed_out && !output_flood && signal == 0 && exit_code == 0;
  }
  /// Exited by itself (any status), neither killed nor stopped by the grader.
  bool exited() const { return started && !timed_out && !output_flood && signal == 0; }
  /// One phrase for reports: "exit 0", "exit 1", "killed by SIGSEGV (segmentation fault)",
  /// "timed out after 300 s", "output flood: more than 4 MiB of output", "not started: ...".
  std::string describe() const;
};

/// Runs \p spec to completion (or until a limit stops it) and reports what happened.
ProcessResult run_process(const ProcessSpec& spec);

/// "SIGSEGV (segmentation fault)" for a signal number.
std::string signal_description(int signal);

/// Full path of a program found in PATH: the starter's own lookup (reduce/child_process.hpp).
using reduce::find_program;

/// Makes the grader the reaper of every orphan among its descendants (PR_SET_CHILD_SUBREAPER):
/// a process that starts a new session and leaves its parent still becomes a child of the grader,
/// where kill_stray_processes() finds it. Returns false where Linux refuses.
bool become_subreaper();

/// Kills every child of the grader that run_process() is not waiting for (processes a submission
/// left behind, however they detached), and their children; returns how many.
int kill_stray_processes();

/// "4 MiB", "512 KiB", "100 bytes".
std::string byte_size_text(std::size_t bytes);

}  // namespace reduce::grade
