#include <reduce_grade/course.hpp>
#include <reduce_grade/planted.hpp>
#include <reduce_grade/util.hpp>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <fnmatch.h>
#include <algorithm>
#include <cmath>
#include <system_error>

namespace reduce::grade {

PlantedExpectation parse_expectation(const std::string& text, const std::string& name) {
  toml::table t;
  try {
    t = toml::parse(text, name + "/expected.toml");
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}/expected.toml: {}", name, e.description()));
  }
  PlantedExpectation e;
  e.name = name;
  for (auto&& [key, value] : t) {
    const std::string k(key.str());
    if (k != "lab" && k != "points" && k != "max_points" && k != "min_points" && k != "message" &&
        k != "messages_any" && k != "needs_gpu" && k != "description" && k != "failing_test" &&
        k != "may_be_withheld" && k != "graded_beside")
      e.warnings.push_back(fmt::format("{}/expected.toml: unknown key '{}' ignored", name, k));
  }
  e.lab = t["lab"].value_or(std::string());
  if (e.lab.empty()) throw ConfigError(name + "/expected.toml: 'lab' is required");
  if (const toml::array* a = t["graded_beside"].as_array())
    for (const toml::node& n : *a)
      if (auto v = n.value<std::string>()) e.graded_beside.push_back(*v);
  if (auto v = t["points"].value<double>()) e.points = *v;
  if (auto v = t["max_points"].value<double>()) e.max_points = *v;
  if (auto v = t["min_points"].value<double>()) e.min_points = *v;
  if (auto v = t["message"].value<std::string>()) e.messages.push_back(*v);
  if (const toml::array* a = t["messages_any"].as_array())
    for (const toml::node& n : *a)
      if (auto v = n.value<std::string>()) e.messages.push_back(*v);
  e.failing_test = t["failing_test"].value_or(std::string());
  e.needs_gpu = t["needs_gpu"].value_or(true);
  e.may_be_withheld = t["may_be_withheld"].value_or(false);
  e.description = t["description"].value_or(std::string());
  if (!e.points && !e.max_points && !e.min_points)
    throw ConfigError(name + "/expected.toml: give 'points', 'max_points' or 'min_points'");
  return e;
}

std::vector<PlantedExpectation> load_planted(const fs::path& planted_dir) {
  std::vector<PlantedExpectation> cases;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(planted_dir, ec)) {
    const fs::path file = entry.path() / "expected.toml";
    if (!entry.is_directory(ec) || !fs::is_regular_file(file, ec)) continue;
    PlantedExpectation e = parse_expectation(read_file(file), entry.path().filename().string());
    e.dir = entry.path();
    cases.push_back(std::move(e));
  }
  std::sort(
      cases.begin(), cases.end(),
      [](const PlantedExpectation& a, const PlantedExpectation& b) { return a.name < b.name; });
  return cases;
}

std::string lab_report_text(const LabReport& lab) {
  std::string text = std::string(lab_status_name(lab.score.status)) + "\n";
  for (const std::string& m : lab.score.messages) text += m + "\n";
  for (const ScoredItem& i : lab.score.items) text += i.output + "\n" + i.hidden_details + "\n";
  return text;
}

std::vector<std::string> check_expectation(const PlantedExpectation& e, const LabReport& lab) {
  std::vector<std::string> problems;
  const double got = lab.score.score;
  if (e.points && std::fabs(got - *e.points) > 0.005)
    problems.push_back(fmt::format("got {} points, expected exactly {}", points_text(got),
                                   points_text(*e.points)));
  if (e.max_points && got > *e.max_points + 0.005)
    problems.push_back(fmt::format("got {} points, expected at most {}", points_text(got),
                                   points_text(*e.max_points)));
  if (e.min_points && got < *e.min_points - 0.005)
    problems.push_back(fmt::format("got {} points, expected at least {}", points_text(got),
                                   points_text(*e.min_points)));
  if (!e.failing_test.empty()) {
    // Like --gtest_filter: patterns separated by ':', any one of them may match.
    const std::vector<std::string> patterns = split(e.failing_test, ":");
    bool failed = false;
    for (const auto* suites : {&lab.facts.tests, &lab.facts.hidden})
      for (const SuiteRun& run : *suites)
        for (const TestOutcome& t : run.tests)
          for (const std::string& pattern : patterns)
            failed = failed || (t.result == TestResult::kFailed &&
                                ::fnmatch(pattern.c_str(), t.name.c_str(), 0) == 0);
    if (!failed) problems.push_back("no failed test matches " + e.failing_test);
  }
  if (!e.messages.empty()) {
    const std::string text = lab_report_text(lab);
    bool found = false;
    for (const std::string& m : e.messages) found = found || contains(text, m);
    if (!found) {
      std::string list;
      for (const std::string& m : e.messages) list += (list.empty() ? "\"" : " or \"") + m + "\"";
      problems.push_back("the report does not say " + list);
    }
  }
  return problems;
}

fs::path materialize_case(const PlantedExpectation& c, const fs::path& solutions_dir,
                          const fs::path& work_dir) {
  std::error_code ec;
  const fs::path own = c.dir / c.lab;
  const fs::path reference = solutions_dir / c.lab;
  if (!fs::is_directory(own, ec) || !fs::is_directory(reference, ec)) return c.dir;
  const fs::path root = work_dir / c.name;
  fs::remove_all(root, ec);
  // Every lab folder of the case (a case may carry others), each over its reference.
  for (const auto& entry : fs::directory_iterator(c.dir, ec)) {
    if (!entry.is_directory(ec)) continue;
    const fs::path target = root / entry.path().filename();
    fs::create_directories(target, ec);
    const fs::path base = solutions_dir / entry.path().filename();
    if (fs::is_directory(base, ec))
      fs::copy(base, target, fs::copy_options::recursive | fs::copy_options::overwrite_existing,
               ec);
    // The case's own files replace the reference's, links kept as links (a case may plant one).
    for (const auto& own_file : fs::directory_iterator(entry.path(), ec))
      fs::remove_all(target / own_file.path().filename(), ec);
    fs::copy(entry.path(), target,
             fs::copy_options::recursive | fs::copy_options::overwrite_existing |
                 fs::copy_options::copy_symlinks,
             ec);
    if (ec)
      throw ConfigError("planted case " + c.name + ": cannot prepare " + target.string() + ": " +
                        ec.message());
    // A case that reaches for a file of the grading host by its absolute path names the course
    // as @REDUCE_COURSE_ROOT@.
    for (const auto& file : fs::recursive_directory_iterator(target, ec)) {
      if (!file.is_regular_file(ec) || file.is_symlink(ec)) continue;
      const std::string text = read_file(file.path());
      if (contains(text, "@REDUCE_COURSE_ROOT@"))
        write_file(file.path(),
                   replace_all(text, "@REDUCE_COURSE_ROOT@", solutions_dir.parent_path().string()));
    }
  }
  // A lab graded beside the case without a folder of its own is its reference, as it is.
  for (const std::string& lab : c.graded_beside) {
    if (fs::exists(root / lab, ec) || !fs::is_directory(solutions_dir / lab, ec)) continue;
    fs::copy(solutions_dir / lab, root / lab, fs::copy_options::recursive, ec);
    if (ec)
      throw ConfigError("planted case " + c.name + ": cannot prepare " + (root / lab).string() +
                        ": " + ec.message());
  }
  return root;
}

}  // namespace reduce::grade
