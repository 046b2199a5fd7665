#include "confine.hpp"

#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace reduce::remote {
namespace {

std::string failed(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

bool write_proc(const char* file, const std::string& text) {
  FILE* f = std::fopen(file, "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs(text.c_str(), f) >= 0;
  return std::fclose(f) == 0 && ok;
}

/// A new user and mount namespace in which this process keeps its own user and group ids.
std::string enter_namespaces(uid_t uid, gid_t gid) {
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return failed("unshare");
  if (!write_proc("/proc/self/setgroups", "deny")) return failed("/proc/self/setgroups");
  if (!write_proc("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1"))
    return failed("/proc/self/uid_map");
  if (!write_proc("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1"))
    return failed("/proc/self/gid_map");
  return "";
}

/// The flags a remount must keep: the kernel refuses to clear the ones it locked.
unsigned long kept_flags(const std::string& path) {
  struct statvfs st {};
  if (statvfs(path.c_str(), &st) != 0) return 0;
  unsigned long flags = 0;
  if (st.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (st.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (st.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (st.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (st.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (st.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  return flags;
}

}  // namespace

std::string confine_read_only(const std::vector<std::string>& paths,
                              const std::vector<std::string>& writable) {
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  if (std::string why = enter_namespaces(uid, gid); !why.empty()) return why;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return failed("making mounts private");
  for (const std::string& path : paths) {
    const unsigned long keep = kept_flags(path);
    if (mount(path.c_str(), path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      return failed("binding " + path);
    if (mount(nullptr, path.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, nullptr) !=
        0)
      return failed("remounting " + path + " read-only");
  }
  for (const std::string& path : writable) {
    const unsigned long keep = kept_flags(path) & ~static_cast<unsigned long>(MS_RDONLY);
    if (mount(path.c_str(), path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      return failed("binding " + path);
    if (mount(nullptr, path.c_str(), nullptr, MS_REMOUNT | MS_BIND | keep, nullptr) != 0)
      return failed("remounting " + path + " writable");
  }
  // Entering a second user namespace locks every mount above: the lab, although it holds
  // capabilities in its own namespace, can neither unmount them nor make them writable.
  if (std::string why = enter_namespaces(uid, gid); !why.empty()) return why;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return failed("no_new_privs");
  return "";
}

}  // namespace reduce::remote
