/// \file
/// \brief The grading pipeline: build a submission, run its tests, sanitizer and benchmark one
/// GPU job at a time, score it with the rubric and write the reports.
#pragma once

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/benchmark/benchmark.hpp>
#include <reduce_grade/processes/isolation.hpp>
#include <reduce_grade/reports/report.hpp>
#include <reduce_grade/submission/build.hpp>
#include <reduce_grade/submission/submission.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce::grade {

/// Resolves the tree, builds the present labs and inspects their libraries (CPU only).
PreparedSubmission prepare_submission(const Course& course, const Rubric& rubric,
                                      const GradeOptions& options, const GpuProbe& gpu,
                                      Progress& progress);

/// Runs the GPU steps of every built lab (one process at a time), scores, writes the reports
/// into options.out, removes a temporary build folder, and returns the report.
GradeReport finish_submission(PreparedSubmission& prepared, const Course& course,
                              const Rubric& rubric, const GpuProbe& gpu, Progress& progress);

/// What build_course() needs to build the checkers of \p plans (and the benchmark when
/// \p benchmark) in \p build_dir, with the jobs and configure arguments of \p options.
CourseBuildOptions course_build_options(const Course& course, const Rubric& rubric,
                                        const std::vector<OpPlan>& plans,
                                        const std::filesystem::path& build_dir,
                                        const GradeOptions& options,
                                        const std::filesystem::path& log_dir, bool benchmark,
                                        std::function<void(const std::string&)> progress);

/// Asks \p options to build what the labs \p labs are measured against: the reference
/// solutions of those the rubric judges against theirs (measure "reference"), where this copy of
/// the course holds them (`solutions/<lab>`), and cub::DeviceReduce::Sum as a lab library where one
/// is judged against CUB (measure "cub").
void add_references(CourseBuildOptions& options, const Course& course, const Rubric& rubric,
                    const std::vector<std::string>& labs);

/// prepare_submission() then finish_submission().
GradeReport grade_submission(const Course& course, const Rubric& rubric,
                             const GradeOptions& options, Progress& progress);

/// The grader's version string.
std::string grader_version();

}  // namespace reduce::grade
