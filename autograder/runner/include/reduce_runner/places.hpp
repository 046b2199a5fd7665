/// \file
/// \brief The places a process can write to or share, seen from inside its sandbox: what
/// `reduce_lab_runner --places` prints, behind the runner's walls, for the grader's report.
///
/// A place that outlives the lab's process, or that two of its processes (or two submissions)
/// can both reach, carries what a lab learns in one run to another. The sandbox gives the lab a
/// writable /tmp and /dev/shm of its own and nothing else writable; this walk checks it from
/// inside: every writable folder and its filesystem, every device, every Unix socket and named
/// pipe on the filesystem (a read-only mount still lets a process connect to a socket and write
/// to a pipe), and what the IPC and network namespaces hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace reduce::runner {

/// A folder this process can write to, and what holds it.
struct WritableFolder {
  std::string path;         ///< the topmost writable folder of its filesystem
  std::string filesystem;   ///< "tmpfs", "ext4", "overlay"...
  std::uint64_t bytes = 0;  ///< the filesystem's size (a tmpfs's cap)
};

/// Bounds on the walk, so that a huge host filesystem cannot stall the probe.
struct PlacesLimits {
  std::size_t entries = 2'000'000;  ///< directory entries read at most
  double seconds = 20;              ///< time spent at most
};

/// What the walk found.
struct Places {
  std::vector<WritableFolder> writable;  ///< writable folders, the top one of each filesystem
  std::vector<std::string> devices;      ///< character and block devices
  std::vector<std::string> sockets;      ///< Unix sockets on the filesystem
  std::vector<std::string> fifos;        ///< named pipes
  std::size_t entries = 0;               ///< directory entries read
  bool complete = true;                  ///< false: the walk stopped at a limit
  int sysv_objects = -1;  ///< System V shared memory, queues and semaphores here (-1: unknown)
  int unix_sockets = -1;  ///< Unix sockets of this network namespace, abstract ones included
  std::vector<std::string> interfaces;  ///< network interfaces of this network namespace

  /// One line for reports: "places: writable /dev/shm (tmpfs, 64 MiB), /tmp (tmpfs, 64 MiB);
  /// devices null, urandom, zero; no socket or pipe on the filesystem; System V IPC 0 objects;
  /// Unix sockets 0; network lo".
  std::string summary() const;

  /// Every place, one a line ("writable /tmp tmpfs 67108864", "device /dev/null", ...).
  std::string details() const;
};

/// Walks the filesystem under \p root (skipping /proc and /sys), without following links, and
/// reads this process's IPC and network namespaces.
Places find_places(const std::string& root = "/", const PlacesLimits& limits = {});

}  // namespace reduce::runner
