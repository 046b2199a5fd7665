/// \file
/// \brief The report of one grading run and its writers: report.json, junit.xml, Gradescope
/// results.json, summary.txt; and the gradebook CSV of a batch.
#pragma once

#include <reduce_grade/observations/facts.hpp>
#include <reduce_grade/scoring/score.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace reduce::grade {

/// One lab in a report: what was observed and what it scored.
struct LabReport {
  LabFacts facts;        ///< observations
  LabScore score;        ///< points
  double threshold = 0;  ///< the rubric's threshold of the measure the lab was judged by
  double floor = 0;      ///< the rubric's performance floor
};

/// A whole grading run of one submission.
struct GradeReport {
  std::string grader_version;   ///< reduce-grade version
  std::string submission;       ///< the submission folder graded
  std::string course_root;      ///< the course it was graded against
  std::string rubric;           ///< rubric file
  std::uint64_t seed = 0;       ///< REDUCE_SEED of every test and benchmark run
  std::string started_at;       ///< UTC ISO 8601
  double seconds = 0;           ///< wall-clock time of the run
  double build_seconds = 0;     ///< the submission's configure and build (CPU only)
  double graded_seconds = 0;    ///< from the end of the build to the report (the GPU's share)
  bool gpu_available = false;   ///< correctness and timing were measured
  std::string gpu;              ///< GPU name (nvidia-smi, or the benchmark's context)
  std::string cuda_device;      ///< CUDA_VISIBLE_DEVICES it ran with (batch --gpus; else empty)
  std::string cpus;             ///< CPUs of its GPU steps (batch on several GPUs; else empty)
  std::string timing_lock;      ///< what its benchmark had alone: "gpu" or "host"
  int parallel_checks = 0;      ///< checkers at once (checkers_for_memory(); 0: none ran)
  int sanitizer_checkers = 0;   ///< of them, the sanitizer's
  std::string isolation;        ///< how the lab's process was confined (isolation.hpp)
  std::string build_isolation;  ///< how the submission's build was confined
  double ceiling_gbps = 0;      ///< the first ceiling measured in this run (informative)
  ProcessCounts processes;      ///< the processes its GPU steps started
  std::vector<std::string> labs_requested;  ///< lab folders graded
  std::vector<LabReport> labs;              ///< per lab
  std::vector<std::string> messages;        ///< run-wide messages (no GPU, configure failure...)
  double score = 0;                         ///< total points
  double max_score = 0;                     ///< total available
  double pass_mark = 0;                     ///< percent
  int exit_code = 0;                        ///< what `grade` exits with
  std::string reproduce;                    ///< the command that reproduces this grade

  /// Recomputes score and max_score from the labs.
  void total();
};

/// Everything, as JSON (report.json).
nlohmann::ordered_json report_json(const GradeReport& report);

/// JUnit XML: one `<testsuite>` per lab, one `<testcase>` per graded part.
std::string junit_xml(const GradeReport& report);

/// Gradescope's results.json.
nlohmann::ordered_json gradescope_json(const GradeReport& report);

/// The terminal table with a header (GPU, seed) and the notable messages below it.
std::string summary_text(const GradeReport& report, bool verbose = true);

/// Writes report.json, junit.xml, results.json and summary.txt into \p out_dir.
void write_reports(const GradeReport& report, const std::filesystem::path& out_dir);

/// Escapes text for XML attribute and element content (and drops characters XML forbids).
std::string xml_escape(const std::string& text);

/// One row of a batch gradebook.
struct GradebookRow {
  std::string student;             ///< subfolder name
  double total = 0;                ///< points
  double max = 0;                  ///< available points
  std::vector<double> lab_points;  ///< per lab, in the column order
  std::uint64_t seed = 0;          ///< seed of the student's run
  std::string status;              ///< "graded", "graded (no GPU)", "error: ..."
  std::string reason;              ///< where points were lost (gradebook_reason())
};

/// Where a graded submission lost points, in one line for the gradebook: every lab below its
/// maximum with its first message ("04_sequential: public tests: passed 38 of 40 ..."), from a
/// report.json object; empty for full marks.
std::string gradebook_reason(const nlohmann::ordered_json& report);

/// The gradebook CSV: `student,total,max,<lab>`...,seed,status,reason. The student (made
/// inert: inert_text() on one line), the status and the reason are csv_text() cells; the
/// numbers are the grader's own.
std::string gradebook_csv(const std::vector<std::string>& labs,
                          const std::vector<GradebookRow>& rows);

/// Quotes a CSV field when it needs it.
std::string csv_field(const std::string& text);

/// A CSV cell of text a student can influence (a name, a status, a reason): csv_field(), and a
/// cell that begins with `=`, `+`, `-`, `@`, tab, carriage return, line feed or NUL is made
/// plain text as OWASP's CSV-injection guidance says: a single quote in front, inside quotes
/// (`=HYPERLINK("x")` is written `"'=HYPERLINK(""x"")"`).
std::string csv_text(const std::string& text);

/// JSON text that never throws on the invalid UTF-8 a student's program may print.
std::string dump_json(const nlohmann::ordered_json& json);

}  // namespace reduce::grade
