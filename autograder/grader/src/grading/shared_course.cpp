#include <reduce_grade/grading/grader.hpp>
#include <reduce_grade/grading/shared_course.hpp>

#include <fmt/format.h>

namespace reduce::grade {

// What build_course() is given, by the shared course and by prepare_submission() alike.
CourseBuildOptions course_build_options(const Course& course, const Rubric& rubric,
                                        const std::vector<OpPlan>& plans, const fs::path& build_dir,
                                        const GradeOptions& options, const fs::path& log_dir,
                                        bool benchmark,
                                        std::function<void(const std::string&)> progress) {
  CourseBuildOptions co;
  co.course_root = course.root;
  co.build_dir = build_dir;
  co.plans = plans;
  co.jobs = options.jobs;
  co.benchmark = benchmark;
  co.hidden = true;
  co.cmake_args = options.cmake_args;
  co.limits = rubric.limits;
  co.log_dir = log_dir;
  co.progress = std::move(progress);
  return co;
}

void add_references(CourseBuildOptions& options, const Course& course, const Rubric& rubric,
                    const std::vector<std::string>& labs) {
  std::error_code ec;
  for (const std::string& lab : labs) {
    const LabRubric* lr = rubric.find(lab);
    if (lr == nullptr) continue;
    if (lr->measure == "reference" && fs::is_directory(course.root / "solutions" / lab, ec))
      options.reference_labs.push_back(lab);
    options.cub_references = options.cub_references || lr->measure == "cub";
  }
}

SharedCourse::SharedCourse(const Course& course, const Rubric& rubric,
                           const std::vector<std::string>& labs, bool gpu,
                           const GradeOptions& options, Progress& progress, const fs::path& dir,
                           bool always) {
  if (!always && (!gpu || options.no_gpu)) return;
  std::error_code ec;
  if (!dir.empty() && fs::is_regular_file(dir / kCourseBuildDone, ec)) {
    // Finished by `build-course` for every task of a job array: used as it is.
    auto build = std::make_shared<CourseBuild>();
    build->dir = fs::absolute(dir, ec);
    build->course_root = course.root;
    build->manifest = read_manifest(build->dir);
    build->benchmark_ok =
        !build->manifest.bench.empty() && fs::is_regular_file(build->manifest.bench, ec);
    build->digests = course_digests(build->dir, course.root);
    build->ok = true;
    build_ = build;
    prebuilt_ = true;
    progress.line("course: using the course build in " + build->dir.string());
    return;
  }
  std::vector<OpPlan> plans;
  for (const std::string& lab : labs)
    if (const CourseLab* cl = course.find(lab))
      for (const OpPlan& plan : cl->plans) plans.push_back(plan);
  temporary_ = dir.empty();
  const fs::path where = temporary_ ? make_temp_dir("reduce-course-") : fs::absolute(dir, ec);
  options_ = course_build_options(
      course, rubric, plans, where, options, where / "logs", true,
      [&progress](const std::string& line) { progress.line("course: " + line); });
  add_references(options_, course, rubric, labs);
  build_ = std::make_shared<CourseBuild>(build_course(options_));
  if (!build_->ok) throw ConfigError(build_->problem);
  progress.line(fmt::format("course: built in {:.1f} s", build_->seconds));
}

SharedCourse::~SharedCourse() {
  if (build_ && temporary_) remove_all_quietly(build_->dir);
}

void SharedCourse::restore(Progress& progress, bool may_rebuild) {
  if (!build_) return;
  const std::string changed = build_->changes();
  if (changed.empty()) return;
  // A rebuild cannot undo a change to the course itself: stop, keep what was graded.
  if (changed.find("course: ") != std::string::npos)
    throw ConfigError("the course's own files changed during grading (" + changed +
                      "); restore them and grade the remaining submissions again");
  if (!may_rebuild)
    throw ConfigError("the course's binaries changed during grading (" + changed +
                      "); the submissions graded at the same time got no grade; grade the "
                      "remaining submissions again");
  if (prebuilt_)
    throw ConfigError("the shared course build changed during grading (" + changed +
                      "); run build-course again and grade the remaining submissions");
  progress.line("course: " + changed + ": rebuilt from scratch");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(build_->dir, ec))
    if (entry.path().filename() != "logs") remove_all_quietly(entry.path());
  const CourseBuild fresh = build_course(options_);
  if (!fresh.ok) throw ConfigError(fresh.problem);
  build_->digests = fresh.digests;
  build_->benchmark_ok = fresh.benchmark_ok;
}

}  // namespace reduce::grade
