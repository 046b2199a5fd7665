#include <reduce_grade/gtest_suite.hpp>
#include <reduce_grade/process.hpp>
#include <reduce_grade/sanitizer.hpp>
#include <reduce_grade/util.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <regex>
#include <system_error>

namespace reduce::grade {

SanitizerSummary parse_sanitizer_summary(const std::string& tool, const std::string& output) {
  SanitizerSummary s;
  static const std::regex error_summary(R"(ERROR SUMMARY:\s*([0-9]+)\s+error)");
  static const std::regex race_summary(
      R"(RACECHECK SUMMARY:\s*([0-9]+)\s+hazards? displayed\s*\(\s*([0-9]+)\s+errors?,\s*([0-9]+)\s+warnings?\s*\))");
  std::smatch m;
  if (std::regex_search(output, m, error_summary)) {
    s.found = true;
    s.errors = std::stoi(m[1]);
  }
  if (tool == "racecheck") {
    if (std::regex_search(output, m, race_summary)) {
      s.found = true;
      s.hazards = std::stoi(m[1]);
      s.errors = std::stoi(m[2]);
      s.warnings = std::stoi(m[3]);
    } else if (s.found) {
      s.hazards = s.errors;  // no hazard line: racecheck found nothing to display
      s.warnings = 0;
    }
  }
  return s;
}

std::string SanitizerRun::describe() const {
  const std::string name = op.empty() ? tool : tool + " (" + op + ")";
  if (!ran) return fmt::format("{}: not run ({})", name, problem.empty() ? "unknown" : problem);
  std::string text;
  if (tool == "racecheck") {
    text = fmt::format("{}: {} hazard{} ({} errors, {} warnings)", name, summary.hazards,
                       summary.hazards == 1 ? "" : "s", summary.errors, summary.warnings);
  } else {
    text = fmt::format("{}: {} error{}", name, summary.errors, summary.errors == 1 ? "" : "s");
  }
  if (!tests_passed) text += "; the tests run under it failed (or none matched the filter)";
  if (!problem.empty()) text += "; " + problem;
  return text;
}

fs::path find_compute_sanitizer() {
  if (auto p = find_program("compute-sanitizer")) return *p;
  std::error_code ec;
  std::vector<fs::path> candidates;
  if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(fs::path(home) / "bin");
  if (const char* home = std::getenv("CUDA_PATH")) candidates.push_back(fs::path(home) / "bin");
  candidates.push_back("/usr/local/cuda/bin");
  candidates.push_back("/usr/local/cuda/compute-sanitizer");
  for (const fs::path& dir : candidates) {
    const fs::path p = dir / "compute-sanitizer";
    if (fs::is_regular_file(p, ec)) return p;
  }
  return {};
}

SanitizerRun run_sanitizer(const fs::path& sanitizer, const std::string& tool,
                           const fs::path& binary, const std::string& filter,
                           const std::vector<std::pair<std::string, std::string>>& env,
                           double timeout_s, std::size_t output_cap, const fs::path& log_file) {
  SanitizerRun run;
  run.tool = tool;
  run.log = log_file.string();
  if (sanitizer.empty()) {
    run.problem = "compute-sanitizer not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)";
    return run;
  }
  ProcessSpec spec;
  spec.argv = {sanitizer.string(),
               "--tool",
               tool,
               "--print-limit",
               "5",
               binary.string(),
               "--gtest_color=no",
               "--gtest_filter=" + filter};
  spec.env = env;
  spec.timeout_s = timeout_s;
  spec.output_cap = output_cap;
  spec.log_file = log_file;
  const ProcessResult r = run_process(spec);
  run.seconds = r.seconds;
  run.no_gpu = contains(r.output, "no CUDA device");
  run.summary = parse_sanitizer_summary(tool, r.output);
  const StreamParse tests = parse_gtest_stream(r.output);
  int failed = 0, passed = 0;
  for (const TestOutcome& t : tests.finished) {
    if (t.result == TestResult::kFailed) ++failed;
    if (t.result == TestResult::kPassed) ++passed;
  }
  run.tests_passed = tests.completed && failed == 0 && passed > 0 && !tests.in_progress;
  if (!r.exited()) {
    run.problem = r.describe();
  } else if (!run.summary.found) {
    run.problem = fmt::format("no summary in its output ({})", r.describe());
  } else if (!tests.completed) {
    run.problem = "the tests under it did not finish";
  }
  run.ran = run.summary.found && r.exited();
  // What the student needs to see: the first reported problems (lines of the ========= block).
  std::string excerpt;
  int kept = 0;
  for (const std::string& line : split_lines(r.output)) {
    if (!starts_with(line, "=========")) continue;
    if (contains(line, "SUMMARY") || contains(line, "COMPUTE-SANITIZER")) continue;
    if (trim(line.substr(9)).empty()) continue;
    excerpt += line + "\n";
    if (++kept == 25) break;
  }
  run.excerpt = trim(excerpt);
  return run;
}

}  // namespace reduce::grade
