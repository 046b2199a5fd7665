/// \file
/// \brief The planted-bug corpus: submissions with one known bug each, and the grade and
/// message each must get `(autograder/planted/<case>/expected`.toml).
#pragma once

#include <reduce_grade/reports/report.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace reduce::grade {

/// One case's expected.toml.
struct PlantedExpectation {
  std::string name;           ///< case folder name
  std::filesystem::path dir;  ///< case folder (the submission)
  std::string lab;            ///< the lab whose grade is checked
  /// Labs graded beside it (their grades are not checked): a case whose cheat needs the tests of
  /// several labs to share a checker.
  std::vector<std::string> graded_beside;

  /// Every lab the case grades: lab, then graded_beside.
  std::vector<std::string> graded_labs() const {
    std::vector<std::string> labs{lab};
    labs.insert(labs.end(), graded_beside.begin(), graded_beside.end());
    return labs;
  }
  std::optional<double> points;       ///< exact points expected
  std::optional<double> max_points;   ///< at most this many points
  std::optional<double> min_points;   ///< at least this many points
  std::vector<std::string> messages;  ///< the lab's report must contain one of these
  std::string failing_test;  ///< test names (* and ?; several joined by ':') one of which must fail
  bool needs_gpu = true;     ///< the expectation can only be checked on a GPU
  /// A withheld grade (reduce-grade refused to grade: the submission changed the course while
  /// it ran) also meets the expectation: the case attacks the grading itself, and either
  /// outcome (the attack had no effect, or it was caught) is right.
  bool may_be_withheld = false;
  /// Graded alone, on the first GPU, after every other case: the case takes what the cases
  /// graded beside it would need (the GPU's memory), which no grader's wall can share out.
  bool alone = false;
  /// Texts no student-visible part of the report may contain (the summary, Gradescope's visible
  /// items): what a lab says during the hidden tests or the benchmark stays with the instructor.
  std::vector<std::string> visible_none;
  /// Every text of the lab's reports (report.json, summary.txt, junit.xml, results.json) must be
  /// inert: no control character but newline and tab, no C1 control, no bidirectional override,
  /// valid UTF-8 (inert_problem()).
  bool report_inert = false;
  std::vector<std::string> warnings;  ///< unknown keys (ignored)
  std::string description;            ///< what the bug is
};

/// Writes the submission a planted case stands for into \p work_dir and returns it: the lab
/// folder of \p solutions_dir with the case's own files of that lab laid over it, so a case
/// keeps only the files its bug changes; `@REDUCE_COURSE_ROOT@` in them becomes the course's
/// absolute path (the parent of \p solutions_dir). A lab of graded_beside without a folder in the
/// case is copied from \p solutions_dir as it is. A case without a folder for its lab (the lab is
/// missing on purpose) is returned as it is. A symbolic link of the case (a lab folder, a file)
/// stays a link, to what it names from the case's folder (a relative target is made absolute
/// there), so that it reaches the same file wherever the case is written.
std::filesystem::path materialize_case(const PlantedExpectation& c,
                                       const std::filesystem::path& solutions_dir,
                                       const std::filesystem::path& work_dir);

/// Parses expected.toml text. Throws ConfigError.
PlantedExpectation parse_expectation(const std::string& text, const std::string& name);

/// Every case folder with an expected.toml under \p planted_dir, sorted by name.
std::vector<PlantedExpectation> load_planted(const std::filesystem::path& planted_dir);

/// Checks one graded lab against its expectation; empty when met, else the reasons.
std::vector<std::string> check_expectation(const PlantedExpectation& expected,
                                           const LabReport& lab);

/// All text of a lab's report that messages are searched in (items' outputs and messages).
std::string lab_report_text(const LabReport& lab);

/// What the student sees of \p lab: the summary and Gradescope's visible items of a report that
/// holds it alone (hidden details and the instructor's logs left out).
std::string lab_visible_text(const LabReport& lab);

/// Empty when \p text is inert for a terminal, a spreadsheet or a browser; else what is not
/// (the first offending byte's place and kind): a control character but newline and tab, DEL, a
/// C1 control (U+0080-U+009F), a bidirectional override or isolate, or bytes that are not UTF-8.
std::string inert_problem(const std::string& text);

}  // namespace reduce::grade
