// The rubric: the credit curve, parsing and validation, and the real rubric's consistency with
// the course (course.json) and with its calibration policy.
#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/base/util.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace reduce::grade {
namespace {

TEST(PerformanceCurve, FullAtThresholdZeroAtFloorLinearBetween) {
  EXPECT_DOUBLE_EQ(performance_points(0.8, 0.7, 0.28, 2), 2);
  EXPECT_DOUBLE_EQ(performance_points(0.7, 0.7, 0.28, 2), 2);
  EXPECT_DOUBLE_EQ(performance_points(0.28, 0.7, 0.28, 2), 0);
  EXPECT_DOUBLE_EQ(performance_points(0.1, 0.7, 0.28, 2), 0);
  EXPECT_NEAR(performance_points(0.49, 0.7, 0.28, 2), 1.0, 1e-12);
  EXPECT_NEAR(performance_points(0.595, 0.7, 0.28, 2), 1.5, 1e-12);
  EXPECT_DOUBLE_EQ(performance_points(0, 0.7, 0.28, 2), 0);
  EXPECT_DOUBLE_EQ(performance_points(std::nan(""), 0.7, 0.28, 2), 0);
  EXPECT_DOUBLE_EQ(performance_points(0.5, 0.5, 0.5, 2), 2);  // a step
  EXPECT_DOUBLE_EQ(performance_points(0.49, 0.5, 0.5, 2), 0);
}

const char* const kMinimal = R"(
[grader]
pass_mark = 50
[points]
build = 2
[labs.04_sequential]
threshold = 0.2
[labs.09_warp_shuffle]
threshold = 0.7
floor = 0.5
measured = 0.95
points = { performance = 4, hidden = 0 }
)";

TEST(RubricParse, DefaultsOverridesAndFloors) {
  const Rubric r = parse_rubric(kMinimal);
  EXPECT_DOUBLE_EQ(r.pass_mark, 50);
  ASSERT_EQ(r.labs.size(), 2u);
  const LabRubric* four = r.find("04_sequential");
  ASSERT_NE(four, nullptr);
  EXPECT_DOUBLE_EQ(four->points.build, 2);
  EXPECT_DOUBLE_EQ(four->points.tests, 4);
  EXPECT_DOUBLE_EQ(four->points.total(), 11);
  EXPECT_NEAR(four->floor, 0.4 * 0.2, 1e-12);  // default floor_ratio
  const LabRubric* nine = r.find("09_warp_shuffle");
  EXPECT_DOUBLE_EQ(nine->floor, 0.5);
  EXPECT_DOUBLE_EQ(nine->points.performance, 4);
  EXPECT_DOUBLE_EQ(nine->points.hidden, 0);
  EXPECT_DOUBLE_EQ(nine->points.build, 2);
  EXPECT_EQ(r.limits.max_restarts, 3);
  EXPECT_EQ(r.sanitizer.tools.size(), 3u);
  EXPECT_EQ(r.sanitizer.filter_for("sum"),
            "*SumExact*/33:*SumExact*/1025:*EmptyInput*:*SumSentinel*/1025");
  EXPECT_EQ(r.sanitizer.filter_for("maximum"), "*EmptyInput*:*/33:*/1025");
  EXPECT_EQ(r.find("10_max_min"), nullptr);
}

TEST(RubricParse, LibraryPrimitivesPerLab) {
  const Rubric r = parse_rubric(
      "[labs.09_warp_shuffle]\nthreshold = 0.2\n"
      "[labs.16_library_primitives]\nthreshold = 0.2\nlibrary = \"primitives\"\n");
  EXPECT_EQ(r.find("09_warp_shuffle")->library, "none");
  EXPECT_EQ(r.find("16_library_primitives")->library, "primitives");
  EXPECT_FALSE(r.library.for_lab(r.find("09_warp_shuffle")).primitives_allowed);
  EXPECT_TRUE(r.library.for_lab(r.find("16_library_primitives")).primitives_allowed);
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.2\nlibrary = \"cub\"\n"), ConfigError);
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.2\nlibrary = true\n"), ConfigError);
}

TEST(RubricParse, AReferenceLabKeepsItsProbeThresholdForWhenNoReferenceRuns) {
  const Rubric r = parse_rubric(
      "[labs.02_interleaved_divergent]\nmeasure = \"reference\"\nthreshold = 0.75\n"
      "probe_threshold = 0.154\n[labs.09_warp_shuffle]\nthreshold = 0.7\nfloor = 0.3\n");
  const LabRubric* two = r.find("02_interleaved_divergent");
  EXPECT_EQ(two->measure, "reference");
  EXPECT_DOUBLE_EQ(two->threshold_for(true), 0.75);
  EXPECT_NEAR(two->floor_for(true), 0.3, 1e-12);
  EXPECT_DOUBLE_EQ(two->threshold_for(false), 0.154);
  EXPECT_NEAR(two->floor_for(false), 0.4 * 0.154, 1e-12);
  const LabRubric* nine = r.find("09_warp_shuffle");
  EXPECT_EQ(nine->measure, "probe");
  EXPECT_DOUBLE_EQ(nine->threshold_for(false), 0.7);
  EXPECT_DOUBLE_EQ(nine->floor_for(false), 0.3);
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.2\nmeasure = \"thrust\"\n"), ConfigError);
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.2\nlaunch_bound_size = \"2^16\"\n"),
               ConfigError)
      << "the probe is not timed at a second size";
  EXPECT_EQ(parse_rubric("[labs.a]\nthreshold = 0.9\nmeasure = \"cub\"\n"
                         "launch_bound_size = \"2^16\"\n")
                .find("a")
                ->launch_bound_size,
            "2^16");
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.2\nsize = \"2^24\"\n"), ConfigError)
      << "the probe runs at the rubric's size alone";
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.7\nmeasure = \"reference\"\nsize = 64\n"),
               ConfigError)
      << "a size is a text such as \"2^24\"";
  EXPECT_EQ(parse_rubric("[labs.a]\nthreshold = 0.7\nmeasure = \"reference\"\nsize = \"2^24\"\n")
                .find("a")
                ->size,
            "2^24");
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.2\nprobe_threshold = 0.1\n"), ConfigError)
      << "a probe lab has one threshold";
  EXPECT_THROW(parse_rubric("[labs.a]\nmeasure = \"reference\"\nthreshold = 0.7\n"
                            "probe_threshold = 1.5\n"),
               ConfigError);
}

TEST(RubricParse, CreditIsTheSlowestRowUnlessALabAsksForEachLength) {
  const Rubric r = parse_rubric(
      "[labs.a]\nthreshold = 0.2\n[labs.b]\nthreshold = 0.2\ncredit = \"per_length\"\n");
  EXPECT_EQ(r.find("a")->credit, "slowest");
  EXPECT_EQ(r.find("b")->credit, "per_length");
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.2\ncredit = \"each\"\n"), ConfigError);
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.2\ncredit = 4\n"), ConfigError);
}

// A benchmark alone on its GPU unless the rubric asks for the whole host.
TEST(RubricParse, TimingLockPerGpuByDefault) {
  EXPECT_FALSE(parse_rubric("[labs.a]\nthreshold = 0.2\n").limits.host_wide_timing_lock);
  EXPECT_TRUE(parse_rubric("[limits]\ntiming_lock = \"host\"\n[labs.a]\nthreshold = 0.2\n")
                  .limits.host_wide_timing_lock);
}

TEST(RubricParse, GpuMemoryLimitIsAllOfItByDefault) {
  EXPECT_EQ(parse_rubric("[labs.a]\nthreshold = 0.2\n").limits.gpu_memory_gib, 0.0);
  EXPECT_EQ(parse_rubric("[limits]\ngpu_memory_gib = 15\n[labs.a]\nthreshold = 0.2\n")
                .limits.gpu_memory_gib,
            15.0);
  EXPECT_THROW(parse_rubric("[limits]\ngpu_memory_gib = -1\n[labs.a]\nthreshold = 0.2\n"),
               ConfigError);
}

TEST(RubricParse, RejectsMistakes) {
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.2\n[grader]\npass_mrak = 3\n"), ConfigError);
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0\n"), ConfigError);
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 1.5\n"), ConfigError);
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.2\nfloor = 0.3\n"), ConfigError);
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = \"high\"\n"), ConfigError);
  EXPECT_THROW(parse_rubric("[labs.a]\nthreshold = 0.2\npoints = { tests = -1 }\n"), ConfigError);
  EXPECT_THROW(parse_rubric("[grader]\npass_mark = 0\n"), ConfigError);   // no labs
  EXPECT_THROW(parse_rubric("[labs.a\nthreshold = 0.2\n"), ConfigError);  // syntax
  try {
    parse_rubric("[labs.a]\nthreshold = = 0.2\n", "my.toml");
    ADD_FAILURE() << "no error for text that is not TOML";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(starts_with(e.what(), "my.toml:2: TOML syntax error: ")) << e.what();
  }
  EXPECT_THROW(parse_rubric("[sanitizer]\ntools = [\"leakcheck\"]\n[labs.a]\nthreshold = 0.2\n"),
               ConfigError);
  EXPECT_THROW(parse_rubric("[limits]\ntiming_lock = \"node\"\n[labs.a]\nthreshold = 0.2\n"),
               ConfigError);
  try {
    parse_rubric("[labs.a]\nthreshold = 0.2\nthreshhold = 0.3\n", "my.toml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("my.toml"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("threshhold"), std::string::npos);
  }
}

TEST(RealRubric, CoversExactlyTheCourseLabs) {
  const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  const Rubric rubric = load_rubric(course.root / "autograder" / "rubric.toml");
  std::vector<std::string> labs;
  for (const CourseLab& lab : course.labs) labs.push_back(lab.folder);
  const std::vector<std::string> problems = check_rubric_against_labs(rubric, labs);
  for (const std::string& p : problems) ADD_FAILURE() << p;
  EXPECT_TRUE(check_rubric_against_labs(rubric, {"04_sequential"}).size() ==
              rubric.labs.size() - 1);
}

TEST(RealRubric, EveryLabIsWorthTenAndThresholdsFollowTheCalibrationPolicy) {
  const Rubric rubric =
      load_rubric(std::string(REDUCE_GRADE_TEST_ROOT) + "/autograder/rubric.toml");
  for (const LabRubric& lab : rubric.labs) {
    EXPECT_DOUBLE_EQ(lab.points.total(), 10) << lab.lab;
    EXPECT_GT(lab.threshold, 0) << lab.lab;
    // The capstone's floor is CUB's time x 1.5; every other floor is the default.
    if (lab.measure != "cub")
      EXPECT_NEAR(lab.floor, rubric.performance.floor_ratio * lab.threshold, 1e-12) << lab.lab;
    // Against the reference, the margin is the threshold: the reference reads 1.0 of itself.
    if (lab.measure == "reference") {
      EXPECT_DOUBLE_EQ(lab.threshold, rubric.performance.margin) << lab.lab;
      EXPECT_NEAR(lab.probe_floor, rubric.performance.floor_ratio * lab.probe_threshold, 1e-12);
    }
    if (lab.measured > 0) {  // calibrated: the probe's threshold = margin x measured
      EXPECT_NEAR(lab.probe_threshold, rubric.performance.margin * lab.measured,
                  0.0015 + 0.005 * lab.measured)
          << lab.lab;
    }
  }
}

// Labs bound by atomics, barriers, latency or integer work are judged against their reference;
// the labs that read at the memory's speed against the probe.
TEST(RealRubric, TheLabsBoundByOtherThanMemoryAreJudgedAgainstTheirReferenceTheCapstoneCub) {
  const Rubric rubric =
      load_rubric(std::string(REDUCE_GRADE_TEST_ROOT) + "/autograder/rubric.toml");
  for (const LabRubric& lab : rubric.labs) {
    const int number = std::stoi(lab.lab.substr(0, 2));
    const bool reference = number <= 7 || number == 18;
    EXPECT_EQ(lab.measure, number == 15 ? "cub" : reference ? "reference" : "probe") << lab.lab;
    // A race gates performance where the lesson is synchronisation.
    EXPECT_EQ(lab.races_gate_performance, (number >= 2 && number <= 9) || number == 16) << lab.lab;
    // Lab 17's segment lengths each earn a share; every other lab keeps its slowest row.
    EXPECT_EQ(lab.credit, number == 17 ? "per_length" : "slowest") << lab.lab;
  }
}

}  // namespace
}  // namespace reduce::grade
