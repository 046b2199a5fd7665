/// \file
/// \brief Reads the JSON of the sum benchmark (Google Benchmark 1.7 and 1.8 formats).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace reduce::grade {

/// One benchmark row, `<family>/<impl>/<n>[/...]` (family: sum, maximum, ...).
struct BenchRow {
  std::string family;         ///< operation: "sum", "maximum", ...
  std::string impl;           ///< "stream_read", "cub", "04_sequential", "cpu"
  std::size_t n = 0;          ///< elements
  double median_us = 0;       ///< median time of one call
  double median_gbps = 0;     ///< bandwidth from the median time
  double wrong_results = 0;   ///< timed runs whose result was wrong
  bool error = false;         ///< the row was skipped with an error (threw or wrong results)
  std::string error_message;  ///< its message
};

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
