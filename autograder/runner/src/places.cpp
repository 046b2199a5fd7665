#include <reduce_runner/places.hpp>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace reduce::runner {
namespace {

/// The name of the filesystem whose statfs magic is \p magic.
std::string filesystem_name(unsigned long magic) {
  static const std::pair<unsigned long, const char*> kNames[] = {
      {0x01021994, "tmpfs"}, {0xEF53, "ext4"},          {0x794c7630, "overlay"},
      {0x58465342, "xfs"},   {0x9123683E, "btrfs"},     {0x6969, "nfs"},
      {0x2fc12fc1, "zfs"},   {0x65735546, "fuse"},      {0x01021997, "9p"},
      {0x858458f6, "ramfs"}, {0x958458f6, "hugetlbfs"}, {0x19800202, "mqueue"},
      {0x1cd1, "devpts"},    {0x63677270, "cgroup2"},   {0x27e0eb, "cgroup"},
      {0x62656572, "sysfs"}, {0x9fa0, "proc"},          {0xFF534D42, "cifs"}};
  for (const auto& [m, name] : kNames)
    if (m == magic) return name;
  char hex[32];
  std::snprintf(hex, sizeof hex, "fs 0x%lx", magic);
  return hex;
}

WritableFolder folder(const std::string& path) {
  WritableFolder f{path, "unknown", 0};
  struct statfs fs{};
  if (::statfs(path.c_str(), &fs) == 0)
    f.filesystem = filesystem_name(static_cast<unsigned long>(fs.f_type));
  struct statvfs vfs{};
  if (::statvfs(path.c_str(), &vfs) == 0)
    f.bytes = static_cast<std::uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  return f;
}

std::string size_text(std::uint64_t bytes) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  char text[48];
  if (bytes < 1024 * kMiB)
    std::snprintf(text, sizeof text, "%.0f MiB", static_cast<double>(bytes) / kMiB);
  else
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1024 * kMiB));
  return text;
}

/// Lines in \p file after its first \p header lines; -1 when it cannot be read.
int lines_after(const char* file, int header) {
  std::ifstream in(file);
  if (!in) return -1;
  int count = -header;
  for (std::string line; std::getline(in, line);) ++count;
  return std::max(count, 0);
}

/// A list for the summary: the first few, then how many more.
std::string listed(const std::vector<std::string>& items, std::size_t shown) {
  if (items.empty()) return "none";
  std::string text;
  for (std::size_t i = 0; i < items.size() && i < shown; ++i)
    text += (i == 0 ? "" : ", ") + items[i];
  if (items.size() > shown) text += " and " + std::to_string(items.size() - shown) + " more";
  return text;
}

/// The mount points of this process's mount namespace (/proc/self/mountinfo, octal escapes
/// undone): a folder lists what lies under a mount, so each of them is looked at itself.
std::set<std::string> mount_points() {
  std::set<std::string> points;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point, plain;
    fields >> id >> parent >> device >> root >> point;
    for (std::size_t i = 0; i < point.size(); ++i) {
      if (point[i] == '\\' && i + 3 < point.size()) {
        plain += static_cast<char>(std::strtol(point.substr(i + 1, 3).c_str(), nullptr, 8));
        i += 3;
      } else {
        plain += point[i];
      }
    }
    points.insert(plain);
  }
  return points;
}

/// A folder still to read: whether its parent was writable, and on which filesystem.
struct Pending {
  std::string path;
  bool parent_writable = false;
  dev_t parent_device = 0;
};

/// Reads the folder \p at: notes what it is and holds, and queues its folders on \p stack.
/// False once a limit is reached.
bool read_folder(const Pending& at, Places& p, std::vector<Pending>& stack,
                 const PlacesLimits& limits, std::chrono::steady_clock::time_point deadline,
                 const std::set<std::string>& mounts) {
  struct stat st{};
  if (::lstat(at.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return true;
  const bool writable = ::access(at.path.c_str(), W_OK) == 0;
  // A folder inside a writable one of the same filesystem adds no place.
  if (writable && !(at.parent_writable && at.parent_device == st.st_dev))
    p.writable.push_back(folder(at.path));
  DIR* dir = ::opendir(at.path.c_str());
  if (dir == nullptr) return true;
  const std::string prefix = at.path == "/" ? "" : at.path;
  bool within = true;
  for (dirent* e = ::readdir(dir); e != nullptr; e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (++p.entries > limits.entries ||
        (p.entries % 1024 == 0 && std::chrono::steady_clock::now() > deadline)) {
      within = false;
      break;
    }
    const std::string path = prefix + "/" + name;
    if (path == "/proc" || path == "/sys") continue;  // the kernel's, and the sandbox's own
    unsigned char type = e->d_type;
    // A device bound onto a file of a tmpfs (a sandbox's /dev) is listed as that file.
    if (type == DT_UNKNOWN || mounts.count(path) != 0) {
      struct stat child{};
      if (::lstat(path.c_str(), &child) != 0) continue;
      type = S_ISDIR(child.st_mode)    ? DT_DIR
             : S_ISSOCK(child.st_mode) ? DT_SOCK
             : S_ISFIFO(child.st_mode) ? DT_FIFO
             : S_ISCHR(child.st_mode)  ? DT_CHR
             : S_ISBLK(child.st_mode)  ? DT_BLK
                                       : DT_REG;
    }
    if (type == DT_DIR) stack.push_back({path, writable, st.st_dev});
    if (type == DT_SOCK) p.sockets.push_back(path);
    if (type == DT_FIFO) p.fifos.push_back(path);
    if (type == DT_CHR || type == DT_BLK) p.devices.push_back(path);
  }
  ::closedir(dir);
  return within;
}

}  // namespace

Places find_places(const std::string& root, const PlacesLimits& limits) {
  Places p;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::duration<double>(limits.seconds));
  std::string top = root;
  while (top.size() > 1 && top.back() == '/') top.pop_back();
  std::vector<Pending> stack = {{top}};
  const std::set<std::string> mounts = mount_points();
  while (!stack.empty() && p.complete) {
    const Pending at = std::move(stack.back());
    stack.pop_back();
    p.complete = read_folder(at, p, stack, limits, deadline, mounts);
  }
  const auto by_path = [](const WritableFolder& a, const WritableFolder& b) {
    return a.path < b.path;
  };
  std::sort(p.writable.begin(), p.writable.end(), by_path);
  for (auto* list : {&p.devices, &p.sockets, &p.fifos}) std::sort(list->begin(), list->end());
  // This IPC namespace's System V objects, this network namespace's sockets and interfaces.
  const int shm = lines_after("/proc/sysvipc/shm", 1);
  const int msg = lines_after("/proc/sysvipc/msg", 1);
  const int sem = lines_after("/proc/sysvipc/sem", 1);
  p.sysv_objects = shm < 0 || msg < 0 || sem < 0 ? -1 : shm + msg + sem;
  p.unix_sockets = lines_after("/proc/net/unix", 1);
  std::ifstream dev("/proc/net/dev");
  std::string line;
  for (int i = 0; std::getline(dev, line); ++i) {
    const std::size_t colon = line.find(':');
    if (i < 2 || colon == std::string::npos) continue;
    const std::size_t start = line.find_first_not_of(' ');
    p.interfaces.push_back(line.substr(start, colon - start));
  }
  return p;
}

std::string Places::summary() const {
  std::string text = "places: writable ";
  for (std::size_t i = 0; i < writable.size(); ++i)
    text += (i == 0 ? "" : ", ") + writable[i].path + " (" + writable[i].filesystem + ", " +
            size_text(writable[i].bytes) + ")";
  if (writable.empty()) text += "none";
  std::vector<std::string> names;
  for (const std::string& d : devices) names.push_back(d.rfind("/dev/", 0) == 0 ? d.substr(5) : d);
  text += "; devices " + listed(names, 24);
  text += "; sockets on the filesystem " + listed(sockets, 4);
  text += "; named pipes " + listed(fifos, 4);
  text += "; System V IPC objects " + (sysv_objects < 0 ? "unknown" : std::to_string(sysv_objects));
  text += "; Unix sockets in its network " +
          (unix_sockets < 0 ? "unknown" : std::to_string(unix_sockets));
  text += "; network " + listed(interfaces, 8);
  if (!complete) text += "; the walk stopped after " + std::to_string(entries) + " entries";
  return text;
}

std::string Places::details() const {
  std::string text;
  for (const WritableFolder& f : writable)
    text += "writable " + f.path + " " + f.filesystem + " " + std::to_string(f.bytes) + "\n";
  for (const std::string& d : devices) text += "device " + d + "\n";
  for (const std::string& s : sockets) text += "socket " + s + "\n";
  for (const std::string& f : fifos) text += "pipe " + f + "\n";
  text += "sysv " + std::to_string(sysv_objects) + "\n";
  text += "unix " + std::to_string(unix_sockets) + "\n";
  for (const std::string& i : interfaces) text += "interface " + i + "\n";
  if (!complete) text += "incomplete " + std::to_string(entries) + "\n";
  return text;
}

}  // namespace reduce::runner
