/// \file
/// \brief The walls the lab runner raises around itself before it loads a student's library.
///
/// The sandbox in front of the runner (`reduce-grade confine` or bubblewrap) gives it its own
/// user, mount, network, PID and IPC namespaces. Inside them the runner adds two walls of its
/// own, each kept by the kernel whatever the lab's code does afterwards:
/// - Landlock (Linux 5.13+), raised before the CUDA context so that every thread CUDA starts
///   inherits it: no ptrace access, hence no `/proc/PID/mem` or `/proc/PID/fd`, to any process
///   outside the runner (a sanitizer's front-end, another student's runner); from Landlock ABI 6
///   (Linux 6.12) also no signal and no abstract Unix socket beyond it.
/// - a seccomp filter on every thread, raised once the CUDA context exists: the process dies
///   (SIGSYS) on a new process (fork, vfork, clone without CLONE_THREAD), exec, a signal to any
///   other process, ptrace, `process_vm_readv`/`writev`, `pidfd_*`, mount changes, `unshare`,
///   `setns`, `chroot` and a few more. clone3 answers ENOSYS, so that threads start by clone.
#pragma once

#include <reduce_vocabulary/channels.hpp>

#include <string>

namespace reduce::runner {

/// Which walls stand around this process.
struct Walls {
  int landlock_abi = 0;          ///< 0: none; else the kernel's Landlock ABI in force
  bool landlock_scoped = false;  ///< signals and abstract sockets scoped too (ABI 6+)
  bool seccomp = false;          ///< the seccomp filter is on every thread
  std::string problem;           ///< why a wall is missing, when one is

  /// One line for reports, e.g. "seccomp; Landlock ABI 6 (ptrace, signals)".
  std::string describe() const;
};

/// Raises Landlock on the calling thread (before any other thread exists, so that all inherit
/// it). Fills \p walls; failure is not fatal (an older kernel has no Landlock).
void raise_landlock(Walls& walls);

/// Raises the seccomp filter on every thread of the process; this process (its pid when called)
/// stays the only target of its signals. Fills \p walls.
void raise_seccomp(Walls& walls);

}  // namespace reduce::runner
