/// \file
/// \brief `reduce-grade confine`: runs a command in a view of the filesystem where chosen folders
/// are empty and the rest is read-only, with no root and no other program (Linux user, mount,
/// network, PID and IPC namespaces). The grader puts it in front of every process that holds a
/// student's code where bubblewrap is missing: the submission's build (the compiler reads what the
/// student's sources name, `.incbin` included) and the lab's runner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace reduce::grade {

/// One change to the command's view of the filesystem. Steps apply in order, so that a folder
/// shown again may lie inside a hidden one, and a hidden one inside a shown one.
struct MountStep {
  /// What the step does to its path.
  enum class Kind {
    kHide,      ///< an empty folder in its place (a tmpfs), read-only once every step is done
    kShow,      ///< the real folder or file again, read-only
    kWritable,  ///< the real folder again, writable
    kScratch,   ///< an empty writable folder of its own (a tmpfs of `bytes`), lost with the sandbox
    kDevice,    ///< the machine's device file again, usable (read-only: its times and mode stay)
    kLink       ///< a symbolic link to `target`
  };
  Kind kind = Kind::kHide;  ///< what the step does
  std::string path;         ///< absolute
  std::uint64_t bytes = 0;  ///< kScratch: the most its tmpfs holds
  std::string target;       ///< kLink: where the link points

  /// `--hide=PATH`, `--show=PATH`, `--writable=PATH`, `--scratch=PATH:BYTES`, `--device=PATH`
  /// or `--link=PATH:TARGET`.
  std::string argument() const;
};

/// `reduce-grade confine [STEP]... -- COMMAND...` (MountStep::argument() spells each step),
/// called from main() before any thread starts (a process with several threads cannot enter a
/// user namespace). Every mount of the host but /dev and /proc becomes read-only, then the
/// steps apply in order, then hidden folders become read-only, then a second user namespace
/// locks it all (the command, although it holds capabilities in its own namespace, can undo none
/// of it) and the command starts with no network, no new privileges and the same working folder,
/// seen through the new view, as PID 2 of a new PID namespace whose PID 1 reaps orphans and
/// mounts a /proc of its own. Every tmpfs it mounts belongs to the sandbox's mount namespace and
/// vanishes with it. Exits 3 with a one-line reason when a step fails, 2 on a usage error; else
/// as the command ended (its exit code, or the signal that ended it).
int confine_main(int argc, char** argv);

}  // namespace reduce::grade
