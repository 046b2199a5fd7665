#include <reduce_grade/base/util.hpp>
#include <reduce_grade/reports/report.hpp>

#include <fmt/format.h>

#include <cmath>

namespace reduce::grade {
namespace {

using json = nlohmann::ordered_json;

const char* status_name(ItemStatus s) {
  switch (s) {
    case ItemStatus::kPassed:
      return "passed";
    case ItemStatus::kFailed:
      return "failed";
    case ItemStatus::kSkipped:
      return "skipped";
  }
  return "failed";
}

const char* result_name(TestResult r) {
  switch (r) {
    case TestResult::kPassed:
      return "passed";
    case TestResult::kFailed:
      return "failed";
    case TestResult::kSkipped:
      return "skipped";
  }
  return "failed";
}

json suite_json(const SuiteRun& s) {
  json tests = json::array();
  for (const TestOutcome& t : s.tests) {
    json entry = {{"name", t.name}, {"result", result_name(t.result)}};
    if (t.result != TestResult::kPassed && !t.message.empty()) entry["message"] = t.message;
    tests.push_back(entry);
  }
  return {{"ran", s.ran},
          {"passed", s.passed()},
          {"failed", s.failed()},
          {"skipped", s.skipped()},
          {"problem", s.problem},
          {"no_gpu", s.no_gpu},
          {"not_implemented", s.not_implemented},
          {"timed_out", s.timed_out},
          {"output_flood", s.output_flood},
          {"crashed", s.crashed},
          {"attempts", s.attempts},
          {"seconds", std::round(s.seconds * 10) / 10},
          {"logs", s.logs},
          {"tests", tests}};
}

json sanitizer_json(const SanitizerRun& r) {
  return {{"tool", r.tool},
          {"ran", r.ran},
          {"errors", r.summary.errors},
          {"hazards", r.summary.hazards},
          {"warnings", r.summary.warnings},
          {"problems", r.summary.problems()},
          {"tests_passed", r.tests_passed},
          {"clean", r.clean()},
          {"problem", r.problem},
          {"excerpt", r.excerpt},
          {"unconfined", r.unconfined},
          {"seconds", std::round(r.seconds * 10) / 10},
          {"log", r.log}};
}

/// The benchmark's facts of \p lab, with every timed row's fraction and, where the rubric
/// credits each length on its own, what each length earned.
json performance_json(const LabReport& lab) {
  const LabFacts& f = lab.facts;
  json perf = {{"ran", f.perf.ran},
               {"problem", f.perf.problem},
               {"step", f.perf_step.name()},
               {"skipped", f.perf_step.reason},
               {"n", f.perf.n},
               {"median_us", f.perf.median_us},
               {"request_us", f.perf.request_us},
               {"gbps", f.perf.gbps},
               {"ceiling_gbps", f.perf.ceiling_gbps},
               {"probe_gbps", f.perf.probe_gbps},
               {"stream_read_gbps", f.perf.stream_read_gbps},
               {"cub_gbps", f.perf.cub_gbps},
               {"fraction", f.perf.fraction},
               {"measure", f.perf.measure},
               {"measure_note", f.perf.measure_note},
               {"reference_gbps", f.perf.reference_gbps},
               {"noise", f.perf.noise},
               {"reference_noise", f.perf.reference_noise},
               {"throttled_samples", f.perf.throttled_samples},
               {"throttled_figure", f.perf.throttled_figure},
               {"wrong_results", f.perf.wrong_results},
               {"threshold", lab.threshold},
               {"floor", lab.floor},
               {"log", f.perf.log}};
  json rows = json::array(), lengths = json::array();
  for (const TimedRow& r : f.perf.rows)
    rows.push_back({{"op", r.op},
                    {"length", r.length},
                    {"n", r.n},
                    {"fraction", r.fraction},
                    {"gbps", r.gbps}});
  for (const LengthCredit& c : lab.score.lengths)
    lengths.push_back({{"length", c.length},
                       {"op", c.op},
                       {"fraction", c.fraction},
                       {"points", round_points(c.points)},
                       {"max_points", round_points(c.max_points)}});
  perf["rows"] = rows;
  if (!lengths.empty()) perf["lengths"] = lengths;
  return perf;
}

json lab_json(const LabReport& lab) {
  const LabFacts& f = lab.facts;
  json items = json::array();
  for (const ScoredItem& i : lab.score.items) {
    json item = {{"key", i.key},
                 {"name", i.name},
                 {"score", i.score},
                 {"max_score", i.max_score},
                 {"status", status_name(i.status)},
                 {"output", i.output}};
    if (!i.hidden_details.empty()) item["hidden_details"] = i.hidden_details;
    items.push_back(item);
  }
  json library_findings = json::array();
  for (const LibraryFinding& lf : f.library.forbidden)
    library_findings.push_back({{"kind", finding_kind_name(lf.kind)}, {"what", lf.what}});
  json tests = json::array(), hidden = json::array(), sanitizer = json::array();
  for (const SuiteRun& s : f.tests) tests.push_back(suite_json(s));
  for (const SuiteRun& s : f.hidden) hidden.push_back(suite_json(s));
  for (const SanitizerRun& r : f.sanitizer) sanitizer.push_back(sanitizer_json(r));
  return {
      {"lab", f.lab},
      {"status", lab_status_name(lab.score.status)},
      {"score", lab.score.score},
      {"max_score", lab.score.max_score},
      {"messages", lab.score.messages},
      {"flagged_for_review", lab.score.review.empty() ? json(nullptr) : json(lab.score.review)},
      {"items", items},
      {"present", f.present},
      {"build",
       {{"ok", f.build.ok},
        {"stage", stage_name(f.build.stage)},
        {"timed_out", f.build.timed_out},
        {"errors", f.build.errors},
        {"log", f.build.log}}},
      {"library",
       {{"inspected", f.library.inspected},
        {"stub", f.library.stub},
        {"problem", f.library.problem},
        {"forbidden", library_findings}}},
      {"gpu", f.gpu},
      {"tests", tests},
      {"tests_step", f.tests_step.name()},
      {"tests_skipped", f.tests_step.reason},
      {"hidden", hidden},
      {"hidden_step", f.hidden_step.name()},
      {"hidden_skipped", f.hidden_step.reason},
      {"sanitizer", sanitizer},
      {"sanitizer_step", f.sanitizer_step.name()},
      {"sanitizer_skipped", f.sanitizer_step.reason},
      {"performance", performance_json(lab)},
  };
}

namespace {

/// The letter after a fraction in the terminal table that says what it is of: "R" the course's
/// reference, "C" cub::DeviceReduce::Sum (both timed in the same run), none the ceiling.
std::string measure_mark(const std::string& measure) {
  return measure == "reference" ? "R" : measure == "cub" ? "C" : "";
}

}  // namespace

std::string table_row(const LabReport& lab) {
  const LabFacts& f = lab.facts;
  std::string build = "ok";
  if (!f.present)
    build = "missing";
  else if (!f.build.ok)
    build = "FAILED";
  else if (!f.library.forbidden.empty())
    build = "LIBRARY";
  else if (lab.score.status == LabStatus::kStub ||
           (!lab.score.items.empty() && lab.score.items[0].key == "build" &&
            lab.score.items[0].score == 0 && lab.score.items[0].max_score > 0))
    build = "stub";
  auto suite_cell = [](const std::vector<SuiteRun>& suites,
                       const StepOutcome& step) -> std::string {
    if (suites.empty()) return step.state == StepOutcome::State::kSkipped ? "skip" : "-";
    int passed = 0, counted = 0;
    bool timed_out = false, flood = false, crashed = false;
    for (const SuiteRun& s : suites) {
      passed += s.passed();
      counted += s.counted();
      timed_out = timed_out || s.timed_out;
      flood = flood || s.output_flood;
      crashed = crashed || s.crashed;
    }
    std::string cell = fmt::format("{}/{}", passed, counted);
    if (timed_out)
      cell += " T";
    else if (flood)
      cell += " F";
    else if (crashed)
      cell += " C";
    return cell;
  };
  std::string san = "-";  // also for an untouched stub: its runs say nothing about its code
  if (!f.sanitizer.empty() && lab.score.status != LabStatus::kStub) {
    int clean = 0;
    for (const SanitizerRun& r : f.sanitizer) clean += r.clean() ? 1 : 0;
    san = clean == static_cast<int>(f.sanitizer.size())
              ? "clean"
              : fmt::format("{}/{} clean", clean, f.sanitizer.size());
  } else if (!f.sanitizer_step.ran()) {
    san = "skip";
  }
  const bool perf = f.perf.ran && f.perf.gbps > 0;
  return fmt::format(
      "{:<26} {:<8} {:>9} {:>9} {:>10} {:>9} {:>8} {:>8} {:>12}", f.lab, build,
      suite_cell(f.tests, f.tests_step), suite_cell(f.hidden, f.hidden_step), san,
      perf ? fixed(f.perf.gbps, 1) : "-",
      perf ? fraction_text(f.perf.fraction) + measure_mark(f.perf.measure) : "-",
      fraction_text(lab.threshold),
      fmt::format("{}/{}", points_text(lab.score.score), points_text(lab.score.max_score)));
}

}  // namespace

void GradeReport::total() {
  score = 0;
  max_score = 0;
  for (const LabReport& lab : labs) {
    score += lab.score.score;
    max_score += lab.score.max_score;
  }
  score = round_points(score);
  max_score = round_points(max_score);
}

std::string dump_json(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

json report_json(const GradeReport& r) {
  json labs = json::array();
  for (const LabReport& lab : r.labs) labs.push_back(lab_json(lab));
  return {{"grader", {{"name", "reduce-grade"}, {"version", r.grader_version}}},
          {"submission", r.submission},
          {"course_root", r.course_root},
          {"rubric", r.rubric},
          {"seed", r.seed},
          {"started_at", r.started_at},
          {"seconds", std::round(r.seconds * 10) / 10},
          {"build_seconds", std::round(r.build_seconds * 10) / 10},
          {"graded_seconds", std::round(r.graded_seconds * 10) / 10},
          {"gpu_available", r.gpu_available},
          {"gpu", r.gpu},
          {"cuda_device", r.cuda_device},
          {"cpus", r.cpus},
          {"timing_lock", r.timing_lock},
          {"parallel_checks", r.parallel_checks},
          {"sanitizer_checkers", r.sanitizer_checkers},
          {"isolation", r.isolation},
          {"build_isolation", r.build_isolation},
          {"ceiling_gbps", r.ceiling_gbps},
          {"processes",
           {{"contexts", r.processes.contexts()},
            {"lab_process_starts", r.processes.lab_process_starts()},
            {"checkers", r.processes.checkers},
            {"lab_processes", r.processes.lab_processes},
            {"benchmarks", r.processes.benchmarks},
            {"benchmark_lab_processes", r.processes.benchmark_lab_processes}}},
          {"labs_requested", r.labs_requested},
          {"score", r.score},
          {"max_score", r.max_score},
          {"percent", r.max_score > 0 ? round_points(100.0 * r.score / r.max_score) : 0.0},
          {"pass_mark", r.pass_mark},
          {"exit_code", r.exit_code},
          {"reproduce", r.reproduce},
          {"messages", r.messages},
          {"labs", labs}};
}

std::string xml_escape(const std::string& text) {
  const std::string clean = sanitize_text(text);
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string junit_xml(const GradeReport& r) {
  int tests = 0, failures = 0, skipped = 0;
  std::string suites;
  for (const LabReport& lab : r.labs) {
    int lab_failures = 0, lab_skipped = 0;
    std::string cases;
    for (const ScoredItem& item : lab.score.items) {
      ++tests;
      // Stable names (CI tools track test cases by name); the points go into the text.
      cases += fmt::format("    <testcase classname=\"reduce-grade.{}\" name=\"{}\" time=\"0\">\n",
                           xml_escape(lab.facts.lab), xml_escape(item.name));
      std::string body = fmt::format("points: {}/{}\n{}", points_text(item.score),
                                     points_text(item.max_score), item.output);
      if (!item.hidden_details.empty()) body += "\n" + item.hidden_details;
      if (item.status == ItemStatus::kFailed) {
        ++lab_failures;
        const auto nl = item.output.find('\n');
        cases += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                             xml_escape(item.output.substr(0, std::min<std::size_t>(nl, 300))),
                             xml_escape(item.key), xml_escape(body));
      } else if (item.status == ItemStatus::kSkipped) {
        ++lab_skipped;
        cases += fmt::format("      <skipped message=\"{}\"/>\n",
                             xml_escape(item.output.substr(0, 300)));
      } else {
        cases += fmt::format("      <system-out>{}</system-out>\n", xml_escape(body));
      }
      cases += "    </testcase>\n";
    }
    failures += lab_failures;
    skipped += lab_skipped;
    suites += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
        "time=\"0\">\n    <properties>\n"
        "      <property name=\"status\" value=\"{}\"/>\n"
        "      <property name=\"score\" value=\"{}\"/>\n"
        "      <property name=\"max_score\" value=\"{}\"/>\n"
        "      <property name=\"seed\" value=\"{}\"/>\n    </properties>\n{}  </testsuite>\n",
        xml_escape(lab.facts.lab), lab.score.items.size(), lab_failures, lab_skipped,
        xml_escape(lab_status_name(lab.score.status)), points_text(lab.score.score),
        points_text(lab.score.max_score), r.seed, cases);
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"reduce-grade\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
      "time=\"{}\">\n{}</testsuites>\n",
      tests, failures, skipped, fixed(r.seconds, 1), suites);
}

json gradescope_json(const GradeReport& r) {
  json tests = json::array();
  for (const LabReport& lab : r.labs) {
    int k = 0;
    for (const ScoredItem& item : lab.score.items) {
      ++k;
      // Gradescope knows passed (green) and failed (red) only. A part that could not run here (no
      // GPU) is neither: it gets no status and no points to lose, so that a correct lab graded
      // without a GPU shows no red; its output says why, and the grade (r.score) is unchanged.
      const bool not_run = item.status == ItemStatus::kSkipped;
      json t = {{"name", fmt::format("{}: {}{}", lab.facts.lab, item.name,
                                     not_run && item.max_score > 0 ? " (not run here)" : "")},
                {"number", fmt::format("{}.{}", std::atoi(lab.facts.lab.c_str()), k)},
                {"score", item.score},
                {"max_score", not_run ? 0.0 : item.max_score},
                {"output", sanitize_text(item.output)},
                {"tags", json::array({lab.facts.lab, item.key})},
                {"visibility", "visible"}};
      if (!not_run) t["status"] = item.status == ItemStatus::kPassed ? "passed" : "failed";
      tests.push_back(t);
      if (!item.hidden_details.empty()) {
        tests.push_back({{"name", fmt::format("{}: {} (details)", lab.facts.lab, item.name)},
                         {"number", fmt::format("{}.{}.1", std::atoi(lab.facts.lab.c_str()), k)},
                         {"score", 0},
                         {"max_score", 0},
                         {"status", item.status == ItemStatus::kPassed ? "passed" : "failed"},
                         {"output", sanitize_text(item.hidden_details)},
                         {"tags", json::array({lab.facts.lab, item.key})},
                         {"visibility", "after_published"}});
      }
    }
  }
  return {{"score", r.score},
          {"max_score", r.max_score},
          {"execution_time", static_cast<long>(std::lround(r.seconds))},
          {"output", sanitize_text(summary_text(r, true))},
          {"visibility", "visible"},
          {"stdout_visibility", "hidden"},
          {"tests", tests},
          {"extra_data",
           {{"seed", r.seed},
            {"gpu", r.gpu},
            {"isolation", r.isolation},
            {"build_isolation", r.build_isolation},
            {"grader_version", r.grader_version}}}};
}

/// The command that reruns \p lab's tests, or only \p test of operation \p op's suite.
std::string rerun_command(const LabReport& lab, const std::string& op = "",
                          const std::string& test = "") {
  std::string command = "tools/lab-test " + lab.facts.lab.substr(0, 2);
  if (lab.facts.tests.size() > 1 && !op.empty()) command += " --op " + op;
  if (!test.empty()) command += " -- --gtest_filter='" + test + "'";
  return command;
}

/// \p lab's first failing public test and the suite it is in; nullptr when none failed.
std::pair<const SuiteRun*, const TestOutcome*> first_failure(const LabReport& lab) {
  for (const SuiteRun& suite : lab.facts.tests) {
    const auto failed =
        std::find_if(suite.tests.begin(), suite.tests.end(),
                     [](const TestOutcome& t) { return t.result == TestResult::kFailed; });
    if (failed != suite.tests.end()) return {&suite, &*failed};
  }
  return {nullptr, nullptr};
}

/// What a student reads first about a lab that lost points: "not started" for the untouched
/// stub; else its first note, and its first failing public test with the command that reruns it.
/// The compiler's first error line of a lab that did not build, its file named from the
/// submission's folder \p submission as the student knows it ("labs/04_sequential/sum.cu(32):
/// error: ..."); empty when the lab built or no line says "error".
std::string first_compile_error(const LabReport& lab, const std::string& submission) {
  const BuildFacts& b = lab.facts.build;
  if (!b.attempted || b.ok) return {};
  for (const std::string& line : split_lines(b.errors)) {
    if (!contains(line, "error")) continue;
    // The build names the lab's files from the staged copy's root: the lab folder first.
    if (starts_with(line, lab.facts.lab + "/") && !submission.empty())
      return clip((fs::path(submission) / line).string(), 1, 300);
    return clip(line, 1, 300);
  }
  return {};
}

std::vector<std::string> first_notes(const LabReport& lab, const std::string& submission) {
  if (lab.score.messages.empty()) return {};
  // The stub: its tests said "not implemented", or (no GPU) its library still throws it.
  if (lab.score.status == LabStatus::kStub || lab.facts.library.stub)
    return {"not started (complete the TODOs in its .cu files)"};
  std::vector<std::string> notes = {clip(lab.score.messages.front(), 1, 240)};
  if (const std::string error = first_compile_error(lab, submission); !error.empty()) {
    notes.push_back("first compiler error: " + error);
    if (!lab.facts.build.log.empty())
      notes.push_back("the whole build log: " + lab.facts.build.log);
  }
  if (const auto [suite, failed] = first_failure(lab); failed != nullptr) {
    notes.push_back(
        fmt::format("first failing test {}: {}", failed->name, clip(failed->message, 1, 200)));
    notes.push_back("rerun it: " + rerun_command(lab, suite->op, failed->name));
  }
  return notes;
}

/// The student's next step: the lab with the lowest share of its points (the earliest of equals),
/// its lesson and the command to run; empty when every lab has all its points.
std::string next_step(const GradeReport& r) {
  const LabReport* next = nullptr;
  double lowest = 1.0 - 1e-9;
  for (const LabReport& lab : r.labs) {
    if (lab.score.max_score <= 0) continue;
    const double share = lab.score.score / lab.score.max_score;
    if (share < lowest) {
      lowest = share;
      next = &lab;
    }
  }
  if (next == nullptr) return "";
  if (const std::string error = first_compile_error(*next, r.submission); !error.empty())
    return fmt::format("next: {} ({}/{}): fix the compile error {}, then run {}\n", next->facts.lab,
                       points_text(next->score.score), points_text(next->score.max_score), error,
                       rerun_command(*next));
  const auto [suite, failed] = first_failure(*next);
  return fmt::format(
      "next: {} ({}/{}): read labs/{}/README.md (its \"What is graded\" section), "
      "then run {}\n",
      next->facts.lab, points_text(next->score.score), points_text(next->score.max_score),
      next->facts.lab,
      failed != nullptr ? rerun_command(*next, suite->op, failed->name) : rerun_command(*next));
}

std::string summary_text(const GradeReport& r, bool verbose) {
  std::string out =
      fmt::format("reduce-grade {}: {}\n", r.grader_version, inert_name(r.submission, 400));
  out += fmt::format("seed {} | GPU {} | ceiling {} | {}\n", r.seed,
                     r.gpu_available ? r.gpu : "none (build only)",
                     r.ceiling_gbps > 0 ? fixed(r.ceiling_gbps, 1) + " GB/s" : "-", r.started_at);
  for (const std::string& m : r.messages) out += "! " + m + "\n";
  out += fmt::format("\n{:<26} {:<8} {:>9} {:>9} {:>10} {:>9} {:>8} {:>8} {:>12}\n", "lab", "build",
                     "tests", "hidden", "sanitizer", "GB/s", "fraction", "thresh.", "points");
  for (const LabReport& lab : r.labs) out += table_row(lab) + "\n";
  out += fmt::format("{:<26} {:>81}\n", "total",
                     fmt::format("{}/{} ({}%)", points_text(r.score), points_text(r.max_score),
                                 r.max_score > 0 ? fixed(100.0 * r.score / r.max_score, 1) : "0"));
  out +=
      "fraction: of the ceiling probe; R: of the course's reference of the lab, C: of "
      "cub::DeviceReduce::Sum, each timed in the same run as the lab\n";
  bool header = false;
  for (const LabReport& lab : r.labs) {
    const std::vector<std::string> notes =
        verbose ? lab.score.messages : first_notes(lab, r.submission);
    for (const std::string& m : notes) {
      if (!header) out += "\nnotes (T: timed out, F: output flood, C: crashed):\n";
      header = true;
      out += fmt::format("  {}: {}\n", lab.facts.lab, verbose ? clip(m, 1, 240) : m);
    }
  }
  if (header && !verbose) out += "(every note: report.json, summary.txt, or --verbose)\n";
  if (const std::string next = next_step(r); !next.empty()) out += "\n" + next;
  if (!r.reproduce.empty()) out += "\nreproduce: " + r.reproduce + "\n";
  // The names and the lab's text in it reach a terminal: nothing of theirs may act there.
  return inert_text(out);
}

void write_reports(const GradeReport& r, const fs::path& out_dir) {
  write_file(out_dir / "report.json", dump_json(report_json(r)));
  write_file(out_dir / "junit.xml", junit_xml(r));
  write_file(out_dir / "results.json", dump_json(gradescope_json(r)));
  write_file(out_dir / "summary.txt", summary_text(r, true));
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  return "\"" + replace_all(text, "\"", "\"\"") + "\"";
}

std::string csv_text(const std::string& text) {
  // OWASP, "CSV Injection": a cell that begins with one of these is a formula to a spreadsheet.
  static constexpr std::string_view kFormula("=+-@\t\r\n\0", 8);
  if (text.empty() || kFormula.find(text.front()) == std::string_view::npos) return csv_field(text);
  return "\"'" + replace_all(text, "\"", "\"\"") + "\"";
}

namespace {

/// Why \p lab lost points where it has no message (a lab graded without a GPU: its build points
/// only): its first item below its maximum, with the first line of that item's output.
std::string first_item_lost(const nlohmann::ordered_json& lab) {
  for (const auto& item : lab.value("items", nlohmann::ordered_json::array())) {
    if (!item.is_object() || item.value("score", 0.0) + 1e-9 >= item.value("max_score", 0.0))
      continue;
    const std::string output = item.value("output", std::string());
    return item.value("name", std::string("a part")) + ": " +
           (output.empty() ? item.value("status", std::string("lost"))
                           : output.substr(0, output.find('\n')));
  }
  return "points lost";
}

}  // namespace

std::string gradebook_reason(const nlohmann::ordered_json& report) {
  std::vector<std::string> parts;
  for (const auto& lab : report.value("labs", nlohmann::ordered_json::array())) {
    if (lab.value("score", 0.0) + 1e-9 >= lab.value("max_score", 0.0)) continue;
    const auto messages = lab.value("messages", nlohmann::ordered_json::array());
    const std::string first = !messages.empty() && messages.front().is_string()
                                  ? messages.front().get<std::string>()
                                  : first_item_lost(lab);
    parts.push_back(lab.value("lab", std::string()) + ": " + clip(first, 1, 200));
  }
  return clip(join(parts, "; "), 1, 400);
}

std::string gradebook_csv(const std::vector<std::string>& labs,
                          const std::vector<GradebookRow>& rows) {
  std::string out = "student,total,max";
  for (const std::string& lab : labs) out += "," + csv_field(lab);
  out += ",seed,status,reason\n";
  for (const GradebookRow& row : rows) {
    out += csv_text(inert_text(row.student, false)) + "," + points_text(row.total) + "," +
           points_text(row.max);
    for (std::size_t i = 0; i < labs.size(); ++i)
      out += "," + (i < row.lab_points.size() ? points_text(row.lab_points[i]) : std::string("0"));
    out += "," + std::to_string(row.seed) + "," + csv_text(sanitize_text(row.status)) + "," +
           csv_text(sanitize_text(row.reason)) + "\n";
  }
  return out;
}

}  // namespace reduce::grade
