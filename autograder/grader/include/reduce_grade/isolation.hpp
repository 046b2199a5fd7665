/// \file
/// \brief The sandbox around every process that holds a student's code (the lab runner).
///
/// With bubblewrap (Debian package `bubblewrap`) and user namespaces available, the runner sees a
/// read-only filesystem in which the course folder and /tmp are empty except for what it needs
/// (the course build's runner and common library, the lab library, the sanitizer's log folder),
/// has no network and lives in its own PID namespace, so it can neither read the solutions or
/// the hidden tests, nor write a report, nor signal the grader. Without it, the report says so.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// What the grader can do to confine a lab's process on this machine.
struct Isolation {
  bool sandboxed = false;                  ///< bubblewrap, or the runner's own confinement, works
  std::string description;                 ///< one line for reports
  std::vector<std::string> runner_prefix;  ///< the command in front of the runner
  /// Without bubblewrap: folders the runner makes read-only for itself (--read-only=).
  std::vector<std::string> read_only;

  /// What a checker needs to start its runners this way: REDUCE_RUNNER_PREFIX and
  /// REDUCE_RUNNER_READ_ONLY (words separated by ASCII 0x1F).
  std::vector<std::pair<std::string, std::string>> runner_env() const;
};

/// Finds out whether bubblewrap works here and builds its command line: \p hidden folders are
/// replaced by empty ones, then \p readable are bound read-only and \p writable read-write on
/// top. REDUCE_SANDBOX=off turns it off; REDUCE_SANDBOX_PID=off keeps the host's PID namespace.
/// Without bubblewrap, \p runner is asked whether it can make the \p hidden folders read-only
/// for itself (`--probe`, user and mount namespaces): then the lab cannot change the course, the
/// build folders or the reports, although it can read them.
Isolation detect_isolation(const std::vector<std::filesystem::path>& hidden,
                           const std::vector<std::filesystem::path>& readable,
                           const std::vector<std::filesystem::path>& writable,
                           const std::filesystem::path& runner = {});

}  // namespace reduce::grade
