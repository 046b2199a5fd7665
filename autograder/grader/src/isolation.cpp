#include <reduce_grade/isolation.hpp>
#include <reduce_grade/process.hpp>

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

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : "\x1f") + word;
  return text;
}

/// The runner's own confinement (confine.cpp): \p folders read-only for the lab's process.
Isolation runner_confinement(const fs::path& runner, const std::vector<fs::path>& folders,
                             const std::string& why_not_bwrap) {
  Isolation iso;
  std::error_code ec;
  for (const fs::path& dir : folders)
    if (fs::is_directory(dir, ec)) iso.read_only.push_back(fs::weakly_canonical(dir, ec).string());
  ProcessSpec probe;
  probe.argv = {runner.string(), "--probe"};
  for (const std::string& dir : iso.read_only) probe.argv.push_back("--read-only=" + dir);
  probe.timeout_s = 30;
  probe.output_cap = 1 << 16;
  const ProcessResult r = run_process(probe);
  if (runner.empty() || !r.succeeded()) {
    iso.read_only.clear();
    iso.description = "none: " + why_not_bwrap +
                      ", and the runner cannot make folders read-only here (" +
                      (runner.empty() ? std::string("no runner")
                                      : r.describe() + ": " + r.output.substr(0, 200)) +
                      "); the lab's process ran as the grading user with a clean environment "
                      "and no access to the checker's memory";
    return iso;
  }
  iso.sandboxed = true;
  iso.description = "user and mount namespaces (" + why_not_bwrap +
                    "): the course, the build folders and the reports are read-only for the "
                    "lab's process; it runs with a clean environment and no access to the "
                    "checker's memory";
  return iso;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> Isolation::runner_env() const {
  return {{"REDUCE_RUNNER_PREFIX", joined(runner_prefix)},
          {"REDUCE_RUNNER_READ_ONLY", joined(read_only)}};
}

Isolation detect_isolation(const std::vector<fs::path>& hidden,
                           const std::vector<fs::path>& readable,
                           const std::vector<fs::path>& writable, const fs::path& runner) {
  Isolation iso;
  if (switched_off("REDUCE_SANDBOX")) {
    iso.description = "none: REDUCE_SANDBOX=off";
    return iso;
  }
  const auto bwrap = find_program("bwrap");
  if (!bwrap) return runner_confinement(runner, hidden, "bubblewrap (bwrap) is not installed");
  const bool own_pids = !switched_off("REDUCE_SANDBOX_PID");
  std::vector<std::string> cmd = {bwrap->string(),
                                  "--die-with-parent",
                                  "--new-session",
                                  "--unshare-net",
                                  "--unshare-uts",
                                  "--ro-bind",
                                  "/",
                                  "/",
                                  "--dev-bind",
                                  "/dev",
                                  "/dev",
                                  "--proc",
                                  "/proc",
                                  "--tmpfs",
                                  "/tmp"};
  if (own_pids) cmd.push_back("--unshare-pid");
  std::error_code ec;
  for (const fs::path& dir : hidden)
    if (fs::is_directory(dir, ec)) cmd.insert(cmd.end(), {"--tmpfs", dir.string()});
  for (const fs::path& p : readable)
    if (fs::exists(p, ec)) cmd.insert(cmd.end(), {"--ro-bind", p.string(), p.string()});
  for (const fs::path& p : writable)
    if (fs::exists(p, ec)) cmd.insert(cmd.end(), {"--bind", p.string(), p.string()});
  cmd.push_back("--");

  ProcessSpec probe;
  probe.argv = cmd;
  probe.argv.push_back("true");
  probe.timeout_s = 30;
  probe.output_cap = 1 << 16;
  const ProcessResult r = run_process(probe);
  if (!r.succeeded())
    return runner_confinement(
        runner, hidden,
        "bubblewrap does not work here (" + r.describe() + ": " + r.output.substr(0, 200) + ")");
  iso.sandboxed = true;
  iso.runner_prefix = cmd;
  iso.description = std::string("bubblewrap: read-only filesystem without the course's sources, ") +
                    "solutions or reports, private /tmp, no network" +
                    (own_pids ? ", own PID namespace" : "");
  return iso;
}

}  // namespace reduce::grade
