#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/isolation.hpp>
#include <reduce_grade/processes/process.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

namespace reduce::grade {
namespace fs = std::filesystem;

namespace {

bool switched_off(const char* variable) {
  const char* v = std::getenv(variable);
  return v != nullptr && (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0);
}

std::string absolute_path(const fs::path& p) {
  std::error_code ec;
  return fs::weakly_canonical(fs::absolute(p, ec), ec).string();
}

/// The reduce-grade executable that provides `confine`: this one, or the one beside this
/// program (the grader's tests).
fs::path grader_program() {
  std::error_code ec;
  const fs::path self = fs::canonical("/proc/self/exe", ec);
  if (self.filename() == "reduce-grade") return self;
  const fs::path beside = self.parent_path() / "reduce-grade";
  return fs::is_regular_file(beside, ec) ? beside : fs::path();
}

/// bubblewrap's words for \p steps: the same namespaces and view as `reduce-grade confine`
/// (bubblewrap 0.5 or later: --perms and --size).
std::vector<std::string> bubblewrap_command(const fs::path& bwrap,
                                            const std::vector<MountStep>& steps) {
  // Its own PID 1 in front of the command and a /proc of the new PID namespace, as confine.
  // The machine read-only (devices unusable: own_places() shows again those the lab needs).
  std::vector<std::string> cmd = {bwrap.string(),
                                  "--die-with-parent",
                                  "--unshare-user",
                                  "--unshare-net",
                                  "--unshare-uts",
                                  "--unshare-pid",
                                  "--unshare-ipc",
                                  "--ro-bind",
                                  "/",
                                  "/",
                                  "--proc",
                                  "/proc"};
  std::vector<std::string> read_only_at_end;
  std::error_code ec;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const MountStep& s = steps[i];
    switch (s.kind) {
      case MountStep::Kind::kHide:
        if (!fs::is_directory(s.path, ec)) break;
        cmd.insert(cmd.end(), {"--perms", "0700", "--size", "1048576", "--tmpfs", s.path});
        if (std::none_of(steps.begin() + static_cast<std::ptrdiff_t>(i) + 1, steps.end(),
                         [&](const MountStep& later) { return later.path == s.path; }))
          read_only_at_end.push_back(s.path);
        break;
      case MountStep::Kind::kScratch:
        cmd.insert(cmd.end(),
                   {"--perms", "01777", "--size", std::to_string(s.bytes), "--tmpfs", s.path});
        break;
      case MountStep::Kind::kDevice:  // read-write: bubblewrap's read-only binds disable devices
        cmd.insert(cmd.end(), {"--dev-bind", s.path, s.path});
        break;
      case MountStep::Kind::kLink:
        cmd.insert(cmd.end(), {"--symlink", s.target, s.path});
        break;
      case MountStep::Kind::kShow:
      case MountStep::Kind::kWritable:
        cmd.insert(cmd.end(),
                   {s.kind == MountStep::Kind::kShow ? "--ro-bind" : "--bind", s.path, s.path});
        break;
    }
  }
  for (const std::string& path : read_only_at_end) cmd.insert(cmd.end(), {"--remount-ro", path});
  cmd.push_back("--");
  return cmd;
}

/// Whether \p prefix starts `true`; else why not.
std::string try_prefix(std::vector<std::string> prefix) {
  ProcessSpec probe;
  probe.argv = std::move(prefix);
  probe.argv.push_back("true");
  probe.timeout_s = 30;
  probe.output_cap = 1 << 16;
  const ProcessResult r = run_process(probe);
  return r.succeeded() ? "" : r.describe() + ": " + r.output.substr(0, 200);
}

}  // namespace

std::vector<MountStep> own_places(std::uint64_t tmp_bytes) {
  using Kind = MountStep::Kind;
  // Each line one item: to give one back (were CUDA to need the host's), take it out here.
  std::vector<MountStep> steps = {
      {Kind::kScratch, "/tmp", tmp_bytes},  // an empty /tmp of its own, capped
      {Kind::kHide, "/run/user"},           // the user's session bus and agents, their sockets
      {Kind::kHide, "/dev"},                // a /dev of its own, read-only, holding only:
  };
  std::error_code ec;
  const auto device = [&](const std::string& path) {
    if (fs::exists(fs::symlink_status(path, ec))) steps.push_back({Kind::kDevice, path});
  };
  // No tty (a lab would write to the grader's terminal), random, full or ptmx: CUDA needs none.
  for (const char* node : {"null", "zero", "urandom"}) device(std::string("/dev/") + node);
  // The GPU: the NVIDIA driver's control, memory (UVM) and mode-setting devices, each GPU, and
  // the capabilities of MIG instances.
  std::vector<std::string> gpus;
  for (const fs::directory_entry& e : fs::directory_iterator("/dev", ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 6 && name.compare(0, 6, "nvidia") == 0 &&
        name.find_first_not_of("0123456789", 6) == std::string::npos)
      gpus.push_back(e.path().string());
  }
  std::sort(gpus.begin(), gpus.end());
  for (const char* node : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"})
    device(std::string("/dev/") + node);
  for (const std::string& gpu : gpus) device(gpu);
  // Each file, not the folder: a folder bound from the machine's /dev would take writes.
  std::vector<std::string> caps;
  for (const fs::directory_entry& e : fs::directory_iterator("/dev/nvidia-caps", ec))
    caps.push_back(e.path().string());
  std::sort(caps.begin(), caps.end());
  for (const std::string& cap : caps) device(cap);
  // What programs expect of any /dev (a sanitizer writes its report to /dev/fd/5).
  steps.push_back({Kind::kLink, "/dev/fd", 0, "/proc/self/fd"});
  steps.push_back({Kind::kLink, "/dev/stdin", 0, "/proc/self/fd/0"});
  steps.push_back({Kind::kLink, "/dev/stdout", 0, "/proc/self/fd/1"});
  steps.push_back({Kind::kLink, "/dev/stderr", 0, "/proc/self/fd/2"});
  steps.push_back({Kind::kScratch, "/dev/shm", kOwnShmBytes});  // POSIX shared memory
  return steps;
}

namespace {

/// \p steps without the hidden folders that a later hidden or scratch folder covers: they would
/// vanish under it, and a read-only remount of what is no longer there fails the sandbox (a
/// report folder inside the batch folder that is hidden after it).
std::vector<MountStep> without_covered(std::vector<MountStep> steps) {
  const auto under = [](const std::string& path, const std::string& folder) {
    return path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
           (folder.back() == '/' || path[folder.size()] == '/');
  };
  std::vector<MountStep> kept;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const bool covered = steps[i].kind == MountStep::Kind::kHide &&
                         std::any_of(steps.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                     steps.end(), [&](const MountStep& later) {
                                       return (later.kind == MountStep::Kind::kHide ||
                                               later.kind == MountStep::Kind::kScratch) &&
                                              under(steps[i].path, later.path);
                                     });
    if (!covered) kept.push_back(steps[i]);
  }
  return kept;
}

}  // namespace

std::vector<MountStep> runner_view(const std::vector<fs::path>& hidden,
                                   const std::vector<fs::path>& readable,
                                   const std::vector<fs::path>& writable) {
  std::vector<MountStep> steps = own_places(kLabTmpBytes);
  std::error_code ec;
  for (const fs::path& p : hidden) steps.push_back({MountStep::Kind::kHide, absolute_path(p)});
  for (const fs::path& p : readable)
    if (fs::exists(p, ec)) steps.push_back({MountStep::Kind::kShow, absolute_path(p)});
  for (const fs::path& p : writable)
    if (fs::exists(p, ec)) steps.push_back({MountStep::Kind::kWritable, absolute_path(p)});
  return without_covered(std::move(steps));
}

std::vector<MountStep> build_view(const fs::path& course_root, const std::vector<fs::path>& hidden,
                                  const fs::path& build_dir) {
  const std::string root = absolute_path(course_root);
  // The course again (it may lie in /tmp), then what of it the build must not read.
  std::vector<MountStep> steps = own_places(kBuildTmpBytes);
  steps.insert(steps.end(), {{MountStep::Kind::kShow, root},
                             {MountStep::Kind::kHide, root + "/autograder/hidden"},
                             {MountStep::Kind::kHide, root + "/solutions"}});
  const std::string build = absolute_path(build_dir);
  std::vector<MountStep> inside_build;
  for (const fs::path& p : hidden) {
    const std::string path = absolute_path(p);
    // A folder inside the build folder is hidden after the build folder is shown.
    (path.rfind(build + "/", 0) == 0 ? inside_build : steps)
        .push_back({MountStep::Kind::kHide, path});
  }
  steps.push_back({MountStep::Kind::kWritable, build});
  steps.insert(steps.end(), inside_build.begin(), inside_build.end());
  return without_covered(std::move(steps));
}

Isolation detect_isolation(const std::vector<MountStep>& steps, const std::string& what) {
  Isolation iso;
  if (switched_off("REDUCE_SANDBOX")) {
    iso.description = "none: REDUCE_SANDBOX=off";
    return iso;
  }
  // REDUCE_SANDBOX=confine or =bubblewrap: that one only (the grader's tests compare them).
  const char* only = std::getenv("REDUCE_SANDBOX");
  const auto allowed = [&](const char* name) {
    return only == nullptr || *only == '\0' || std::strcmp(only, name) == 0;
  };
  const char* view =
      ": user, mount, network, PID and IPC namespaces; read-only machine without the course's "
      "hidden tests, solutions, build folders or reports; its own empty, capped /tmp and /dev/shm, "
      "a /dev with only null, zero, urandom and the GPU's, its own /proc";
  std::string why_not;
  // bubblewrap first, where it is installed: a sandbox the whole field uses and reviews.
  if (!allowed("bubblewrap")) {
    why_not = "bubblewrap not chosen (REDUCE_SANDBOX)";
  } else if (const auto bwrap = find_program("bwrap")) {
    std::vector<std::string> prefix = bubblewrap_command(*bwrap, steps);
    why_not = try_prefix(prefix);
    if (why_not.empty()) {
      iso.sandboxed = true;
      iso.runner_prefix = std::move(prefix);
      iso.description = "bubblewrap" + std::string(view);
      return iso;
    }
    why_not = "bubblewrap failed (" + why_not + ")";
  } else {
    why_not = "bubblewrap (bwrap) is not installed";
  }
  if (!allowed("confine")) {
    why_not += "; reduce-grade confine not chosen (REDUCE_SANDBOX)";
  } else if (const fs::path grader = grader_program(); !grader.empty()) {
    std::vector<std::string> prefix = {grader.string(), "confine"};
    for (const MountStep& s : steps) prefix.push_back(s.argument());
    prefix.push_back("--");
    const std::string confine_why = try_prefix(prefix);
    if (confine_why.empty()) {
      iso.sandboxed = true;
      iso.runner_prefix = std::move(prefix);
      iso.description = "reduce-grade confine (" + why_not + ")" + view;
      return iso;
    }
    why_not += "; reduce-grade confine failed (" + confine_why + ")";
  } else {
    why_not += "; the reduce-grade executable was not found";
  }
  iso.description = "none: " + why_not + "; " + what +
                    " ran as the grading user with a clean environment and no access to the "
                    "grader's or the checker's memory";
  return iso;
}

std::string probe_walls(const Isolation& isolation, const fs::path& runner) {
  const auto first_line = [&](const char* flag) {
    ProcessSpec probe;
    probe.argv = isolation.runner_prefix;
    probe.argv.insert(probe.argv.end(), {runner.string(), flag});
    probe.timeout_s = 60;  // the places' walk stops itself after 20 s
    probe.output_cap = 1 << 16;
    const ProcessResult r = run_process(probe);
    const std::string line = trim(r.output.substr(0, r.output.find('\n')));
    if (!r.exited() || line.empty())
      return "unknown (the runner's " + std::string(flag) + " probe " + r.describe() + ")";
    return line;
  };
  return first_line("--walls") + "; " + first_line("--places");
}

}  // namespace reduce::grade
