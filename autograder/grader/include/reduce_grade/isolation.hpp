/// \file
/// \brief The sandbox around every process that holds a student's code: the submission's build
/// (the compiler and assembler read whatever the student's sources name) and the lab runner.
///
/// Both see this machine read-only, with the course's hidden tests and solutions, the reports,
/// the other students' folders and /tmp replaced by empty folders, no network, and a PID and IPC
/// namespace of their own (a /proc that lists only the sandbox). bubblewrap (Debian package
/// `bubblewrap`) makes that view where it is installed and works; else the grader's own
/// `reduce-grade confine` (Linux namespaces, no root); where neither works, the process runs
/// unconfined and the report says so.
#pragma once

#include <reduce_grade/confine.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// A way to run a process in a confined view of the filesystem on this machine.
struct Isolation {
  bool sandboxed = false;                  ///< the prefix below works here
  std::string description;                 ///< one line for reports
  std::vector<std::string> runner_prefix;  ///< the command in front of the confined process

  /// What a checker needs to start its runners this way: REDUCE_RUNNER_PREFIX (words
  /// separated by ASCII 0x1F).
  std::vector<std::pair<std::string, std::string>> runner_env() const;
};

/// The view of the lab's runner: /tmp and every one of \p hidden replaced by empty folders,
/// then \p readable shown again read-only and \p writable writable (a sanitizer's logs).
std::vector<MountStep> runner_view(const std::vector<std::filesystem::path>& hidden,
                                   const std::vector<std::filesystem::path>& readable,
                                   const std::vector<std::filesystem::path>& writable);

/// The view of a submission's build: the course (read-only) without its hidden tests and
/// solutions, none of \p hidden (reports, the class's folders, the course's own build), /tmp
/// empty, and \p build_dir writable.
std::vector<MountStep> build_view(const std::filesystem::path& course_root,
                                  const std::vector<std::filesystem::path>& hidden,
                                  const std::filesystem::path& build_dir);

/// Finds out how \p steps can be applied here: `reduce-grade confine` (the grader's own
/// executable), else bubblewrap, each tried once with `true`; \p what names the process in the
/// description. REDUCE_SANDBOX=off turns confinement off.
Isolation detect_isolation(const std::vector<MountStep>& steps, const std::string& what);

/// The walls the lab's runner raises inside \p isolation (`reduce_lab_runner --walls` started
/// there): e.g. "seccomp; Landlock ABI 6 (...); pid 2, 2 processes visible in /proc".
std::string probe_walls(const Isolation& isolation, const std::filesystem::path& runner);

}  // namespace reduce::grade
