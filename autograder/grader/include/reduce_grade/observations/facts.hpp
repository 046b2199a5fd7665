/// \file
/// \brief What the grader observed about one lab: the input of scoring, the body of reports.
#pragma once

#include <reduce_grade/observations/gtest_suite.hpp>
#include <reduce_grade/observations/library_check.hpp>
#include <reduce_grade/observations/sanitizer.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// The processes a grading started on the GPU, each with a CUDA context of its own: what bounds
/// how many submissions a host grades in an hour (docs/grader.md, "Grading a class").
struct ProcessCounts {
  int checkers = 0;                 ///< checker processes (tests, sanitizer) that made a context
  int lab_processes = 0;            ///< lab processes those checkers started
  int benchmarks = 0;               ///< benchmark processes started
  int benchmark_lab_processes = 0;  ///< lab processes the benchmarks started

  /// Every CUDA context of the grading.
  int contexts() const { return checkers + lab_processes + benchmarks + benchmark_lab_processes; }
  /// Every lab process of the grading.
  int lab_process_starts() const { return lab_processes + benchmark_lab_processes; }
};

/// Where a lab's build stopped.
enum class BuildStage {
  kNone,       ///< it did not stop (built, or not tried)
  kStaging,    ///< the lab folder was refused before any build (a link, a special file...)
  kConfigure,  ///< the course could not be configured (a grading problem, not the student's)
  kCompile,    ///< the lab's sources do not compile
  kLink,       ///< they compile, but the library does not link: an entry point of the contract
               ///< is missing or has another signature
};

/// The stage as report.json writes it: "", "staging", "configure", "compile" or "link".
const char* stage_name(BuildStage stage);

/// How the lab's build went.
struct BuildFacts {
  bool attempted = false;  ///< the build was tried (false when the lab is missing)
  /// The lab's libraries (one per operation) built; the checkers and the benchmark are the
  /// course's, built once for every lab.
  bool ok = false;
  bool library_ok = false;  ///< every operation's library compiled and linked (no entry missing)
  bool timed_out = false;   ///< the build hit its time limit
  BuildStage stage = BuildStage::kNone;  ///< where it stopped
  std::string errors;                    ///< the compiler's first error lines
  std::string log;                       ///< build log file of this lab
};

/// One timed row of a lab, as a fraction of its measure: what a rubric that credits each length
/// on its own (LabRubric::credit "per_length") scores.
struct TimedRow {
  std::string op;       ///< the lab's operation, e.g. "segmented_softmax"
  std::string length;   ///< the family's segment length ("32", lab 17's rows); empty: no family
  std::size_t n = 0;    ///< elements of the row's input
  double fraction = 0;  ///< of the lab's measure (perf.measure), as its slowest row's is
  double gbps = 0;      ///< the lab's bandwidth there

  /// The length the rubric credits the row under: its segment length, else its size.
  std::string length_key() const { return length.empty() ? std::to_string(n) : length; }
};

/// The lab's benchmark measurement.
struct PerfFacts {
  bool ran = false;      ///< the benchmark ran and produced this lab's row
  std::string problem;   ///< why not, or the row's error (else empty)
  double median_us = 0;  ///< median time of one call at the benchmark size
  /// Of median_us, the request's own cost, measured on the lab's measure and left out of the
  /// fraction (0: none left out)
  double request_us = 0;
  double gbps = 0;              ///< bandwidth of the lab
  double ceiling_gbps = 0;      ///< the ceiling it is compared with (same run)
  double probe_gbps = 0;        ///< the run's ceiling probe (context)
  double stream_read_gbps = 0;  ///< the run's stream_read row at the same size
  double cub_gbps = 0;          ///< cub::DeviceReduce at the same size
  double fraction = 0;          ///< gbps / the measure's GB/s (reference_gbps or ceiling_gbps)
  /// What the fraction is of: "probe" (the ceiling probe), "stream_read" (the rubric's other
  /// ceiling), "reference" (the course's reference of the lab, timed in the same run) or "cub"
  /// (cub::DeviceReduce::Sum as a lab library, timed in the same run).
  std::string measure = "probe";
  /// Why a lab the rubric judges against its reference was judged against the probe (else empty).
  std::string measure_note;
  double reference_gbps = 0;  ///< the measure's GB/s beside the slowest row, where it is timed
  /// The slowest row's samples' relative noise, and its measure's where that is timed like it
  /// (0 where the benchmark gives none): how far the fraction can be trusted.
  double noise = 0, reference_noise = 0;
  /// Samples of the lab's rows and their measures' taken while the GPU slowed its clocks (a
  /// power or thermal limit), left out of their figures.
  int throttled_samples = 0;
  /// A row of the lab or of its measure had too few samples at full clocks and its figure
  /// includes slowed ones: the fraction may say more of the GPU's heat than of the code.
  bool throttled_figure = false;

  /// Whether the fraction is of a measure timed like the lab ("reference", "cub").
  bool timed_measure() const { return measure == "reference" || measure == "cub"; }
  /// What the fraction is of, in the report's words: "cub::DeviceReduce::Sum's", "the course's
  /// reference" or "the ceiling".
  std::string measure_words() const {
    return measure == "cub"  ? "cub::DeviceReduce::Sum's"
           : timed_measure() ? "the course's reference"
                             : "the ceiling";
  }
  /// The measure's GB/s: reference_gbps where it was timed beside the lab, else ceiling_gbps.
  double measure_gbps() const { return timed_measure() ? reference_gbps : ceiling_gbps; }
  double wrong_results = 0;      ///< timed runs with a wrong result
  bool clocks_disagree = false;  ///< the row failed: the lab's events and the grader's clock differ
  bool impossible = false;       ///< faster than the GPU can read: no performance points
  std::size_t n = 0;             ///< elements (of the slowest row, where several sizes are timed)
  std::size_t slowest_n = 0;     ///< the size of the slowest row (0: none yet)
  std::string op;                ///< the row that set the fraction (the slowest of the lab's ops)
  std::string detail;            ///< every benchmarked operation's fraction, e.g. "maximum 0.91"
  std::vector<TimedRow> rows;    ///< every timed row of the lab, in the benchmark's order
  std::string log;               ///< log file
  /// The lab's row is missing: the benchmark's process ended in other code first, so nothing in
  /// this run is the lab's and it may be benchmarked again, alone, with fresh inputs.
  bool unattributed = false;
  /// What the lab's rows said in their own words (an exception's text): the instructor's, never
  /// shown to the student.
  std::string lab_text;
};

/// Whether one step of a lab's grading (public tests, hidden tests, sanitizer, benchmark) ran,
/// and if not, why.
struct StepOutcome {
  /// What happened to the step.
  enum class State {
    kRan,            ///< it ran (its results are in the facts)
    kSkipped,        ///< it could have run but did not (the lab hung, failed tests, ...)
    kNotApplicable,  ///< the course has nothing to run for this lab
  };
  State state = State::kRan;  ///< what happened to the step
  std::string reason;         ///< why it did not run (empty when it ran)

  /// A step that could have run but did not, because of \p why.
  static StepOutcome skipped(std::string why) { return {State::kSkipped, std::move(why)}; }
  /// A step the course has nothing to run for, because of \p why.
  static StepOutcome not_applicable(std::string why) {
    return {State::kNotApplicable, std::move(why)};
  }
  /// Whether the step ran.
  bool ran() const { return state == State::kRan; }
  /// "ran", "skipped" or "not applicable", as report.json writes it.
  const char* name() const {
    return state == State::kRan ? "ran" : state == State::kSkipped ? "skipped" : "not applicable";
  }
};

/// Everything observed about one lab.
struct LabFacts {
  std::string lab;                      ///< lab folder
  bool present = false;                 ///< every `<op>`.cu of the lab exists in the submission
  std::string missing_what;             ///< which file was missing
  BuildFacts build;                     ///< the build
  LibraryCheck library;                 ///< the library inspection (plus source scan)
  bool gpu = false;                     ///< a GPU was available for this lab's runs
  std::vector<SuiteRun> tests;          ///< public suites (one per op)
  std::vector<SuiteRun> hidden;         ///< hidden suites (one per op, when hidden tests exist)
  bool hidden_exists = true;            ///< the course has hidden tests for the lab's ops
  std::vector<SanitizerRun> sanitizer;  ///< one per tool and tested operation
  StepOutcome sanitizer_step;           ///< whether the sanitizer ran
  PerfFacts perf;                       ///< the benchmark
  StepOutcome perf_step;                ///< whether the benchmark ran
  StepOutcome tests_step;               ///< whether the public tests ran
  StepOutcome hidden_step;              ///< whether the hidden tests ran
};

}  // namespace reduce::grade
