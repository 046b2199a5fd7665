#include <reduce_grade/isolation.hpp>
#include <reduce_grade/process.hpp>

#include <cstdlib>
#include <cstring>
#include <system_error>

namespace reduce::grade {
namespace fs = std::filesystem;

namespace {

bool switched_off(const char* variable) {
  const char* v = std::getenv(variable);
  return v != nullptr && (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0);
}

}  // namespace

Isolation detect_isolation(const std::vector<fs::path>& hidden, const std::vector<fs::path>& readable,
                           const std::vector<fs::path>& writable) {
  Isolation iso;
  if (switched_off("REDUCE_SANDBOX")) {
    iso.description = "none: REDUCE_SANDBOX=off";
    return iso;
  }
  const auto bwrap = find_program("bwrap");
  if (!bwrap) {
    iso.description =
        "none: bubblewrap (bwrap) is not installed; the lab's process ran as the grading user "
        "with a clean environment and no access to the checker's memory";
    return iso;
  }
  const bool own_pids = !switched_off("REDUCE_SANDBOX_PID");
  std::vector<std::string> cmd = {bwrap->string(), "--die-with-parent", "--new-session",
                                  "--unshare-net", "--unshare-uts", "--ro-bind", "/", "/",
                                  "--dev-bind", "/dev", "/dev", "--proc", "/proc",
                                  "--tmpfs", "/tmp"};
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
  if (!r.succeeded()) {
    iso.description = "none: bubblewrap does not work here (" + r.describe() + ": " +
                      r.output.substr(0, 200) + ")";
    return iso;
  }
  iso.sandboxed = true;
  iso.runner_prefix = cmd;
  iso.description = std::string("bubblewrap: read-only filesystem without the course's sources, ") +
                    "solutions or reports, private /tmp, no network" +
                    (own_pids ? ", own PID namespace" : "");
  return iso;
}

}  // namespace reduce::grade
