/// \file
/// \brief Turns what the grader observed about a lab into points, with a reason for each.
///
/// Rules (docs/grader.md, "Scoring"): a missing lab, a lab that does not build, or one that
/// uses a library reduction gets nothing; the untouched stub gets nothing; build points for a
/// lab that builds; public and hidden test points in proportion to the tests passed (tests the
/// suite skips itself, e.g. for lack of device memory, do not count); the sanitizer share of
/// each tool that ran clean with its tests passing; performance points on the credit curve, but
/// only when every public and hidden test passed and the benchmark's timed runs were right.
#pragma once

#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/observations/facts.hpp>

#include <string>
#include <vector>

namespace reduce::grade {

/// Status of a graded part.
enum class ItemStatus { kPassed, kFailed, kSkipped };

/// One graded part of a lab (a JUnit test case, a Gradescope test).
struct ScoredItem {
  std::string key;       ///< "build", "tests", "hidden", "sanitizer", "library", "performance"
  std::string name;      ///< human name, e.g. "public tests"
  double score = 0;      ///< points earned
  double max_score = 0;  ///< points available
  ItemStatus status = ItemStatus::kFailed;  ///< passed: full marks; skipped: could not be run
  std::string output;                       ///< why, in words a student can act on (always visible)
  std::string hidden_details;  ///< details shown only after grades are published (hidden tests)
};

/// The parts of a lab's grade, in report order.
enum class Item { kBuild, kLibrary, kTests, kHidden, kSanitizer, kPerformance };

/// The key of \p item in reports: "build", "library", "tests", "hidden", "sanitizer",
/// "performance".
const char* item_key(Item item);

/// The name of \p item for people: "build", "library check", "public tests", "hidden tests",
/// "sanitizer", "performance".
const char* item_name(Item item);

/// How a lab was graded, the first thing its reports say about it.
enum class LabStatus {
  kGraded,            ///< built and run on a GPU: points as the rubric gives them
  kMissing,           ///< the lab is not in the submission
  kBuildFailed,       ///< the lab did not stage, configure, compile or link
  kForbiddenLibrary,  ///< the lab uses a library reduction or another forbidden thing
  kStub,              ///< run on a GPU, but still the untouched stub
  kBuildOnly,         ///< built, but not run: no GPU
};

/// The name of \p status in report.json, junit.xml and the summaries: "graded", "missing",
/// "build failed", "forbidden library", "stub", "build only (no GPU)".
const char* lab_status_name(LabStatus status);

/// What one length earned, in a lab whose rubric credits each length on its own
/// (LabRubric::credit "per_length"): lab 17's rows of 32, 1024, 32768 and 2^20 floats.
struct LengthCredit {
  std::string length;     ///< the segment length (TimedRow::length_key()), e.g. "32"
  std::string label;      ///< the same in the report's words: "rows of 32", "rows of 2^20"
  std::string op;         ///< the slower of the lab's operations there: its fraction counts
  double fraction = 0;    ///< that operation's fraction of the lab's measure
  double gbps = 0;        ///< its bandwidth
  double points = 0;      ///< what the length earned on the credit curve
  double max_points = 0;  ///< its share: the performance points over the number of lengths
};

/// Each length of \p perf's rows (in increasing order), with the slower operation's fraction
/// there and its share of \p max_points on the credit curve from \p floor to \p threshold.
std::vector<LengthCredit> length_credits(const PerfFacts& perf, double threshold, double floor,
                                         double max_points);

/// The points of one lab.
struct LabScore {
  LabStatus status = LabStatus::kMissing;  ///< set by score_lab()
  std::vector<ScoredItem> items;           ///< in report order
  double score = 0;                        ///< sum of item scores
  double max_score = 0;                    ///< sum of item maxima (the lab's total points)
  std::vector<std::string> messages;       ///< the lab's notable messages, most important first
  /// Where the rubric credits each length on its own: what each length earned (else empty).
  std::vector<LengthCredit> lengths;
  /// Why a person should look at this lab (it tried to leave its sandbox); empty if nothing.
  std::string review;
};

/// Why a person should look at the lab of \p facts: its process made a system call that the
/// runner's seccomp wall stops (a new process, exec, a signal to another process, ptrace...).
/// Empty when nothing calls for a look.
std::string review_reason(const LabFacts& facts);

/// Scores one lab.
LabScore score_lab(const LabFacts& facts, const LabRubric& lab_rubric, const Rubric& rubric);

/// Points for the passed share of \p counted tests, \p max_points for all of them.
double proportional_points(int passed, int counted, double max_points);

/// Rounds points to 2 decimals (what reports show and totals add up).
double round_points(double points);

}  // namespace reduce::grade
