/// \file
/// \brief The build manifest: where a build folder's course binaries and lab libraries are.
///
/// CMake writes `course-manifest.json` into every build folder (reduce_write_manifest() in
/// cmake/ReduceLab.cmake, with `file(GENERATE)`, so it exists once configure has run). The grader
/// reads every path from it and formats none itself.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// The paths of one build folder's course-manifest.json.
struct BuildManifest {
  std::filesystem::path file;                         ///< the manifest read
  std::filesystem::path runner;                       ///< reduce_lab_runner
  std::filesystem::path bench;                        ///< reduce_bench (empty: not configured)
  std::filesystem::path cuda_compiler;                ///< nvcc as configured
  std::vector<std::filesystem::path> host_compilers;  ///< the C++ compilers (empty ones left out)
  std::filesystem::path contract_include_dir;  ///< the folder of the contract headers' copies
  std::vector<std::string> contract_headers;   ///< e.g. "reduce/lab.cuh"
  /// The checker binaries of one operation; an empty path where none is configured.
  struct Checkers {
    std::filesystem::path public_suite;  ///< the public tests (what students run)
    std::filesystem::path hidden_suite;  ///< the hidden tests
    std::filesystem::path graded;        ///< both in one binary (hidden: suites named Hidden*)
  };
  /// Checker binaries per operation.
  std::map<std::string, Checkers> checkers;
  /// Lab libraries of the tree "submission" (or the first tree): (lab, op) to the library.
  std::map<std::pair<std::string, std::string>, std::filesystem::path> libraries;

  /// The public (or hidden) checker of \p op; empty when none is configured.
  std::filesystem::path checker(const std::string& op, bool hidden) const;
  /// The checker of \p op that runs its public and hidden suites in one process; empty when
  /// none is configured.
  std::filesystem::path graded_checker(const std::string& op) const;
  /// The library of \p lab's \p op; empty when the build has none.
  std::filesystem::path library(const std::string& lab, const std::string& op) const;
  /// The contract headers' copies, as absolute paths.
  std::vector<std::filesystem::path> contract_header_paths() const;
};

/// Parses manifest text (\p file names it in errors). Throws ConfigError.
BuildManifest parse_manifest(const std::string& text, const std::filesystem::path& file);

/// Reads `<build_dir>/course-manifest.json`. Throws ConfigError when it is missing or malformed.
BuildManifest read_manifest(const std::filesystem::path& build_dir);

}  // namespace reduce::grade
