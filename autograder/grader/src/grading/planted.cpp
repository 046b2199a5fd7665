#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/toml_text.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/planted.hpp>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <fnmatch.h>
#include <algorithm>
#include <cmath>
#include <system_error>

namespace reduce::grade {

PlantedExpectation parse_expectation(const std::string& text, const std::string& name) {
  const toml::table t = parse_toml(text, name + "/expected.toml");
  PlantedExpectation e;
  e.name = name;
  for (auto&& [key, value] : t) {
    const std::string k(key.str());
    if (k != "lab" && k != "points" && k != "max_points" && k != "min_points" && k != "message" &&
        k != "messages_any" && k != "needs_gpu" && k != "description" && k != "failing_test" &&
        k != "may_be_withheld" && k != "graded_beside" && k != "visible_none" &&
        k != "report_inert" && k != "alone")
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
  if (const toml::array* a = t["visible_none"].as_array())
    for (const toml::node& n : *a)
      if (auto v = n.value<std::string>()) e.visible_none.push_back(*v);
  e.report_inert = t["report_inert"].value_or(false);
  e.alone = t["alone"].value_or(false);
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

namespace {

/// \p lab alone in a report, as the writers take it.
GradeReport report_of(const LabReport& lab) {
  GradeReport r;
  r.labs.push_back(lab);
  r.labs_requested.push_back(lab.facts.lab);
  r.total();
  return r;
}

/// The length of the UTF-8 sequence that starts \p text at \p i, or 0 where it is not one.
std::size_t utf8_length(const std::string& text, std::size_t i) {
  const auto u = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = u(i);
  const std::size_t length = c < 0x80         ? 1
                             : (c >> 5) == 6  ? 2
                             : (c >> 4) == 14 ? 3
                             : (c >> 3) == 30 ? 4
                                              : 0;
  if (length == 0 || (length == 2 && c < 0xC2) || i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k)
    if ((u(i + k) & 0xC0) != 0x80) return 0;
  return length;
}

/// Whether \p text holds a bidirectional override or isolate (U+202A-U+202E, U+2066-U+2069) at
/// \p i: text that shows in another order than it is read.
bool bidi_control(const std::string& text, std::size_t i) {
  if (i + 3 > text.size() || text[i] != '\xE2') return false;
  const auto b = static_cast<unsigned char>(text[i + 1]);
  const auto c = static_cast<unsigned char>(text[i + 2]);
  return (b == 0x80 && c >= 0xAA && c <= 0xAE) || (b == 0x81 && c >= 0xA6 && c <= 0xA9);
}

}  // namespace

std::string lab_visible_text(const LabReport& lab) {
  const GradeReport r = report_of(lab);
  std::string text = summary_text(r, true) + "\n" + summary_text(r, false) + "\n";
  const nlohmann::ordered_json results = gradescope_json(r);
  text += results.value("output", std::string()) + "\n";
  for (const auto& t : results.value("tests", nlohmann::ordered_json::array()))
    if (t.value("visibility", std::string()) == "visible")
      text += t.value("name", std::string()) + "\n" + t.value("output", std::string()) + "\n";
  return text;
}

std::string inert_problem(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_length(text, i);
    std::string kind;
    if (length == 0)
      kind = "a byte that is not UTF-8";
    else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)
      kind = "a control character";
    else if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0)
      kind = "a C1 control character";
    else if (bidi_control(text, i))
      kind = "a bidirectional override";
    if (!kind.empty()) return fmt::format("{} (byte 0x{:02X}) at offset {}", kind, c, i);
    i += length;
  }
  return "";
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
  if (!e.visible_none.empty()) {
    const std::string visible = lab_visible_text(lab);
    for (const std::string& m : e.visible_none)
      if (contains(visible, m)) problems.push_back("the student-visible report says \"" + m + "\"");
  }
  if (e.report_inert) {
    const GradeReport r = report_of(lab);
    const std::pair<const char*, std::string> texts[] = {
        {"report.json", dump_json(report_json(r))},
        {"summary.txt", summary_text(r, true)},
        {"junit.xml", junit_xml(r)},
        {"results.json", dump_json(gradescope_json(r))}};
    for (const auto& [file, text] : texts)
      if (const std::string why = inert_problem(text); !why.empty())
        problems.push_back(fmt::format("{} is not inert: {}", file, why));
  }
  return problems;
}

namespace {

/// Writes the link \p link of case \p c again at \p to, naming what it names from the case's
/// folder: a relative target made absolute there, so that the copy reaches the same file.
void copy_link(const PlantedExpectation& c, const fs::path& link, const fs::path& to) {
  std::error_code ec;
  fs::path target = fs::read_symlink(link, ec);
  if (!ec && target.is_relative())
    target = (fs::absolute(link.parent_path(), ec) / target).lexically_normal();
  fs::remove_all(to, ec);
  if (!ec) fs::create_symlink(target, to, ec);
  if (ec)
    throw ConfigError("planted case " + c.name + ": cannot prepare the link " + to.string() + ": " +
                      ec.message());
}

}  // namespace

fs::path materialize_case(const PlantedExpectation& c, const fs::path& solutions_dir,
                          const fs::path& work_dir) {
  std::error_code ec;
  const fs::path own = c.dir / c.lab;
  const fs::path reference = solutions_dir / c.lab;
  if (!fs::is_directory(own, ec) || !fs::is_directory(reference, ec)) return c.dir;
  const fs::path root = work_dir / c.name;
  fs::remove_all(root, ec);
  fs::create_directories(root, ec);
  // Every lab folder of the case (a case may carry others), each over its reference; a lab
  // folder that is a link stays one (the case is that link).
  for (const auto& entry : fs::directory_iterator(c.dir, ec)) {
    if (entry.is_symlink(ec)) {
      copy_link(c, entry.path(), root / entry.path().filename());
      continue;
    }
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
    for (const auto& file : fs::recursive_directory_iterator(entry.path(), ec))
      if (file.is_symlink(ec))
        copy_link(c, file.path(), target / file.path().lexically_relative(entry.path()));
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
