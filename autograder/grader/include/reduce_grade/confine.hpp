/// \file
/// \brief `reduce-grade confine`: runs a command in a view of the filesystem where chosen folders
/// are empty and the rest is read-only, with no root and no other program (Linux user, mount,
/// network, PID and IPC namespaces). The grader puts it in front of every process that holds a
/// student's code where bubblewrap is missing: the submission's build (the compiler reads what the
/// student's sources name, `.incbin` included) and the lab's runner.
#pragma once

#include <string>
#include <vector>

namespace reduce::grade {

/// One change to the command's view of the filesystem. Steps apply in order, so that a folder
/// shown again may lie inside a hidden one, and a hidden one inside a shown one.
struct MountStep {
  /// What the step does to its path.
  enum class Kind {
    kHide,     ///< an empty private folder in its place (a tmpfs; what is written there is lost)
    kShow,     ///< the real folder or file again, read-only
    kWritable  ///< the real folder again, writable
  };
  Kind kind = Kind::kHide;  ///< hide, show or make writable
  std::string path;         ///< absolute

  /// `--hide=PATH`, `--show=PATH` or `--writable=PATH`.
  std::string argument() const;
};

/// `reduce-grade confine [--hide=P | --show=P | --writable=P]... -- COMMAND...`, called from
/// main() before any thread starts (a process with several threads cannot enter a user
/// namespace). Every mount of the host but /dev, /proc and /sys becomes read-only, then the
/// steps apply in order, then a second user namespace locks it all (the command, although it
/// holds capabilities in its own namespace, can undo none of it) and the command starts with no
/// network, no new privileges and the same working folder, seen through the new view, as PID 2
/// of a new PID namespace whose PID 1 reaps orphans and mounts a /proc of its own. Exits 3 with
/// a one-line reason when a step fails, 2 on a usage error; else as the command ended (its exit
/// code, or the signal that ended it).
int confine_main(int argc, char** argv);

}  // namespace reduce::grade
