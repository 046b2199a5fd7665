// Part of the class-level attack (tools/maint/batch_attack.sh), not a lab: the attacking
// submission's lab sources include it. Each time the lab's library is loaded (tests, hidden
// tests, sanitizer runs, benchmark: every start of the lab's process) it writes everywhere it can
// reach, so that whatever it leaves could carry what it learned to a later process or to the
// next submission: many small files, a folder and one large file (48 MiB, under the 64 MiB caps
// of the sandbox's own places) in /dev/shm, /tmp, /var/tmp, /run/shm, /run/lock, /dev,
// /dev/mqueue, /run/user/UID, the home folder and the working folder; POSIX shared memory and a
// POSIX message queue; a System V shared memory segment; a bound abstract Unix socket. It first
// counts what earlier processes left. Every name starts with "reduce-attack", so the script can
// look for them on the host afterwards; its last words name what it found and wrote.
#pragma once

#include <fcntl.h>
#include <mqueue.h>
#include <pwd.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace reduce_attack {
namespace {

/// Writes \p bytes (a marked pattern) into a new file \p path; true when all of it was written.
bool write_file(const std::string& path, std::size_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  static std::vector<char> block(1 << 20, 'R');
  std::snprintf(block.data(), 256, "reduce-attack was here: %s\n", path.c_str());
  std::size_t left = bytes;
  while (left > 0) {
    const std::size_t chunk = left < block.size() ? left : block.size();
    if (::write(fd, block.data(), chunk) != static_cast<ssize_t>(chunk)) break;
    left -= chunk;
  }
  ::close(fd);
  return left == 0;
}

/// Whether \p folder holds something an earlier process of the attack left.
bool left_before(const std::string& folder) {
  struct stat st{};
  return ::stat((folder + "/reduce-attack-marker").c_str(), &st) == 0;
}

/// Into \p folder: a marker, 200 small files, a folder and one large file. Returns the bytes
/// written.
std::size_t fill(const std::string& folder, const std::string& tag) {
  if (!write_file(folder + "/reduce-attack-marker", 64)) return 0;
  std::size_t written = 64;
  for (int i = 0; i < 200; ++i)
    if (write_file(folder + "/reduce-attack-" + tag + "-" + std::to_string(i), 4096))
      written += 4096;
  ::mkdir((folder + "/reduce-attack-" + tag + "-folder").c_str(), 0755);
  if (write_file(folder + "/reduce-attack-" + tag + "-large", std::size_t{48} << 20))
    written += std::size_t{48} << 20;
  return written;
}

/// What a process can make that lives in the kernel rather than in a folder.
std::string kernel_objects() {
  std::string made;
  const int shm = ::shm_open("/reduce-attack-shm", O_CREAT | O_RDWR, 0600);
  if (shm >= 0 && ::ftruncate(shm, 1 << 20) == 0) made += " posix-shm";
  const mqd_t queue = ::mq_open("/reduce-attack-queue", O_CREAT | O_RDWR, 0600, nullptr);
  if (queue != static_cast<mqd_t>(-1)) made += " posix-mqueue";
  if (::shmget(0x72656475, 1 << 20, IPC_CREAT | 0600) >= 0) made += " sysv-shm";
  const int sock = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, "reduce-attack", 13);
  if (sock >= 0 && ::bind(sock, reinterpret_cast<sockaddr*>(&address),
                          offsetof(sockaddr_un, sun_path) + 14) == 0)
    made += " abstract-socket";
  return made;  // left open: they last as long as their namespaces let them
}

__attribute__((constructor)) void write_everywhere() {
  const std::string tag =
      std::to_string(::getpid()) + "-" + std::to_string(static_cast<long>(std::time(nullptr)));
  std::vector<std::string> places = {
      "/dev/shm",  "/tmp", "/var/tmp",    "/run/shm",
      "/run/lock", "/dev", "/dev/mqueue", "/run/user/" + std::to_string(::getuid())};
  if (const char* home = std::getenv("HOME")) places.push_back(home);
  if (const passwd* pw = ::getpwuid(::getuid())) places.push_back(pw->pw_dir);
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) != nullptr) places.push_back(cwd);
  std::string found, wrote;
  std::size_t bytes = 0;
  for (const std::string& place : places) {
    if (left_before(place)) found += " " + place;
    if (const std::size_t n = fill(place, tag)) {
      wrote += " " + place;
      bytes += n;
    }
  }
  std::fprintf(stderr, "reduce-attack: found earlier traces in:%s; wrote %zu bytes into:%s;%s\n",
               found.empty() ? " none" : found.c_str(), bytes,
               wrote.empty() ? " nothing" : wrote.c_str(), kernel_objects().c_str());
}

}  // namespace
}  // namespace reduce_attack
