/// \file
/// \brief Where one run of the benchmark learns what to time: the grader's launch spec
/// (REDUCE_LAUNCH_SPEC, reduce_vocabulary/launch_spec.hpp), or a person's command line. main()
/// reads it once, into its BenchSession (session.cuh); nothing else of the benchmark reads the
/// graded labs, their references, the sizes, the key or the runner's sandbox anywhere else.
///
/// No CUDA: tested on any machine (launch_test.cpp).
#pragma once

#include <reduce_vocabulary/launch_spec.hpp>

#include <string>
#include <vector>

namespace reduce::bench {

/// What a person running reduce_bench by hand gives on its command line in place of a launch
/// spec (tools/maint/lab15_rows.sh, neighbours.sh): labs timed in a runner process as the grader
/// times them, and that runner's sandbox.
///   --graded=NAME=OP:LIBRARY     a lab timed as graded (repeatable)
///   --reference=NAME=OP:LIBRARY  a reference timed as graded, before them (repeatable)
///   --runner-prefix=WORD         one word of the command in front of the graded runner
///                                (repeatable, in order: the sandbox)
///   --call-timeout-s=S           one request's wall-clock limit (default: the runner's)
struct HandFlags {
  std::vector<launch::RunnerLab> graded;      ///< --graded, in order
  std::vector<launch::RunnerLab> references;  ///< --reference, in order
  std::vector<std::string> runner_prefix;     ///< --runner-prefix, in order
  double call_timeout_s = 0;                  ///< --call-timeout-s (0: not given)

  /// Whether any flag was given.
  bool any() const;
};

/// Takes the flags of HandFlags out of \p argv (the rest stay, in order, for Google Benchmark).
/// \throws std::invalid_argument naming a flag whose value does not read.
HandFlags take_hand_flags(int& argc, char** argv);

/// The run's launch spec: the file that REDUCE_LAUNCH_SPEC names (the grader's; then \p flags
/// must be empty, and REDUCE_SEED and REDUCE_BENCH_SIZES are not read), else a hand run's:
/// \p flags, its key from REDUCE_SEED (none: a fresh one, BenchSession) and its sizes from
/// REDUCE_BENCH_SIZES (none: the default ladder).
/// \throws reduce::launch::LaunchSpecError for a spec that cannot be read, std::invalid_argument
/// for a spec beside hand flags or a variable that does not read.
launch::LaunchSpec bench_launch(const HandFlags& flags);

}  // namespace reduce::bench
