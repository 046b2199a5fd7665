// The benchmark's launch (launch.hpp): the grader's spec, else a person's command line.
#include "launch.hpp"

#include "text.hpp"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace reduce::bench {
namespace {

/// "NAME=OP:LIBRARY" of the flag \p flag, each part non-empty.
launch::RunnerLab runner_lab(const std::string& flag, const std::string& value) {
  const auto eq = value.find('=');
  const auto colon = eq == std::string::npos ? eq : value.find(':', eq + 1);
  if (eq == 0 || colon == std::string::npos || colon == eq + 1 || colon + 1 == value.size())
    throw std::invalid_argument(flag + "=" + value + ": expected " + flag + "=NAME=OP:LIBRARY");
  return {value.substr(0, eq), value.substr(eq + 1, colon - eq - 1), value.substr(colon + 1)};
}

/// \p value as a count of seconds above 0.
double seconds(const std::string& flag, const std::string& value) {
  std::size_t used = 0;
  double s = 0;
  try {
    s = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !(s > 0))
    throw std::invalid_argument(flag + "=" + value + ": expected seconds above 0");
  return s;
}

}  // namespace

bool HandFlags::any() const {
  return !graded.empty() || !references.empty() || !runner_prefix.empty() || call_timeout_s > 0;
}

HandFlags take_hand_flags(int& argc, char** argv) {
  HandFlags flags;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    const bool given = eq != std::string::npos;
    if (flag == "--graded" && given)
      flags.graded.push_back(runner_lab(flag, value));
    else if (flag == "--reference" && given)
      flags.references.push_back(runner_lab(flag, value));
    else if (flag == "--runner-prefix" && given && !value.empty())
      flags.runner_prefix.push_back(value);
    else if (flag == "--call-timeout-s" && given)
      flags.call_timeout_s = seconds(flag, value);
    else if (flag == "--graded" || flag == "--reference" || flag == "--runner-prefix" ||
             flag == "--call-timeout-s")
      throw std::invalid_argument(arg + ": expected " + flag + "=VALUE");
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  argv[argc] = nullptr;
  return flags;
}

launch::LaunchSpec bench_launch(const HandFlags& flags) {
  if (std::optional<launch::LaunchSpec> spec =
          launch::launch_spec_from_environment(launch::Child::kBench)) {
    if (flags.any())
      throw std::invalid_argument(std::string(launch::kLaunchSpecVariable) +
                                  " names a launch spec: no --graded, --reference, "
                                  "--runner-prefix or --call-timeout-s beside it");
    return *spec;
  }
  launch::LaunchSpec spec;
  spec.child = launch::Child::kBench;
  spec.seed = launch::seed_from_environment();
  spec.sizes = size_list("REDUCE_BENCH_SIZES", "");
  spec.graded = flags.graded;
  spec.references = flags.references;
  spec.runner.prefix = flags.runner_prefix;
  spec.runner.call_timeout_s = flags.call_timeout_s;
  return spec;
}

}  // namespace reduce::bench
