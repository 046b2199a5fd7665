// How the tests' several-lab checkers are split into groups, without a GPU: balanced_groups(),
// checker_groups() over the measured seconds of autograder/part_seconds.toml (PartSeconds), and
// that table's reading and its errors.
#include <correctness/lab_runs.hpp>

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/part_seconds.hpp>
#include <reduce_grade/base/util.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

namespace reduce::grade {
namespace {

using Groups = std::vector<std::vector<std::size_t>>;

TEST(BalancedGroups, HeaviestFirstIntoTheLightestGroup) {
  // 5 -> g0, 4 -> g1, 3 -> g1 (4 < 5), 2 -> g0 (5 < 7), 1 -> g0 (7 = 7: the first).
  EXPECT_EQ(balanced_groups({5, 1, 4, 2, 3}, 2), (Groups{{0, 3, 1}, {2, 4}}));
  // Equal weights keep their order and alternate.
  EXPECT_EQ(balanced_groups({1, 1, 1, 1, 1}, 2), (Groups{{0, 2, 4}, {1, 3}}));
  // One heavy item fills a group of its own; the light ones share the others.
  EXPECT_EQ(balanced_groups({1, 10, 1, 1}, 3), (Groups{{1}, {0, 3}, {2}}));
}

TEST(BalancedGroups, NeverAnEmptyGroup) {
  // More groups asked than items: one group per item, the heaviest in the first.
  EXPECT_EQ(balanced_groups({1, 2}, 5), (Groups{{1}, {0}}));
  // No group asked: one group of everything.
  EXPECT_EQ(balanced_groups({3, 1, 2}, 0), (Groups{{0, 2, 1}}));
  EXPECT_TRUE(balanced_groups({}, 4).empty());
}

/// The course's own table (autograder/part_seconds.toml), as the grader loads it.
const PartSeconds& course_table() {
  static const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  return course.part_seconds;
}

/// Every part of \p table as a job of the tests it ran when measured, in the table's order.
std::vector<PartJob> jobs_of(const PartSeconds& table) {
  std::vector<PartJob> jobs;
  for (const auto& [lab, ops] : table.labs)
    for (const auto& [op, cost] : ops) jobs.push_back({lab, op, cost.tests});
  return jobs;
}

/// The seconds of each group of \p groups: its jobs' weights in \p table.
std::vector<double> group_seconds(const PartSeconds& table, const std::vector<PartJob>& jobs,
                                  const Groups& groups) {
  std::vector<double> seconds;
  for (const std::vector<std::size_t>& g : groups) {
    double sum = 0;
    for (std::size_t k : g) sum += table.weight(jobs[k].lab, jobs[k].op, jobs[k].tests);
    seconds.push_back(sum);
  }
  return seconds;
}

TEST(PartSeconds, TheCoursesTableLoadsAndNamesOnlyTheCoursesParts) {
  const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  const PartSeconds& table = course.part_seconds;
  EXPECT_EQ(table.version, 1);
  EXPECT_TRUE(contains(table.measured_on, "H200")) << table.measured_on;
  ASSERT_GE(jobs_of(table).size(), 20u);
  for (const PartJob& job : jobs_of(table)) {
    const std::vector<OpPlan>& plans = course.plans(job.lab);
    EXPECT_TRUE(std::any_of(plans.begin(), plans.end(),
                            [&](const OpPlan& pl) { return pl.op == job.op && pl.public_tests; }))
        << job.lab << " (" << job.op << ") is no part of the course's tests checkers";
  }
  // The reason for the table: the naive atomics' part is the slowest by far.
  const PartCost* atomics = table.find("01_atomic_naive", "sum");
  ASSERT_NE(atomics, nullptr);
  for (const PartJob& job : jobs_of(table))
    EXPECT_LE(table.weight(job.lab, job.op, job.tests), atomics->seconds) << job.lab;
}

TEST(CheckerGroups, TheCoursesPartsSplitWithinFifteenPercentOfAnEqualShare) {
  const PartSeconds& table = course_table();
  const std::vector<PartJob> jobs = jobs_of(table);
  const Rubric rubric =
      load_rubric(std::string(REDUCE_GRADE_TEST_ROOT) + "/autograder/rubric.toml");
  std::vector<std::size_t> counts = {2, 3, 4, 5, 6, 7, 8};
  counts.push_back(
      static_cast<std::size_t>(rubric.limits.parallel_checks - rubric.limits.sanitizer_checkers));
  double total = 0, heaviest = 0;
  for (const PartJob& j : jobs) {
    total += table.find(j.lab, j.op)->seconds;
    heaviest = std::max(heaviest, table.find(j.lab, j.op)->seconds);
  }
  for (const std::size_t count : counts) {
    const Groups groups = checker_groups(table, jobs, count);
    ASSERT_EQ(groups.size(), count);
    std::vector<std::size_t> all;
    for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), jobs.size()) << "every part in exactly one group";
    for (std::size_t k = 0; k < all.size(); ++k) ASSERT_EQ(all[k], k);
    const std::vector<double> seconds = group_seconds(table, jobs, groups);
    const double bound = std::max(heaviest, total / static_cast<double>(count) * 1.15);
    EXPECT_LE(*std::max_element(seconds.begin(), seconds.end()), bound)
        << count << " groups of " << total << " s";
  }
}

/// A table of \p parts: (lab, seconds, tests), each of the operation sum.
PartSeconds table_of(const std::vector<std::tuple<std::string, double, std::size_t>>& parts) {
  PartSeconds table;
  table.version = 1;
  for (const auto& [lab, seconds, tests] : parts) table.labs[lab]["sum"] = {seconds, tests};
  return table;
}

TEST(CheckerGroups, APartHeavierThanAnEqualShareGetsAGroupOfItsOwn) {
  // 20 + 6 x 4 = 44 s in 3 groups: a share of 14.7 s. By tests (all 70) the slow part would
  // share a group with two others.
  const PartSeconds table = table_of({{"a", 4, 70},
                                      {"b", 4, 70},
                                      {"c", 4, 70},
                                      {"slow", 20, 70},
                                      {"d", 4, 70},
                                      {"e", 4, 70},
                                      {"f", 4, 70}});
  const Groups groups = checker_groups(table, jobs_of(table), 3);
  EXPECT_EQ(groups, (Groups{{6}, {0, 2, 4}, {1, 3, 5}}))
      << "the table's order: a b c d e f slow; slow alone, three of 4 s in each other group";
  EXPECT_EQ(group_seconds(table, jobs_of(table), groups), (std::vector<double>{20, 12, 12}));
}

TEST(CheckerGroups, APartTheTableLacksWeighsItsTestsAtTheMedianSecondsPerTest) {
  const PartSeconds table = table_of({{"a", 10, 100}, {"b", 3, 10}, {"c", 1, 20}});
  EXPECT_DOUBLE_EQ(table.seconds_per_test(), 0.1) << "the median of 0.1, 0.3 and 0.05";
  EXPECT_DOUBLE_EQ(table.weight("a", "sum", 5), 10) << "measured: the seconds, whatever the tests";
  EXPECT_DOUBLE_EQ(table.weight("new_lab", "sum", 50), 5);
  EXPECT_DOUBLE_EQ(table.weight("a", "maximum", 30), 3) << "an operation the table lacks";
  EXPECT_DOUBLE_EQ(table_of({{"a", 1, 10}, {"b", 3, 10}}).seconds_per_test(), 0.2);
  // An empty table (a course without the file): a part weighs its number of tests.
  EXPECT_DOUBLE_EQ(PartSeconds{}.seconds_per_test(), 1);
  EXPECT_DOUBLE_EQ(PartSeconds{}.weight("a", "sum", 71), 71);
}

TEST(CheckerGroups, LabsTheTableLacksAreSplitByTheirNumbersOfTests) {
  const std::vector<PartJob> unknown = {{"19_new", "sum", 71},
                                        {"20_new", "sum", 12},
                                        {"21_new", "sum", 84},
                                        {"21_new", "maximum", 40},
                                        {"22_new", "sum", 50}};
  const std::vector<double> tests = {71, 12, 84, 40, 50};
  for (const std::size_t count : {1, 2, 3, 4}) {
    EXPECT_EQ(checker_groups(course_table(), unknown, count), balanced_groups(tests, count))
        << count;
    EXPECT_EQ(checker_groups(PartSeconds{}, unknown, count), balanced_groups(tests, count));
  }
  // Beside a measured part: the new ones weigh their tests at the table's seconds per test.
  const PartSeconds table = table_of({{"a", 10, 100}, {"b", 3, 10}, {"c", 1, 20}});
  const std::vector<PartJob> mixed = {{"new", "sum", 60}, {"a", "sum", 100}, {"new2", "sum", 40}};
  EXPECT_EQ(checker_groups(table, mixed, 2), (Groups{{1}, {0, 2}})) << "10 s against 6 + 4 s";
}

/// The ConfigError that parse_part_seconds() throws for \p text ("" where none).
std::string table_error(const std::string& text) {
  try {
    parse_part_seconds(text, "autograder/part_seconds.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(PartSeconds, AMalformedTableIsAConfigErrorWithTheFileAndTheLine) {
  const std::string head = "version = 1\nmeasured_on = \"x\"\n[part_seconds.01_a]\n";
  EXPECT_EQ(
      parse_part_seconds(head + "sum = { seconds = 2.5, tests = 7 }\n").find("01_a", "sum")->tests,
      7u);
  EXPECT_TRUE(starts_with(table_error(head + "sum = { seconds = 2.5, tests = 7 \n"),
                          "autograder/part_seconds.toml:4: TOML syntax error: "))
      << table_error(head + "sum = { seconds = 2.5, tests = 7 \n");
  EXPECT_EQ(table_error(head + "sum = { seconds = \"2.5\", tests = 7 }\n"),
            "autograder/part_seconds.toml:4: [part_seconds.01_a] sum: 'seconds' must be seconds "
            "(a number >= 0) or tests (an integer > 0)");
  EXPECT_EQ(table_error(head + "\nsum = { seconds = 2.5 }\n"),
            "autograder/part_seconds.toml:5: [part_seconds.01_a] sum needs both seconds and tests");
  EXPECT_EQ(table_error(head + "sum = 2.5\n"),
            "autograder/part_seconds.toml:4: [part_seconds.01_a] sum must be { seconds = S, "
            "tests = N }");
  EXPECT_EQ(table_error(head + "sum = { seconds = 1, tests = 0 }\n"),
            "autograder/part_seconds.toml:4: [part_seconds.01_a] sum: 'tests' must be seconds "
            "(a number >= 0) or tests (an integer > 0)");
  EXPECT_EQ(table_error("version = 2\n"),
            "autograder/part_seconds.toml:1: version 2 (this grader reads 1)");
  EXPECT_EQ(table_error("version = 1\nseconds = 3\n"),
            "autograder/part_seconds.toml:2: 'seconds': expected version (an integer), "
            "measured_on (a string) or [part_seconds.<lab>] tables");
  EXPECT_EQ(table_error("measured_on = \"x\"\n"), "autograder/part_seconds.toml: no version");
}

TEST(PartSeconds, ACoursesTableIsReadFromItsAutograderFolder) {
  const fs::path dir = make_temp_dir("reduce-grade-part-seconds-");
  EXPECT_TRUE(load_part_seconds(dir / "part_seconds.toml").labs.empty()) << "none: empty";
  write_file(dir / "part_seconds.toml", "version = 1\n[part_seconds.x]\nsum = 3\n");
  try {
    load_part_seconds(dir / "part_seconds.toml");
    ADD_FAILURE() << "a malformed table was read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "part_seconds.toml").string() +
                                         ":3: [part_seconds.x] sum must be { seconds = S, "
                                         "tests = N }");
  }
  remove_all_quietly(dir);
}

}  // namespace
}  // namespace reduce::grade
