#include <reduce_grade/processes/confine.hpp>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

namespace reduce::grade {
namespace {

/// A failed step: what, and the system's reason.
struct StepFailed {
  std::string why;
};

[[noreturn]] void fail(const std::string& what) {
  throw StepFailed{what + ": " + std::strerror(errno)};
}

void write_proc(const char* file, const std::string& text) {
  const int fd = ::open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail(file);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!ok) fail(file);
}

/// A new user and mount namespace (plus \p extra: network, PID, IPC) in which this process keeps
/// its user and group ids.
void enter_namespaces(uid_t uid, gid_t gid, int extra) {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | extra) != 0) fail("unshare");
  write_proc("/proc/self/setgroups", "deny");
  write_proc("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1");
  write_proc("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1");
}

/// The flags a remount must keep: the kernel refuses to clear the ones it locked.
unsigned long kept_flags(const std::string& path) {
  struct statvfs st{};
  if (::statvfs(path.c_str(), &st) != 0) return 0;
  unsigned long flags = 0;
  if (st.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (st.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (st.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (st.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (st.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (st.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  return flags;
}

void remount(const std::string& path, bool read_only) {
  const unsigned long flags = MS_REMOUNT | MS_BIND | (read_only ? MS_RDONLY : 0) | kept_flags(path);
  if (::mount(nullptr, path.c_str(), nullptr, flags, nullptr) != 0)
    fail("remounting " + path + (read_only ? " read-only" : " writable"));
}

bool under(const std::string& path, const std::string& top) {
  return path == top || (path.rfind(top + "/", 0) == 0);
}

/// The mount points of this namespace (/proc/self/mountinfo, octal escapes undone).
std::vector<std::string> mount_points() {
  std::ifstream in("/proc/self/mountinfo");
  std::vector<std::string> points;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point;
    fields >> id >> parent >> device >> root >> point;
    std::string plain;
    for (std::size_t i = 0; i < point.size(); ++i) {
      if (point[i] == '\\' && i + 3 < point.size()) {
        plain += static_cast<char>(std::stoi(point.substr(i + 1, 3), nullptr, 8));
        i += 3;
      } else {
        plain += point[i];
      }
    }
    points.push_back(plain);
  }
  return points;
}

/// Makes every mount read-only but /dev (the GPU's device files; the view replaces it with one
/// of its own) and /proc (the sandbox mounts its own). /sys too: the CUDA driver only reads it,
/// and a writable cgroup folder there would outlive the sandbox.
void make_host_read_only() {
  for (const std::string& point : mount_points()) {
    if (under(point, "/dev") || under(point, "/proc")) continue;
    struct stat st{};
    if (::stat(point.c_str(), &st) != 0) continue;  // covered by a later mount
    if (::mount(nullptr, point.c_str(), nullptr,
                MS_REMOUNT | MS_BIND | MS_RDONLY | kept_flags(point), nullptr) != 0 &&
        errno != EINVAL &&  // not a mount point any more (covered)
        !(under(point, "/sys") && (errno == EACCES || errno == EPERM)))  // the kernel's to guard
      fail("remounting " + point + " read-only");
  }
}

/// A mount point for a folder or file shown inside a hidden (empty) folder.
void make_mount_point(const std::string& path, bool folder) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0) return;
  for (std::size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1))
    if (::mkdir(path.substr(0, at).c_str(), 0755) != 0 && errno != EEXIST)
      fail("creating " + path.substr(0, at));
  if (folder ? ::mkdir(path.c_str(), 0755) != 0
             : ::close(::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) != 0)
    fail("creating " + path);
}

/// An empty tmpfs on \p path (a folder); false when there is nothing to hide. It takes only the
/// mount points of later steps, and becomes read-only once they are made.
bool hide(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;  // nothing to hide
  if (::mount("tmpfs", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=1m") != 0)
    fail("hiding " + path);
  return true;
}

/// An empty writable tmpfs of its own on \p path, holding at most \p bytes.
void scratch(const std::string& path, std::uint64_t bytes) {
  make_mount_point(path, true);
  const std::string options = "mode=1777,size=" + std::to_string(bytes);
  if (::mount("tmpfs", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0)
    fail("mounting a scratch folder on " + path);
}

/// A symbolic link at \p path to \p target; one that is there already is kept (a /dev that is
/// the machine's again has its own).
void make_link(const std::string& path, const std::string& target) {
  if (::symlink(target.c_str(), path.c_str()) == 0) return;
  const int why = errno;
  char there[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), there, sizeof there);
  if (why == EEXIST && n >= 0 && std::string(there, static_cast<std::size_t>(n)) == target) return;
  errno = why;
  fail("linking " + path);
}

/// Binds what \p fd (opened before any step) names onto \p path.
void show(const std::string& path, int fd, bool writable) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) fail("reading " + path);
  make_mount_point(path, S_ISDIR(st.st_mode));
  const std::string source = "/proc/self/fd/" + std::to_string(fd);
  if (::mount(source.c_str(), path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
    fail("showing " + path);
  remount(path, !writable);
}

/// Mounts, in the new PID namespace, a /proc of its own: it lists only the sandbox's processes.
/// Where the kernel refuses (a container that masks parts of the host's /proc), the host's /proc
/// stays; the PID namespace still keeps every process outside from being signalled.
void mount_own_proc() {
  (void)::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
}

/// The namespaces and the view. Called by the sandbox's first process (PID 1 of the new PID
/// namespace is its child, which calls lock()).
void apply(const std::vector<MountStep>& steps, uid_t uid, gid_t gid) {
  enter_namespaces(uid, gid, CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC);
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    fail("making mounts private");
  // Opened in this namespace and before any step hides them.
  using Kind = MountStep::Kind;
  std::vector<int> fds(steps.size(), -1);
  for (std::size_t i = 0; i < steps.size(); ++i)
    if ((steps[i].kind == Kind::kShow || steps[i].kind == Kind::kWritable ||
         steps[i].kind == Kind::kDevice) &&
        (fds[i] = ::open(steps[i].path.c_str(), O_PATH | O_CLOEXEC)) < 0)
      fail("opening " + steps[i].path);
  make_host_read_only();
  std::vector<bool> hidden(steps.size(), false);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const MountStep& s = steps[i];
    if (s.kind == Kind::kHide)
      hidden[i] = hide(s.path);
    else if (s.kind == Kind::kScratch)
      scratch(s.path, s.bytes);
    else if (s.kind == Kind::kLink)
      make_link(s.path, s.target);
    else  // a device read-only too: still usable, but its times and mode cannot be changed
      show(s.path, fds[i], s.kind == Kind::kWritable);
  }
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  // The hidden folders took their mount points; now nothing more can be written there (a later
  // step on the very same path is on top, and keeps its own state).
  for (std::size_t i = 0; i < steps.size(); ++i) {
    bool covered = false;
    for (std::size_t j = i + 1; j < steps.size(); ++j) covered |= steps[j].path == steps[i].path;
    if (hidden[i] && !covered) remount(steps[i].path, true);
  }
}

/// In the new PID namespace: its own /proc, then a second user namespace that locks every mount
/// (the command can neither unmount them nor make them writable), and no new privileges.
void lock(uid_t uid, gid_t gid) {
  mount_own_proc();
  enter_namespaces(uid, gid, 0);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs");
}

/// Ends this process as \p status says the command ended: the same exit code, or the same
/// signal, so that whoever started the sandbox reads the command's own end.
[[noreturn]] void end_like(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::kill(::getpid(), sig);
    ::_exit(128 + sig);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 3);
}

/// PID 1 of the sandbox: starts the command as PID 2, reaps every orphan until the command ends,
/// and passes the command's wait status to the first process through \p status_fd. When it
/// returns, the kernel ends whatever is left in the namespace.
[[noreturn]] void sandbox_init(char** command, const std::string& cwd, int status_fd) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "reduce-grade confine: cannot start %s: %s\n", command[0],
                 std::strerror(errno));
    ::_exit(3);
  }
  if (pid == 0) {
    ::close(status_fd);
    if (cwd.empty() || ::chdir(cwd.c_str()) != 0) (void)::chdir("/");
    ::execvp(command[0], command);
    std::fprintf(stderr, "reduce-grade confine: cannot start %s: %s\n", command[0],
                 std::strerror(errno));
    ::_exit(3);
  }
  int status = 0;
  for (;;) {
    int st = 0;
    const pid_t ended = ::waitpid(-1, &st, 0);
    if (ended == pid) {
      status = st;
      break;
    }
    if (ended < 0 && errno != EINTR) break;
  }
  (void)!::write(status_fd, &status, sizeof status);
  ::_exit(0);
}

int usage(const char* why) {
  std::fprintf(stderr,
               "reduce-grade confine: %s\n"
               "usage: reduce-grade confine [--hide=FOLDER | --show=PATH | --writable=FOLDER |\n"
               "         --scratch=FOLDER:BYTES | --device=PATH | --link=PATH:TARGET]... "
               "-- COMMAND [ARG]...\n",
               why);
  return 2;
}

/// The step \p arg spells (MountStep::argument()); nothing when it spells none.
std::optional<MountStep> parse_step(const std::string& arg) {
  using Kind = MountStep::Kind;
  static const std::pair<const char*, Kind> kFlags[] = {
      {"--hide=", Kind::kHide},         {"--show=", Kind::kShow},
      {"--writable=", Kind::kWritable}, {"--scratch=", Kind::kScratch},
      {"--device=", Kind::kDevice},     {"--link=", Kind::kLink}};
  for (const auto& [flag, kind] : kFlags) {
    const std::size_t n = std::strlen(flag);
    if (arg.compare(0, n, flag) != 0 || arg.size() == n) continue;
    MountStep step{kind, arg.substr(n)};
    if (kind == Kind::kScratch) {  // PATH:BYTES, the size after the last colon
      const std::size_t colon = step.path.rfind(':');
      if (colon == std::string::npos) return std::nullopt;
      const std::string size = step.path.substr(colon + 1);
      const auto [end, error] = std::from_chars(size.data(), size.data() + size.size(), step.bytes);
      if (error != std::errc() || end != size.data() + size.size() || step.bytes == 0)
        return std::nullopt;
      step.path.resize(colon);
    } else if (kind == Kind::kLink) {  // PATH:TARGET, the target after the first colon
      const std::size_t colon = step.path.find(':');
      if (colon == std::string::npos || colon + 1 == step.path.size()) return std::nullopt;
      step.target = step.path.substr(colon + 1);
      step.path.resize(colon);
    }
    if (step.path.empty()) return std::nullopt;
    return step;
  }
  return std::nullopt;
}

}  // namespace

std::string MountStep::argument() const {
  switch (kind) {
    case Kind::kHide:
      return "--hide=" + path;
    case Kind::kShow:
      return "--show=" + path;
    case Kind::kWritable:
      return "--writable=" + path;
    case Kind::kScratch:
      return "--scratch=" + path + ":" + std::to_string(bytes);
    case Kind::kDevice:
      return "--device=" + path;
    case Kind::kLink:
      return "--link=" + path + ":" + target;
  }
  return {};
}

int confine_main(int argc, char** argv) {
  std::vector<MountStep> steps;
  int command = -1;
  for (int i = 1; i < argc && command < 0; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      command = i + 1;
    } else if (std::optional<MountStep> step = parse_step(arg)) {
      steps.push_back(std::move(*step));
    } else {
      return usage(("unknown argument " + arg).c_str());
    }
  }
  if (command < 0 || command >= argc) return usage("no command after --");
  for (const MountStep& step : steps)
    if (step.path.front() != '/') return usage(("not an absolute path: " + step.path).c_str());
  char cwd[PATH_MAX];
  const std::string here = ::getcwd(cwd, sizeof cwd) != nullptr ? cwd : "";
  // Whoever started the sandbox may die: so does the sandbox (its PID 1 takes the rest along).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  int status_pipe[2];
  try {
    apply(steps, uid, gid);
    if (::pipe2(status_pipe, O_CLOEXEC) != 0) fail("pipe");
  } catch (const StepFailed& e) {
    std::fprintf(stderr, "reduce-grade confine: cannot confine: %s\n", e.why.c_str());
    return 3;
  }
  const pid_t init = ::fork();
  if (init < 0) {
    std::fprintf(stderr, "reduce-grade confine: cannot confine: fork: %s\n", std::strerror(errno));
    return 3;
  }
  if (init == 0) {  // PID 1 of the new PID namespace
    ::close(status_pipe[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    try {
      lock(uid, gid);
    } catch (const StepFailed& e) {
      std::fprintf(stderr, "reduce-grade confine: cannot confine: %s\n", e.why.c_str());
      ::_exit(3);
    }
    sandbox_init(argv + command, here, status_pipe[1]);
  }
  ::close(status_pipe[1]);
  int init_status = 0;
  while (::waitpid(init, &init_status, 0) < 0 && errno == EINTR) {
  }
  int status = 0;
  if (::read(status_pipe[0], &status, sizeof status) != static_cast<ssize_t>(sizeof status))
    status = init_status;  // PID 1 itself ended early (it could not lock the view)
  end_like(status);
}

}  // namespace reduce::grade
