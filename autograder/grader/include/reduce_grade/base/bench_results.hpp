/// \file
/// \brief Reads the JSON of the sum benchmark (Google Benchmark 1.7 and 1.8 formats).
#pragma once

#include <reduce_vocabulary/row_fields.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace reduce::grade {

/// A row's verdict fields (reduce_vocabulary/row_fields.hpp), each unset where the row has none or
/// one of the wrong type: the JSON is the benchmark's, but read as if anyone could have written it.
struct VerdictFields {
  std::optional<bench::RowFailure> failure;  ///< "failure": a RowFailure's number
  std::optional<double> wrong_results;       ///< "wrong_results": a whole number, not negative
  std::optional<double> warmup_wrong;        ///< "warmup_wrong": a whole number, not negative
  std::optional<bool> clocks_agree;          ///< "clocks_agree": 1 or 0
};

/// One benchmark row, `<family>/<impl>/<n>[/...]` (family: sum, maximum, ...).
struct BenchRow {
  std::string family;             ///< operation: "sum", "maximum", ...
  std::string impl;               ///< "stream_read", "cub", "04_sequential", "cpu"
  std::size_t n = 0;              ///< elements
  double median_us = 0;           ///< median time of one call
  double median_gbps = 0;         ///< bandwidth from the median time
  double wrong_results = 0;       ///< timed runs whose result was wrong (0 when not a number)
  double noise = 0;               ///< a graded row's samples' relative noise (0 when not given)
  double event_us = 0;            ///< a graded row's call on its process's CUDA events (0: none)
  int throttled_samples = 0;      ///< a graded row's samples at slowed GPU clocks, left out
  bool throttled_figure = false;  ///< its figure includes them: too few ran at full clocks
  bool error = false;             ///< the row was skipped with an error (threw or wrong results)
  std::string error_message;      ///< its message: for people, never read for a verdict
  VerdictFields verdict;          ///< what the row says of itself
};

/// What a graded row (a lab timed through its runner) says of the lab, from its verdict fields
/// alone: its message is shown, never read.
struct GradedVerdict {
  bool passed = false;           ///< a measurement the lab may be graded on
  bool clocks_disagree = false;  ///< failed: the lab's process and the grader's clock disagree
  double wrong_results = 0;      ///< wrong results (the warm-ups' included)
  std::string reason;            ///< why it failed, for people (empty when it passed)
};

/// The verdict of graded row \p row. A row whose fields are missing, ill-typed or at odds with
/// each other (a failed row that says it did not fail) fails, and its reason says which.
GradedVerdict graded_verdict(const BenchRow& row);

/// One benchmark run's results.
struct BenchResults {
  bool parsed = false;          ///< the JSON was read
  std::string problem;          ///< why not (else empty)
  double ceiling_gbps = 0;      ///< context "ceiling_gbps" (the ceiling probe of this run)
  double theoretical_gbps = 0;  ///< context "theoretical_gbps" (the GPU's peak memory bandwidth)
  std::string gpu;              ///< context "gpu"
  std::vector<BenchRow> rows;   ///< all rows
  /// Lab processes the benchmark started: the largest counter "lab_process_starts" of its rows
  /// (each row's count of the whole process so far). A diagnostic, never a verdict.
  int lab_process_starts = 0;

  /// The row of \p impl at \p n (in \p family when not empty), or nullptr.
  const BenchRow* find(const std::string& impl, std::size_t n,
                       const std::string& family = "") const;
};

/// Parses the --benchmark_out JSON text. Accepts "error_occurred"/"error_message" (1.7) and
/// "skipped"/"skip_message" (1.8) for rows that failed.
BenchResults parse_bench_json(const std::string& text);

/// "2^28" or "268435456" to a number; 0 when malformed or not below 2^63.
std::size_t parse_size(const std::string& text);

}  // namespace reduce::grade
