/// \file
/// \brief The launch spec: everything the grader tells a checker or the benchmark about one run,
/// in one JSON file with a version, named by one environment variable (kLaunchSpecVariable).
///
/// The grader writes the file into its own log folder, which the sandbox of every lab process
/// hides (nobody but the grader and the child reads it, and no lab can write it); the child reads
/// it once, at its start, through read_launch_spec(). What a student or an instructor sets by
/// hand (REDUCE_SEED to reproduce a failure, the benchmark's sizes and trusted labs) stays in the
/// environment and on the command line; docs/grader.md lists both.
///
/// The structs are plain words; the reader and the writer (src/launch_spec.cpp, the library
/// reduce::launch_spec, nlohmann-json) are the file's only parser and only printer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce::launch {

/// The environment variable that names the launch spec's file.
inline constexpr const char* kLaunchSpecVariable = "REDUCE_LAUNCH_SPEC";

/// The version this build writes and reads; a file of any other version is refused.
inline constexpr int kLaunchSpecVersion = 3;

/// The process a spec is written for: a spec of one is refused by the other.
enum class Child { kChecker, kBench };

/// How a child starts the lab's runner process (reduce_lab_runner).
struct RunnerLaunch {
  std::vector<std::string> prefix;  ///< the command in front of the runner (the sandbox)
  /// Per repetition of the checker's tests (one per sanitizer tool), the words put after
  /// `prefix` and where that repetition's report goes (empty: no report pipe; %n: the runner's
  /// number).
  struct Repetition {
    std::vector<std::string> prefix;  ///< e.g. compute-sanitizer --tool racecheck ...
    std::string report;               ///< the sanitizer's log file
  };
  std::vector<Repetition> repetitions;  ///< one per repetition, in order
  double call_timeout_s = 0;            ///< one request's wall-clock limit (0: the child's default)
  double exit_grace_s = 0;  ///< how long a stopped runner may take to exit (0: the default)
};

/// One part of a checker that tests several labs in turn: one lab's library of one operation.
struct PlannedLab {
  std::string name;                  ///< lab folder, e.g. "04_sequential"
  std::string op;                    ///< the operation, e.g. "sum_compensated"
  std::string order;                 ///< "serial", "tree" or "tree_atomic"
  std::string entry;                 ///< the entry point the operation's shared suites call
  std::string library;               ///< its library of that operation
  std::vector<std::string> filters;  ///< GoogleTest filters a test must all match
};

/// A lab the benchmark runs in a runner process: a graded lab or a course's reference.
struct RunnerLab {
  std::string name;     ///< the row's name, e.g. "04_sequential" or "reference-04_sequential"
  std::string op;       ///< the entry point it is called through, e.g. "sum"
  std::string library;  ///< the lab library
};

/// Everything the grader tells one child. Fields that a child does not use stay empty.
struct LaunchSpec {
  int version = kLaunchSpecVersion;   ///< kLaunchSpecVersion
  Child child = Child::kChecker;      ///< whom it is for
  std::optional<std::uint64_t> seed;  ///< the run's key (tests: derive_key(secret, use))
  RunnerLaunch runner;                ///< how to start the lab's runner

  // ---- a checker ----
  /// The secret that opens each lab's part of a several-lab checker's output
  /// ("[ lab      ] MARK <repetition> <name> <op>"): no lab can print the line.
  std::string mark;
  std::vector<PlannedLab> labs;        ///< the labs it tests in turn (none: one lab, from argv)
  std::string memory_slots_dir;        ///< the GPU's large-memory lock files (MemoryLease)
  int memory_slots = 0;                ///< how many (0: no slots)
  std::uint64_t gpu_memory_bytes = 0;  ///< the memory the tests count on (0: the GPU's)
  /// A folder: a several-lab checker started while its labs still build waits, its CUDA contexts
  /// made, before each lab's first part, for the file named after that lab (PlannedLab::name) here:
  /// "go" starts that lab's tests, anything else leaves its parts unopened. Empty: no wait.
  std::string hold;
  /// The longest wait in \ref hold, counted from when its contexts were made; past it, a lab with
  /// no file yet is left untested.
  double hold_limit_s = 0;

  // ---- the benchmark ----
  std::vector<RunnerLab> graded;      ///< the labs being graded, each in a runner process
  std::vector<RunnerLab> references;  ///< the course's references of those labs
  std::vector<std::size_t> sizes;     ///< the sizes of its rows (empty: its default)
};

/// A launch spec that cannot be read: missing, malformed, of another version or child.
class LaunchSpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// \p spec as the file's JSON text.
std::string launch_spec_json(const LaunchSpec& spec);

/// The spec of the JSON \p text (from \p source, for messages), which must be of
/// kLaunchSpecVersion and for \p child. \throws LaunchSpecError saying what is wrong.
LaunchSpec parse_launch_spec(const std::string& text, const std::string& source, Child child);

/// The spec of the file \p path (parse_launch_spec()). \throws LaunchSpecError.
LaunchSpec read_launch_spec(const std::string& path, Child child);

/// The spec named by kLaunchSpecVariable, or none where it is unset or empty (a student's or an
/// instructor's own run). \throws LaunchSpecError for a file that cannot be read.
std::optional<LaunchSpec> launch_spec_from_environment(Child child);

/// A person's key for a run without a spec: REDUCE_SEED (decimal, or 0x hexadecimal), none where
/// it is unset or empty. A child given a spec never reads it. \throws std::invalid_argument for
/// anything that is not a count.
std::optional<std::uint64_t> seed_from_environment();

/// Writes \p spec to \p path, readable by its owner alone, through a new file renamed over
/// \p path (a link at \p path is replaced, never followed). \throws LaunchSpecError.
void write_launch_spec(const std::string& path, const LaunchSpec& spec);

}  // namespace reduce::launch
