/// \file
/// \brief The build manifest: where a build folder's course binaries and lab libraries are.
///
/// CMake writes `course-manifest.json` into every build folder (reduce_write_manifest() in
/// cmake/ReduceLab.cmake, with `file(GENERATE)`, so it exists once configure has run). The grader
/// reads every path from it and formats none itself, and takes from it the names the build gave:
/// each entry point's C getter and each lab library's benchmark rows.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// Which of an operation's suites a checker runs.
enum class SuiteKind {
  kPublic,  ///< its public suites (what students run)
  kHidden,  ///< its hidden suites
  kGraded,  ///< both in one process (the hidden ones are the suites named Hidden*)
};

/// How to run one kind of an operation's suites: the course checker that holds them, and what
/// selects them there.
struct SuiteSelection {
  std::filesystem::path checker;  ///< the checker binary; empty where the build has none
  std::string filter;             ///< the GoogleTest filter of the operation's tests of that kind
  std::string entry;              ///< the lab.cuh entry point the shared suites call, e.g. "sum"

  /// The checker's arguments that select them for a lab (--lab-entry=, --lab-filter=).
  std::vector<std::string> args() const;
};

/// \p filter (a GoogleTest filter, "POSITIVE[-NEGATIVE]") that also leaves out \p tests
/// (GoogleTest names or patterns); \p filter itself where there are none.
std::string filter_without(const std::string& filter, const std::vector<std::string>& tests);

/// What one build folder's course-manifest.json says: paths, and the names the build gave
/// (getters, filters, benchmark rows).
struct BuildManifest {
  std::filesystem::path file;    ///< the manifest read
  std::filesystem::path runner;  ///< reduce_lab_runner
  std::filesystem::path bench;   ///< reduce_bench (empty: not configured)
  /// cub::DeviceReduce::Sum as a lab library, per sum mode ("sum", "sum_deterministic"): the
  /// measure of a lab of measure "cub" (autograder/bench/references).
  std::map<std::string, std::filesystem::path> cub_references;
  std::filesystem::path cuda_compiler;                ///< nvcc as configured
  std::vector<std::filesystem::path> host_compilers;  ///< the C++ compilers (empty ones left out)
  std::filesystem::path contract_include_dir;  ///< the folder of the contract headers' copies
  std::vector<std::string> contract_headers;   ///< e.g. "reduce/lab.cuh"
  std::filesystem::path public_checker;        ///< course_test: every public suite (empty: none)
  /// course_graded_test: every public and hidden suite (empty: the hidden suites were not built).
  std::filesystem::path graded_checker;
  /// One operation as the build named it: its entry point, the C getter a lab library exports
  /// that entry by (cmake/LabExports.cmake names it: the grader never derives it), and what
  /// selects its tests in the course's checkers (written by the build from the suites' names,
  /// autograder/tests/CMakeLists.txt); an empty filter where it has none.
  struct Operation {
    std::string entry;          ///< the lab.cuh entry point, e.g. "sum" for sum_deterministic
    std::string getter;         ///< its C getter, e.g. "reduce_sum_lab" for sum_deterministic
    std::string public_filter;  ///< its public tests
    std::string hidden_filter;  ///< its hidden tests
    std::string graded_filter;  ///< both
  };
  /// Each operation.
  std::map<std::string, Operation> operations;
  /// One lab library of a tree.
  struct LabLibrary {
    std::filesystem::path library;  ///< the built library
    /// The middle part of its benchmark rows (`<family>/<bench_name>/<n>`), as the build named it
    /// (cmake/ReduceLab.cmake): the lab, or `<lab>_<op>` for a second mode of an operation
    /// ("15_capstone_sum_deterministic").
    std::string bench_name;
  };
  /// Lab libraries of the tree "submission" (or the first tree): (lab, op) to the library.
  std::map<std::pair<std::string, std::string>, LabLibrary> libraries;

  /// The checker and filter that run \p op's suites of \p kind; an empty checker where the
  /// build has none (an operation without such suites, hidden suites not built).
  SuiteSelection suites(const std::string& op, SuiteKind kind) const;
  /// The checker that holds every suite a grading runs: the graded one, else the public one.
  std::filesystem::path grading_checker() const;
  /// The library of \p lab's \p op; empty when the build has none.
  std::filesystem::path library(const std::string& lab, const std::string& op) const;
  /// The name of the benchmark rows of \p lab's \p op; empty when the build has no such library.
  std::string bench_name(const std::string& lab, const std::string& op) const;
  /// The C getter of \p op's entry point. Throws ConfigError when the build has no operation
  /// \p op (a manifest of another course).
  const std::string& getter(const std::string& op) const;
  /// The contract headers' copies, as absolute paths.
  std::vector<std::filesystem::path> contract_header_paths() const;
};

/// Parses manifest text (\p file names it in errors). Throws ConfigError, also where an
/// operation has no string `getter` or a library no string `bench_name`.
BuildManifest parse_manifest(const std::string& text, const std::filesystem::path& file);

/// Reads `<build_dir>/course-manifest.json`. Throws ConfigError when it is missing or malformed.
BuildManifest read_manifest(const std::filesystem::path& build_dir);

}  // namespace reduce::grade
