/// \file
/// \brief compute-sanitizer runs and the parsing of their summaries.
///
/// memcheck and synccheck report problems as errors ("ERROR SUMMARY: N errors"). racecheck
/// reports warp-level hazards only as warnings ("RACECHECK SUMMARY: 5 hazards displayed (0
/// errors, 175 warnings)"), so for racecheck the grader counts hazards, not errors.
#pragma once

#include <reduce_grade/observations/gtest_suite.hpp>

#include <atomic>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// The counts one sanitizer log reports.
struct SanitizerSummary {
  bool found = false;  ///< a summary line was present
  int errors = -1;     ///< from "ERROR SUMMARY: N errors" (or the racecheck summary's errors)
  int hazards = -1;    ///< racecheck: hazards displayed
  int warnings = -1;   ///< racecheck: warnings
  /// A summary line whose counts could not be read (a number that does not fit an int): then
  /// found is false and every count -1. Empty otherwise.
  std::string problem;
  /// Problems that count against the lab: hazards for racecheck, errors otherwise.
  int problems() const { return hazards >= 0 ? hazards : errors; }
};

/// Parses the summary lines of a compute-sanitizer log for \p tool. Never throws: a count too
/// large for an int makes the summary unreadable (SanitizerSummary::problem).
SanitizerSummary parse_sanitizer_summary(const std::string& tool, const std::string& output);

/// What one compute-sanitizer run found.
struct SanitizerRun {
  std::string tool;           ///< memcheck, racecheck, synccheck, initcheck
  std::string op;             ///< the operation whose test binary ran (named in multi-op labs)
  bool ran = false;           ///< it ran and printed a summary
  SanitizerSummary summary;   ///< its counts
  bool tests_passed = false;  ///< the tests it ran under it all passed
  bool no_gpu = false;        ///< "no CUDA device"
  std::string problem;        ///< why it did not run or did not finish (else empty)
  std::string excerpt;        ///< the first reported problems, for the student
  double seconds = 0;         ///< wall-clock time of the checker (shared by its tools)
  std::string log;            ///< log file
  std::string unconfined;     ///< why the lab's process ran unconfined (empty: as the others)
  /// The checker's CUDA contexts and the lab processes it started (checker_startups()), on the
  /// first tool's run only: the tools share one checker.
  int checker_contexts = 0;
  int lab_process_starts = 0;  ///< see checker_contexts

  /// Ran, found nothing, and the tests under it passed.
  bool clean() const { return ran && summary.problems() == 0 && tests_passed; }
  /// One line for reports, e.g. "racecheck: 5 hazards (0 errors, 175 warnings)".
  std::string describe() const;
};

/// One checker process whose tests run once per tool, its lab runner under compute-sanitizer.
struct SanitizerSpec {
  std::filesystem::path sanitizer;  ///< compute-sanitizer
  std::vector<std::string> tools;   ///< memcheck, racecheck, synccheck, initcheck
  std::filesystem::path checker;    ///< the checker binary (course code; not sanitized itself)
  std::vector<std::string> args;    ///< the checker's lab arguments (--lab=..., --lab-filter=...)
  std::string filter;               ///< GoogleTest filter (small sizes); empty: none
  std::vector<std::pair<std::string, std::string>> env;  ///< the checker's environment
  /// What the checker is told (give_launch_spec(), beside log_file as `STEM`.launch.json): its
  /// key and the GPU's memory; its runner's prefix is the sandbox in front of the sanitizer, if
  /// any, and the run adds a repetition per tool.
  launch::LaunchSpec launch;
  double timeout_s = 300;                         ///< wall-clock limit per tool
  std::size_t output_cap = std::size_t{4} << 20;  ///< output cap of the checker
  std::filesystem::path log_file;  ///< the checker's log; the sanitizer's go to `STEM.<tool>/`
  /// When set and it turns true, the run stops (its checker killed; see ProcessSpec::cancel).
  const std::atomic<bool>* cancel = nullptr;
};

/// Runs the checker once with its tests repeated for each tool of \p spec, the lab runner of
/// repetition k under `compute-sanitizer --tool <tools[k]>` (so only the lab's process is
/// sanitized, and one checker context serves every tool), and reads the sanitizer's own log
/// files, one per runner started. The checker's output of each repetition says whether the tests
/// under that tool passed. The sanitizer starts inside \p spec.launch's runner prefix (the sandbox,
/// in which the report folder's logs/ is writable); should the two not go together on this host,
/// the run is repeated unconfined and SanitizerRun::unconfined says so. One result per tool.
std::vector<SanitizerRun> run_sanitizer(const SanitizerSpec& spec);

/// One lab of a sanitizer group: its part of the group's checker, and the lab's own spec (for a
/// run of its own where the group cannot say which lab a finding belongs to).
struct SanitizedLab {
  /// The lab's library of one operation, and the filters of its part: the operation's public
  /// tests and the sanitizer's small sizes of that operation.
  PlannedLab part;
  SanitizerSpec alone;  ///< the lab by itself (args name it and its tests; its own log file)
};

/// Several labs, of any operations, under compute-sanitizer in one checker process: for each
/// tool, one lab process under that tool holds every lab's library and serves the labs in turn.
struct SanitizerGroupSpec {
  /// Sanitizer, tools, checker, environment, limits; the log file. Its filter, if any, applies
  /// to every part besides the part's own.
  SanitizerSpec common;
  std::vector<SanitizedLab> labs;  ///< at least one
};

/// Runs \p spec's labs under every tool in one checker (its launch spec's labs). A lab
/// process's report is that of every lab it served, so a tool's result is given to each lab only
/// where every report of that tool is clean and the lab's tests under it passed; for any other
/// (lab, tool), the lab runs under that tool alone (run_sanitizer() with its own spec), so that
/// a finding always belongs to the lab that made it. Returns one list per lab, one run per tool.
std::vector<std::vector<SanitizerRun>> run_sanitizer_group(const SanitizerGroupSpec& spec);

/// One run of run_sanitizer(), as \p spec says.
std::vector<SanitizerRun> run_sanitizer_once(const SanitizerSpec& spec);

/// The folder where run_sanitizer() has compute-sanitizer write the logs of \p tool.
std::filesystem::path sanitizer_log_dir(const std::filesystem::path& log_file,
                                        const std::string& tool);

/// compute-sanitizer from PATH, else $CUDA_HOME/bin or /usr/local/cuda/bin; empty when absent.
std::filesystem::path find_compute_sanitizer();

}  // namespace reduce::grade
