#include <reduce_runner/walls.hpp>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

static_assert(reduce::runner::kWallSignal == SIGSYS);

namespace reduce::runner {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
#error "the runner's seccomp filter knows x86-64 and AArch64"
#endif

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self 446
#endif

/// struct landlock_ruleset_attr as of ABI 6, whatever the installed headers know.
struct LandlockRulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};
constexpr std::uint32_t kLandlockVersion = 1;             // LANDLOCK_CREATE_RULESET_VERSION
constexpr std::uint64_t kLandlockMakeBlock = 1ULL << 11;  // LANDLOCK_ACCESS_FS_MAKE_BLOCK
constexpr std::uint64_t kLandlockScopeAbstractUnix = 1ULL << 0;
constexpr std::uint64_t kLandlockScopeSignal = 1ULL << 1;

/// System calls that end the process at once.
constexpr long kForbidden[] = {
#ifdef SYS_fork
    SYS_fork,
#endif
#ifdef SYS_vfork
    SYS_vfork,
#endif
    SYS_execve,
    SYS_execveat,
    SYS_ptrace,
    SYS_process_vm_readv,
    SYS_process_vm_writev,
    SYS_pidfd_open,
    SYS_pidfd_getfd,
    SYS_pidfd_send_signal,
    SYS_tkill,
    SYS_mount,
    SYS_umount2,
    SYS_pivot_root,
    SYS_chroot,
    SYS_unshare,
    SYS_setns,
    SYS_kcmp,
    SYS_process_madvise,
    SYS_open_tree,
    SYS_move_mount,
    SYS_fsopen,
    SYS_fsconfig,
    SYS_fsmount,
    SYS_fspick,
    SYS_mount_setattr,
    SYS_bpf,
    SYS_perf_event_open,
    SYS_userfaultfd,
    SYS_seccomp,
};

sock_filter statement(std::uint16_t code, std::uint32_t k) {
  return sock_filter{code, 0, 0, k};
}
sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t yes, std::uint8_t no) {
  return sock_filter{code, yes, no, k};
}

constexpr std::uint32_t kNr = offsetof(seccomp_data, nr);
constexpr std::uint32_t kArg0 = offsetof(seccomp_data, args[0]);  // low 32 bits (little endian)

/// The filter, for a process whose pid (in its own namespace) is \p self.
std::vector<sock_filter> filter_program(std::uint32_t self) {
  std::vector<sock_filter> f;
  const auto kill = [&] { f.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)); };
  const auto allow = [&] { f.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)); };
  f.push_back(statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  kill();  // another architecture's system calls (x32, i386 through int 0x80)
  f.push_back(statement(BPF_LD | BPF_W | BPF_ABS, kNr));
#if defined(__x86_64__)
  f.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  // __X32_SYSCALL_BIT
  kill();
#endif
  for (long nr : kForbidden) {
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1));
    kill();
  }
  // clone3 hides its flags in memory: ENOSYS, and the C library starts its threads by clone.
  f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
  f.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
  // CPU affinity: refused (EPERM). With several GPUs, each GPU's worker and all it starts run on
  // CPUs of their own (the grader's cpu_share()); a lab widening its own affinity would load the
  // CPUs of another GPU's benchmark, which halves its speed.
  f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setaffinity, 0, 1));
  f.push_back(statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
  // clone: threads only.
  f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4));
  f.push_back(statement(BPF_LD | BPF_W | BPF_ABS, kArg0));
  f.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1));
  allow();
  kill();
  // Signals: to this process only (kill(0) and kill(-1) reach others).
  for (long nr :
       {long{SYS_kill}, long{SYS_tgkill}, long{SYS_rt_sigqueueinfo}, long{SYS_rt_tgsigqueueinfo}}) {
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 4));
    f.push_back(statement(BPF_LD | BPF_W | BPF_ABS, kArg0));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, self, 0, 1));
    allow();
    kill();
  }
  allow();
  return f;
}

}  // namespace

std::string Walls::describe() const {
  std::string text = seccomp ? "seccomp" : "no seccomp";
  if (landlock_abi > 0)
    text += "; Landlock ABI " + std::to_string(landlock_abi) +
            (landlock_scoped ? " (ptrace, signals, abstract sockets)" : " (ptrace)");
  else
    text += "; no Landlock";
  if (!problem.empty()) text += " (" + problem + ")";
  return text;
}

void raise_landlock(Walls& walls) {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kLandlockVersion);
  if (abi <= 0) {
    walls.problem +=
        std::string(walls.problem.empty() ? "" : "; ") + "Landlock: " + std::strerror(errno);
    return;
  }
  LandlockRulesetAttr attr;
  attr.handled_access_fs = kLandlockMakeBlock;  // a ruleset must handle something; no rule
  if (abi >= 6) attr.scoped = kLandlockScopeAbstractUnix | kLandlockScopeSignal;
  const long fd = ::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (fd < 0 || ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      ::syscall(SYS_landlock_restrict_self, fd, 0) != 0) {
    walls.problem +=
        std::string(walls.problem.empty() ? "" : "; ") + "Landlock: " + std::strerror(errno);
    if (fd >= 0) ::close(static_cast<int>(fd));
    return;
  }
  ::close(static_cast<int>(fd));
  walls.landlock_abi = static_cast<int>(abi);
  walls.landlock_scoped = abi >= 6;
}

void raise_seccomp(Walls& walls) {
  std::vector<sock_filter> program = filter_program(static_cast<std::uint32_t>(::getpid()));
  sock_fprog prog{static_cast<unsigned short>(program.size()), program.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
    walls.problem +=
        std::string(walls.problem.empty() ? "" : "; ") + "seccomp: " + std::strerror(errno);
    return;
  }
  walls.seccomp = true;
}

}  // namespace reduce::runner
