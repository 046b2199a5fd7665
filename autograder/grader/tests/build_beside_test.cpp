// The labs' build with each lab checked as soon as ninja has linked it, while it still builds the
// others (BuildOptions::lab_checked), on the course's own solutions: this compiles CUDA code (about
// a minute on two cores), so it carries the label slow.
#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/submission/build.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace reduce::grade {
namespace {

const fs::path kRoot = REDUCE_GRADE_TEST_ROOT;

TEST(BuildBeside, EachLabIsCheckedAndToldOnceLinkedWhileTheOthersStillBuild) {
  const Course course = load_course(kRoot);
  const fs::path dir = make_temp_dir("reduce-grade-beside-");
  BuildOptions o;
  o.course_root = kRoot;
  o.submission = kRoot / "solutions";
  o.build_dir = dir / "build";
  // Lab 17 compiles CUB's segmented reductions: long after lab 01 has linked.
  o.labs = {"01_atomic_naive", "17_segmented"};
  for (const std::string& lab : o.labs) o.plans[lab] = course.plans(lab);
  o.jobs = 2;
  o.benchmark = false;
  o.log_dir = dir / "logs";
  std::mutex mutex;
  std::map<std::string, int> checks;     // keep_lab's calls per lab
  std::map<std::string, bool> had_deps;  // whether its compile's record was there
  o.keep_lab = [&](const std::string& lab, const BuildManifest&, const std::string& deps) {
    const std::lock_guard<std::mutex> lock(mutex);
    ++checks[lab];
    had_deps[lab] = !lab_dependencies(deps, lab, course.plans(lab).front().op).empty();
    return true;
  };
  std::vector<std::string> told;                 // lab_checked's labs, in order
  std::map<std::string, bool> passed, unlinked;  // its word; whether lab 17 was still unlinked
  BuildOutcome* built = nullptr;
  o.lab_checked = [&](const std::string& lab, bool ok) {
    const std::lock_guard<std::mutex> lock(mutex);
    told.push_back(lab);
    passed[lab] = ok;
    std::error_code ec;
    unlinked[lab] = !fs::exists(built->manifest.library("17_segmented", "segmented_sum"), ec);
  };
  o.defer_build = [] { return true; };
  BuildOutcome outcome = build_submission(o);
  built = &outcome;
  ASSERT_TRUE(outcome.configured) << outcome.configure_problem;
  EXPECT_EQ(outcome.deferred, o.labs) << "configured, every lab left to build";
  EXPECT_TRUE(checks.empty());
  build_later_labs(o, outcome);
  EXPECT_TRUE(outcome.deferred.empty());
  for (const std::string& lab : o.labs) {
    EXPECT_TRUE(outcome.labs[lab].ok) << lab;
    EXPECT_EQ(checks[lab], 1) << lab << " checked once";
    EXPECT_TRUE(had_deps[lab]) << lab << ": its check saw what its compile read";
  }
  EXPECT_EQ(told, o.labs) << "each lab told once, lab 01 first";
  for (const std::string& lab : o.labs) EXPECT_TRUE(passed[lab]) << lab;
  EXPECT_TRUE(unlinked["01_atomic_naive"]) << "told before lab 17's libraries were linked";
  remove_all_quietly(dir);
}

}  // namespace
}  // namespace reduce::grade
