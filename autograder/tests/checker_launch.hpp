/// \file
/// \brief What a checker process was told about its run, read once at its start
/// (checker_main.cpp) and read by the tests' support (gpu_test.cpp) in place of the environment.
///
/// A grading gives the checker its launch spec (REDUCE_LAUNCH_SPEC, the grader's logs:
/// reduce_vocabulary/launch_spec.hpp): the key, the runner's sandbox and sanitizer, the GPU's
/// memory and its large-memory slots, and for a checker of several labs the labs and the mark of
/// their parts. A person's run (ctest, tools/lab-test) has no spec: its lab comes from the
/// command line, its key from REDUCE_SEED or kDefaultSeed, and nothing else is limited.
#pragma once

#include <reduce_vocabulary/launch_spec.hpp>

#include <cstdint>
#include <string>

namespace reduce::testing {

/// The tests' key of a person's run without REDUCE_SEED.
inline constexpr std::uint64_t kDefaultSeed = 20261122;

/// What this checker process was told, and the lab under test now.
struct CheckerLaunch {
  /// The grader's launch spec, or a person's run as one (the runner prefix of --runner-prefix,
  /// nothing else).
  launch::LaunchSpec spec;
  bool graded = false;                ///< the spec is the grader's
  std::uint64_t seed = kDefaultSeed;  ///< the spec's key, else REDUCE_SEED, else kDefaultSeed
  /// The lab under test now: --lab-name, --lab-order and --lab-entry, or the part of the spec's
  /// labs being tested (empty entry: the suite's own).
  std::string lab = "lab";
  std::string order = "tree";  ///< "serial", "tree" or "tree_atomic" (checked by lab_order())
  std::string entry;           ///< see lab
};

/// This process's launch: filled by checker_main before any test runs; the defaults of a
/// person's run until then.
CheckerLaunch& checker_launch();

}  // namespace reduce::testing
