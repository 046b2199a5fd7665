/// \file
/// \brief The course's binaries shared by every submission of a run (batch, check-planted, the
/// tasks of a Slurm job array).
#pragma once

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/submission/build.hpp>
#include <reduce_grade/submission/submission.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace reduce::grade {

/// The checkers, runner and benchmark for every lab of a run, built once: in a temporary folder
/// removed at the end, or in a given folder that is kept. A folder that `build-course` finished
/// (it holds `course-build.done`) is used as it is, without building: that is how the tasks of a
/// job array share one build.
class SharedCourse {
 public:
  /// Builds (or reuses, see above) the checkers of every operation of \p labs in \p dir (empty:
  /// a temporary folder). Builds nothing without a GPU (nothing will run) unless \p always.
  /// Throws ConfigError when they do not build.
  SharedCourse(const Course& course, const Rubric& rubric, const std::vector<std::string>& labs,
               bool gpu, const GradeOptions& options, Progress& progress,
               const std::filesystem::path& dir = {}, bool always = false);
  ~SharedCourse();
  SharedCourse(const SharedCourse&) = delete;
  SharedCourse& operator=(const SharedCourse&) = delete;

  /// The build, for GradeOptions::course_build (null when nothing was built).
  std::shared_ptr<const CourseBuild> get() const { return build_; }

  /// When a file changed since the build (a submission's code wrote it; that submission's grade
  /// is void), rebuilds the course's binaries from an empty folder so that the next submission
  /// meets the course's own. Throws ConfigError when the course's sources changed (no rebuild
  /// undoes that), when the build is shared with other tasks, or when \p may_rebuild is false
  /// (other submissions are using it).
  void restore(Progress& progress, bool may_rebuild = true);

 private:
  CourseBuildOptions options_;
  std::shared_ptr<CourseBuild> build_;
  bool temporary_ = false;
  bool prebuilt_ = false;
};

/// The marker `build-course` leaves in a finished shared course build.
inline constexpr const char* kCourseBuildDone = "course-build.done";

}  // namespace reduce::grade
