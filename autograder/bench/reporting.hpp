/// \file
/// \brief What the benchmark reports: each row's verdict as counters of its JSON (the grader
/// reads them, reduce_vocabulary/row_fields.hpp), and the lines of the tables printed at the end
/// (tables.cuh).
#pragma once

#include <reduce_vocabulary/row_fields.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace reduce::bench {

/// What one row measured, for the tables printed at the end.
struct Row {
  double median_us = 0;  ///< median time of one call
  double gbps = 0;       ///< the bytes it reads over median_us
  double result = NAN;   ///< a result it returned (the first wrong one, else the latest)
  double error = NAN;    ///< |result - exact|
  std::string status = "ok";
  /// The verdict counters a failed row keeps in the JSON (kVerdictFields).
  benchmark::UserCounters verdict;
};

/// Where a row stands in the tables: (family, n, implementation), and the name it is
/// registered under (family/implementation/n, or floor/n).
struct RowId {
  std::string family;  ///< sum, maximum, segmented_sum_32...
  std::size_t n = 0;   ///< floats per call
  std::string impl;    ///< cub, stream_read, cpu, a lab's name
  std::string name;    ///< as registered with Google Benchmark

  /// The row family/impl/n.
  static RowId of(const std::string& family, const std::string& impl, std::size_t n);
};

/// Every row that ran in this process, for the tables and the JSON's verdicts.
class Rows {
 public:
  /// The line of \p id, made on its row's first run.
  Row& open(const RowId& id);
  /// The line of (family, n, impl), or nullptr when that row did not run.
  const Row* find(const std::string& family, std::size_t n, const std::string& impl) const;
  /// The line of the row registered as \p name, or nullptr.
  const Row* named(const std::string& name) const;

 private:
  using Key = std::tuple<std::string, std::size_t, std::string>;
  std::map<Key, Row> rows_;
  std::map<std::string, Key> names_;
};

/// The row passed: its counter kFailure says so (and \p row keeps no earlier verdict).
void pass_row(benchmark::State& state, Row& row);

/// The row failed for \p failure: its counter kFailure says why (kept in the JSON with the
/// other verdict counters it has now), \p message is its status and, where \p skip, the error
/// Google Benchmark reports (the row's other counters are then dropped from the JSON).
void fail_row(benchmark::State& state, Row& row, RowFailure failure, const std::string& message,
              bool skip = true);

/// The JSON file reporter that keeps a failed row's verdict counters where Google Benchmark
/// would drop them, when argv (or the environment) asks for a JSON file; else nullptr (Google
/// Benchmark's own reporter). Call before benchmark::Initialize(), which consumes argv.
std::unique_ptr<benchmark::BenchmarkReporter> verdict_file_reporter(int argc, char** argv,
                                                                    const Rows& rows);

/// The floor of size \p n (floor/<n>) as measured earlier in this process, GB/s; 0 if not.
double floor_gbps(const Rows& rows, std::size_t n);

}  // namespace reduce::bench
