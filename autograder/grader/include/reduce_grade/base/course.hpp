/// \file
/// \brief The course the grader grades against: its root folder and its labs.
#pragma once

#include <reduce_grade/base/part_seconds.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce::grade {

/// A usage or configuration problem (bad path, missing course root, unknown lab, bad rubric):
/// the CLI reports its message and exits with code 2.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One operation of the course catalogue (course.json).
struct CourseOperation {
  std::string name;    ///< e.g. "sum", "sum_deterministic", "atomic_max"
  std::string entry;   ///< the lab.cuh function that implements it, e.g. "sum", "atomic_max_apply"
  std::string result;  ///< what the entry returns: "float", "index", "apply" (no workspace),
                       ///< "segments" or "segment_pairs"
  std::string bench;   ///< the benchmark's row family ("sum" for sum_deterministic); empty: none
  /// The operations whose suite files test it, on its own entry point (course.json `suites`,
  /// default itself): sum_deterministic is tested by the sum's suites and its own.
  std::vector<std::string> suites;
};

/// How the grader treats one operation of a lab, derived from the course's files. The names the
/// build gives its library, its C getter and its benchmark rows' name, are the build manifest's
/// (BuildManifest::getter(), BuildManifest::bench_name()), never derived here.
struct OpPlan {
  std::string op;      ///< e.g. "sum", "sum_deterministic", "maximum", "atomic_max"
  std::string entry;   ///< the lab.cuh function called for it, e.g. "sum"
  std::string result;  ///< "float", "index", "apply", "segments" or "segment_pairs" (course.json)
  bool public_tests = false;  ///< `autograder/tests/<op>_test`.cu exists
  bool hidden_tests = false;  ///< `autograder/hidden/<op>_hidden_test`.cu exists
  std::string bench_op;       ///< benchmark row family ("sum" for sum_deterministic); empty: none
  /// The operations whose suite files test it (CourseOperation::suites): what the course's
  /// checkers must link to run its tests.
  std::vector<std::string> suites;
};

/// One lab of the course catalogue (course.json).
struct CourseLab {
  std::string folder;            ///< e.g. "04_sequential" (same in labs/, solutions/, a submission)
  std::vector<std::string> ops;  ///< operations it implements, one `<op>`.cu each, e.g. {"sum"}
  std::string order;             ///< summation order for its error bound: serial, tree, tree_atomic
  int number = 0;                ///< the leading number of the folder, e.g. 4
  /// Its operations' plans (plan_ops()), made once by load_course(); empty from
  /// parse_course_catalogue() alone, which knows no course folder to look in.
  std::vector<OpPlan> plans;
  /// Tests of its operations the grader does not run for it (course.json `left_out`, GoogleTest
  /// names such as "SumTest.AboveInt32Range"): another of its tests fails whatever they would.
  std::vector<std::string> left_out;
};

/// The course: where it lives and which labs it has, in teaching order.
struct Course {
  std::filesystem::path root;  ///< folder with CMakeLists.txt, cmake/, common/, autograder/
  std::vector<CourseOperation> operations;  ///< from course.json
  std::vector<CourseLab> labs;              ///< from course.json, in teaching order
  /// The labs' parts' measured seconds (autograder/part_seconds.toml; empty without it), by
  /// which the correctness phase balances its checker groups.
  PartSeconds part_seconds;

  /// The lab with folder name \p folder, or nullptr.
  const CourseLab* find(const std::string& folder) const;
  /// The operation named \p name, or nullptr.
  const CourseOperation* operation(const std::string& name) const;
  /// The plans of the lab with folder name \p folder (CourseLab::plans); empty for no such lab.
  const std::vector<OpPlan>& plans(const std::string& folder) const;
};

/// True when \p dir looks like the course root (CMakeLists.txt, cmake/ReduceLab.cmake,
/// course.json, autograder/tests).
bool is_course_root(const std::filesystem::path& dir);

/// Finds the course root: \p explicit_root if given, else $REDUCE_COURSE_ROOT, else the first
/// course root above the working directory, else above the grader's executable, else the
/// source folder the grader was built from. Throws ConfigError when none is found.
std::filesystem::path find_course_root(const std::string& explicit_root);

/// Parses the catalogue (course.json text): operations and labs. Throws ConfigError.
Course parse_course_catalogue(const std::string& json_text);

/// Loads the course at \p root (its catalogue, its labs' plans and its part seconds); throws
/// ConfigError when it is not a course root or a file of it is malformed.
Course load_course(const std::filesystem::path& root);

/// The plan of every operation of \p lab: which test suites exist, how it is benchmarked.
std::vector<OpPlan> plan_ops(const Course& course, const CourseLab& lab);

/// Resolves a lab selection such as "01,04", "4;9", "04_sequential,9", "all" or "" (all) to
/// lab folders in course order. Throws ConfigError naming an unknown lab.
std::vector<std::string> select_labs(const Course& course, const std::string& spec);

/// The folder of a submission that holds the lab folders: \p path itself when it holds any
/// course lab folder, else \p path/labs, else its only subfolder when that holds lab folders
/// (a zip with a top folder). Returns \p path when none matches (every lab is then missing).
std::filesystem::path resolve_submission_tree(const Course& course,
                                              const std::filesystem::path& path);

}  // namespace reduce::grade
