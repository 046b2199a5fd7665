/// \file
/// \brief The measured seconds of the labs' parts in the correctness phase's several-lab
/// checkers (autograder/part_seconds.toml), by which their groups are balanced.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace reduce::grade {

/// What one lab part (a lab's public and hidden tests of one operation) cost when measured.
struct PartCost {
  double seconds = 0;     ///< its seconds in a several-lab checker, the CUDA context left out
  std::size_t tests = 0;  ///< the number of tests it ran then
};

/// The table of autograder/part_seconds.toml, written by tools/maint/grade_phases.py
/// --part-seconds from a grading's logs on the reference GPU. Empty when the course has none:
/// every part then weighs its number of tests.
struct PartSeconds {
  int version = 0;          ///< the file's format (1)
  std::string measured_on;  ///< where and when it was measured, as the file says
  /// Per lab folder, per operation: its cost.
  std::map<std::string, std::map<std::string, PartCost>> labs;

  /// The cost of \p lab's part of operation \p op, or nullptr where the table lacks it.
  const PartCost* find(const std::string& lab, const std::string& op) const;
  /// The median over the table's parts of their seconds per test; 1 for an empty table, so that
  /// a weight is then the number of tests.
  double seconds_per_test() const;
  /// What a part of \p tests tests weighs in seconds: its measured seconds where the table has
  /// it, else \p tests times seconds_per_test() (a new lab, an operation the table lacks).
  double weight(const std::string& lab, const std::string& op, std::size_t tests) const;
};

/// Parses the table's TOML text: `version`, `measured_on` and `[part_seconds.<lab>]` tables of
/// `<op> = { seconds = S, tests = N }`. \p source_name names it in errors. Throws ConfigError
/// (course.hpp) with the file and the line for a syntax error, an unknown key or a value out of
/// place.
PartSeconds parse_part_seconds(std::string_view text,
                               const std::string& source_name = "part_seconds.toml");

/// Reads and parses \p path; an empty table where there is no such file. Throws ConfigError.
PartSeconds load_part_seconds(const std::filesystem::path& path);

}  // namespace reduce::grade
