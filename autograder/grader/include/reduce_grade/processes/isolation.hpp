/// \file
/// \brief The sandbox around every process that holds a student's code: the submission's build
/// (the compiler and assembler read whatever the student's sources name) and the lab runner.
///
/// Both see this machine read-only, with the course's hidden tests and solutions, the reports,
/// the other students' folders replaced by empty folders, no network, a PID and IPC namespace of
/// their own (a /proc that lists only the sandbox), and places of their own (own_places()): an
/// empty capped /tmp and /dev/shm, and a /dev with only what CUDA needs. Nothing they write
/// outside a writable folder of the grader's survives them. bubblewrap (Debian package
/// `bubblewrap`) makes that view where it is installed and works; else the grader's own
/// `reduce-grade confine` (Linux namespaces, no root); where neither works, the process runs
/// unconfined and the report says so.
#pragma once

#include <reduce_grade/processes/confine.hpp>

#include <cstdint>
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
};

/// The most a lab's process may keep in its /tmp and in its /dev/shm (each): far above what a
/// correct lab or CUDA writes there, and 8 processes at once hold at most 1 GiB of the host's
/// memory this way.
inline constexpr std::uint64_t kLabTmpBytes = std::uint64_t{64} << 20;
/// The most a lab's process, or a submission's build, may keep in its /dev/shm.
inline constexpr std::uint64_t kOwnShmBytes = std::uint64_t{64} << 20;
/// The most a submission's build may keep in its /tmp (the CUDA compiler's intermediate files).
inline constexpr std::uint64_t kBuildTmpBytes = std::uint64_t{512} << 20;

/// The places of its own every sandboxed process gets, one step each, first in its view: an
/// empty /tmp of \p tmp_bytes; no /run/user (the grading user's session bus and agents); a
/// /dev of its own, read-only, holding only null, zero, urandom, the NVIDIA devices present here
/// (nvidiactl, nvidia-uvm, nvidia-uvm-tools, nvidia-modeset, nvidiaN, nvidia-caps/*), the links
/// fd, stdin, stdout and stderr, and an empty /dev/shm of kOwnShmBytes. All tmpfs: each start of
/// the sandbox gets them empty, and they vanish with it.
std::vector<MountStep> own_places(std::uint64_t tmp_bytes);

/// The view of the lab's runner: own_places() (a /tmp of kLabTmpBytes), every one of \p hidden
/// replaced by an empty folder,
/// then \p readable shown again read-only and \p writable writable (a sanitizer's logs).
std::vector<MountStep> runner_view(const std::vector<std::filesystem::path>& hidden,
                                   const std::vector<std::filesystem::path>& readable,
                                   const std::vector<std::filesystem::path>& writable);

/// The view of a submission's build: own_places() (a /tmp of kBuildTmpBytes), the course
/// (read-only) without its hidden tests and solutions, none of \p hidden (reports, the class's
/// folders, the course's own build), and \p build_dir writable.
std::vector<MountStep> build_view(const std::filesystem::path& course_root,
                                  const std::vector<std::filesystem::path>& hidden,
                                  const std::filesystem::path& build_dir);

/// Finds out how \p steps can be applied here: `reduce-grade confine` (the grader's own
/// executable), else bubblewrap, each tried once with `true`; \p what names the process in the
/// description. REDUCE_SANDBOX=off turns confinement off.
Isolation detect_isolation(const std::vector<MountStep>& steps, const std::string& what);

/// The walls the lab's runner raises inside \p isolation and the places it finds there behind
/// them (`reduce_lab_runner --walls`, then `--places`, each started there), in one line: e.g.
/// "seccomp; Landlock ABI 6 (...); pid 2, 2 processes visible in /proc; places: writable
/// /dev/shm (tmpfs, 64 MiB), /tmp (tmpfs, 64 MiB); devices ...".
std::string probe_walls(const Isolation& isolation, const std::filesystem::path& runner);

}  // namespace reduce::grade
