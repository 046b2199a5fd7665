#include <reduce_grade/base/parse.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/gtest_suite.hpp>
#include <reduce_grade/observations/sanitizer.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_vocabulary/channels.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <system_error>

namespace reduce::grade {

namespace {

/// One count of a summary line (the digits a regex matched), or std::nullopt when it does not
/// fit an int.
std::optional<int> summary_count(const std::ssub_match& digits) {
  const auto value = parse_count(digits.str(), static_cast<std::uint64_t>(INT_MAX));
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

}  // namespace

SanitizerSummary parse_sanitizer_summary(const std::string& tool, const std::string& output) {
  SanitizerSummary s;
  static const std::regex error_summary(R"(ERROR SUMMARY:\s*([0-9]+)\s+error)");
  static const std::regex race_summary(
      R"(RACECHECK SUMMARY:\s*([0-9]+)\s+hazards? displayed\s*\(\s*([0-9]+)\s+errors?,\s*([0-9]+)\s+warnings?\s*\))");
  // Line by line, and only short lines: regex on unbounded input can overflow the stack.
  bool error_line = false, race_line = false;
  std::string unreadable_line;
  for (const std::string& line : split_lines(output)) {
    if (line.size() > kMaxRegexLine || !contains(line, "SUMMARY:")) continue;
    std::smatch m;
    if (!error_line && std::regex_search(line, m, error_summary)) {
      error_line = true;
      const auto errors = summary_count(m[1]);
      if (!errors) unreadable_line = line;
      if (!race_line) s.errors = errors.value_or(-1);
    }
    if (tool == "racecheck" && !race_line && std::regex_search(line, m, race_summary)) {
      race_line = true;
      const auto hazards = summary_count(m[1]), errors = summary_count(m[2]),
                 warnings = summary_count(m[3]);
      if (!hazards || !errors || !warnings) unreadable_line = line;
      s.hazards = hazards.value_or(-1);
      s.errors = errors.value_or(-1);
      s.warnings = warnings.value_or(-1);
    }
  }
  if (!unreadable_line.empty()) {
    // A count that does not fit an int is no count: the run has no summary (and no point).
    SanitizerSummary none;
    none.problem = "unreadable count in the sanitizer's summary: " + clip(unreadable_line, 1, 200);
    return none;
  }
  s.found = error_line || race_line;
  if (tool == "racecheck" && !race_line && s.found) {
    s.hazards = s.errors;  // no hazard line: racecheck found nothing to display
    s.warnings = 0;
  }
  return s;
}

std::string SanitizerRun::describe() const {
  const std::string name = op.empty() ? tool : tool + " (" + op + ")";
  if (!ran) {
    std::string why = problem.empty() ? "unknown" : problem;
    if (!summary.problem.empty()) why += "; " + summary.problem;
    return fmt::format("{}: not run ({})", name, why);
  }
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

fs::path sanitizer_log_dir(const fs::path& log_file, const std::string& tool) {
  return log_file.parent_path() / (log_file.stem().string() + "." + tool);
}

std::vector<SanitizerRun> run_sanitizer(const SanitizerSpec& spec) {
  std::vector<SanitizerRun> runs = run_sanitizer_once(spec);
  // Where the sandbox and the sanitizer do not go together, the sanitizer still runs
  // (unconfined, and the report says so): the course's binaries and sources are checked after
  // every submission all the same.
  const bool refused = std::any_of(runs.begin(), runs.end(), [&](const SanitizerRun& run) {
    return !run.summary.found &&
           (contains(run.excerpt + run.problem, "terminated before first instrumented API call") ||
            contains(read_file(spec.log_file), "cannot confine"));
  });
  if (!spec.launch.runner.prefix.empty() && refused) {
    SanitizerSpec open = spec;
    open.launch.runner.prefix.clear();
    const int contexts = runs.empty() ? 0 : runs[0].checker_contexts;
    const int lab_processes = runs.empty() ? 0 : runs[0].lab_process_starts;
    runs = run_sanitizer_once(open);
    if (!runs.empty()) {  // the refused run's processes count too
      runs[0].checker_contexts += contexts;
      runs[0].lab_process_starts += lab_processes;
    }
    for (SanitizerRun& run : runs)
      run.unconfined = "the lab's process ran without the sandbox under compute-sanitizer here";
  }
  return runs;
}

namespace {

/// The most of one sanitizer log that is read (compute-sanitizer's own logs, with
/// --print-limit 5, are a few KiB; the lab's process could write more into its log folder).
constexpr std::size_t kMaxLogBytes = std::size_t{64} << 20;
/// The most of all logs kept for the excerpt (first_problems() shows the first 25 lines).
constexpr std::size_t kMaxExcerptSource = std::size_t{1} << 20;

/// \p total + \p more, each taken as 0 when negative (no count), at most INT_MAX.
int add_counts(int total, int more) {
  const long long sum = static_cast<long long>(std::max(0, total)) + std::max(0, more);
  return static_cast<int>(std::min<long long>(sum, INT_MAX));
}

/// Adds up the summaries of the runner logs in \p logs (one per runner the checker started)
/// into \p summary and their text into \p text; returns how many logs there were, and counts
/// in \p without_summary those with no summary. One log whose summary cannot be read leaves
/// \p summary without one (SanitizerSummary::problem says why).
int add_runner_logs(const std::string& tool, const fs::path& logs, SanitizerSummary& summary,
                    std::string& text, int* without_summary = nullptr) {
  std::error_code ec;
  int count = 0;
  std::string unreadable;
  for (auto it = fs::directory_iterator(logs, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string log = read_file_at_most(it->path(), kMaxLogBytes);
    const SanitizerSummary one = parse_sanitizer_summary(tool, log);
    if (text.size() < kMaxExcerptSource) text.append(log, 0, kMaxExcerptSource - text.size());
    ++count;
    if (!one.problem.empty() && unreadable.empty()) unreadable = one.problem;
    if (!one.found && without_summary != nullptr) ++*without_summary;
    if (!one.found) continue;
    if (!summary.found) {
      summary = one;
      continue;
    }
    summary.errors = add_counts(summary.errors, one.errors);
    if (one.hazards >= 0) summary.hazards = add_counts(summary.hazards, one.hazards);
    if (one.warnings >= 0) summary.warnings = add_counts(summary.warnings, one.warnings);
  }
  if (!unreadable.empty()) {
    summary = SanitizerSummary{};
    summary.problem = unreadable;
  }
  return count;
}

/// What the student needs to see: the first reported problems (lines of the ========= block).
std::string first_problems(const std::string& sanitizer_output) {
  std::string excerpt;
  int kept = 0;
  for (const std::string& line : split_lines(sanitizer_output)) {
    if (!starts_with(line, "=========")) continue;
    if (contains(line, "SUMMARY") || contains(line, "COMPUTE-SANITIZER")) continue;
    if (trim(line.substr(9)).empty()) continue;
    excerpt += line + "\n";
    if (++kept == 25) break;
  }
  return trim(excerpt);
}

/// Where the checker of \p spec records its tests' outcomes (outcome_record.hpp).
fs::path sanitizer_record(const SanitizerSpec& spec) {
  fs::path record = spec.log_file;
  return record.replace_extension(".record");
}

/// The recorded parts of the checker of \p spec.
std::map<std::pair<std::size_t, std::size_t>, RecordedPart> recorded_parts(
    const SanitizerSpec& spec) {
  return parse_outcome_record(read_file_at_most(sanitizer_record(spec), kMaxLogBytes));
}

/// The checker process of \p spec with the lab arguments \p args, or over \p labs (none: the
/// lab of \p args): its tests repeated once per tool, the runner of repetition k under tools[k]
/// inside the sandbox, each runner's report drained into sanitizer_log_dir(log_file,
/// tool)/runner-<n>.log (emptied first). All of it is in its launch spec, beside its log.
ProcessSpec sanitizer_checker(const SanitizerSpec& spec, const std::vector<std::string>& args,
                              const std::vector<PlannedLab>& labs = {}) {
  launch::LaunchSpec told = spec.launch;
  told.labs = launch_labs(labs);
  // One repetition of the tests per tool, each with its runner under that tool. %n: the lab
  // client numbers each runner it starts (a crash starts a fresh one).
  // The sanitizer writes its report into a pipe that the checker drains into these logs (the
  // lab's sandbox shows no logs folder, and the runner closes its copies of the pipe).
  for (const std::string& tool : spec.tools) {
    const fs::path logs = sanitizer_log_dir(spec.log_file, tool);
    std::error_code ec;
    fs::remove_all(logs, ec);
    fs::create_directories(logs, ec);
    const std::string log_path = "/dev/fd/" + std::to_string(runner::kSanitizerLogFd);
    told.runner.repetitions.push_back(
        {{spec.sanitizer.string(), "--tool", tool, "--print-limit", "5", "--log-file", log_path},
         (logs / "runner-%n.log").string()});
  }
  // The sanitizer's summary comes as the runner exits: a runner killed early leaves none, and
  // the run would lose its point for want of a summary. The test timeout still bounds it all.
  told.runner.exit_grace_s = 60;
  ProcessSpec ps;
  ps.argv = {spec.checker.string()};
  ps.argv.insert(ps.argv.end(), args.begin(), args.end());
  ps.argv.push_back("--gtest_color=no");
  if (!spec.filter.empty()) ps.argv.push_back("--gtest_filter=" + spec.filter);
  ps.argv.push_back("--gtest_repeat=" + std::to_string(spec.tools.size()));
  std::error_code ec;
  fs::remove(sanitizer_record(spec), ec);  // a run's record holds that run alone
  ps.argv.push_back("--record=" + sanitizer_record(spec).string());
  ps.env = spec.env;
  fs::path spec_file = spec.log_file;
  give_launch_spec(ps, spec_file.replace_extension(".launch.json"), told);
  ps.timeout_s = spec.timeout_s * static_cast<double>(std::max<std::size_t>(1, spec.tools.size()));
  ps.output_cap = spec.output_cap;
  ps.log_file = spec.log_file;
  ps.cancel = spec.cancel;
  return ps;
}

}  // namespace

std::vector<SanitizerRun> run_sanitizer_once(const SanitizerSpec& spec) {
  std::vector<SanitizerRun> runs(spec.tools.size());
  for (std::size_t t = 0; t < runs.size(); ++t) {
    runs[t].tool = spec.tools[t];
    runs[t].log = spec.log_file.string();
  }
  if (spec.sanitizer.empty()) {
    for (SanitizerRun& run : runs)
      run.problem = "compute-sanitizer not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)";
    return runs;
  }
  const ProcessResult r = run_process(sanitizer_checker(spec, spec.args));
  const auto parts = recorded_parts(spec);
  std::size_t reached = 0;  // repetitions the checker started
  while (parts.count({reached, 0}) > 0) ++reached;
  for (std::size_t t = 0; t < runs.size(); ++t) {
    SanitizerRun& run = runs[t];
    run.seconds = r.seconds;
    std::string sanitizer_output;
    const int logs_read = add_runner_logs(run.tool, sanitizer_log_dir(spec.log_file, run.tool),
                                          run.summary, sanitizer_output);
    const auto part = parts.find({t, 0});
    const RecordedPart tests = part != parts.end() ? part->second : RecordedPart{};
    run.no_gpu = tests.no_gpu;
    int failed = 0, passed = 0;
    for (const TestOutcome& outcome : tests.finished) {
      if (outcome.result == TestResult::kFailed) ++failed;
      if (outcome.result == TestResult::kPassed) ++passed;
    }
    run.tests_passed = tests.completed && failed == 0 && passed > 0;
    // A process that stopped early spoils the repetition it was in and those after it; the
    // ones it finished stand.
    const bool finished = tests.completed;
    if (!r.exited() && !finished) {
      run.problem = t < reached ? r.describe()
                                : "not reached: the checker stopped during " +
                                      spec.tools[reached == 0 ? 0 : reached - 1] + " (" +
                                      r.describe() + ")";
    } else if (!run.summary.found) {
      run.problem = fmt::format("no summary from the lab's process ({} log{}; {})", logs_read,
                                logs_read == 1 ? "" : "s", r.describe());
    } else if (!tests.completed) {
      run.problem = "the tests under it did not finish";
    }
    run.ran = run.summary.found && (r.exited() || finished);
    if (t == 0) {
      const CheckerStartups startups = checker_startups(r.output);
      run.checker_contexts = startups.contexts;
      run.lab_process_starts = startups.lab_processes;
    }
    run.excerpt = first_problems(sanitizer_output);
  }
  return runs;
}

namespace {

/// Whether every runner report of \p tool in \p logs has a summary, and none a problem; their
/// sum goes to \p summary.
bool every_report_clean(const std::string& tool, const fs::path& logs, SanitizerSummary& summary) {
  std::string text;
  int without_summary = 0;
  const int reports = add_runner_logs(tool, logs, summary, text, &without_summary);
  // Counts are never negative once read, so a sum of 0 means 0 in every report.
  return reports > 0 && without_summary == 0 && summary.found && summary.problems() == 0;
}

}  // namespace

std::vector<std::vector<SanitizerRun>> run_sanitizer_group(const SanitizerGroupSpec& spec) {
  const SanitizerSpec& common = spec.common;
  std::vector<std::vector<SanitizerRun>> result(spec.labs.size());
  if (spec.labs.size() == 1 || common.sanitizer.empty()) {
    for (std::size_t i = 0; i < spec.labs.size(); ++i)
      result[i] = run_sanitizer(spec.labs[i].alone);
    return result;
  }
  // The labs go into the group's launch spec, beside its log, in the grader's logs.
  std::vector<PlannedLab> planned;
  for (const SanitizedLab& lab : spec.labs) planned.push_back(lab.part);
  SanitizerSpec group = common;
  group.timeout_s = common.timeout_s * static_cast<double>(spec.labs.size());
  const ProcessResult r = run_process(sanitizer_checker(group, {}, planned));
  const auto parts = recorded_parts(group);
  std::vector<std::vector<std::string>> alone(spec.labs.size());  // tools to run a lab alone
  for (std::size_t t = 0; t < common.tools.size(); ++t) {
    const std::string& tool = common.tools[t];
    SanitizerSummary summary;
    const bool clean = every_report_clean(tool, sanitizer_log_dir(common.log_file, tool), summary);
    for (std::size_t i = 0; i < spec.labs.size(); ++i) {
      const auto part = parts.find({t, i});
      const RecordedPart tests = part != parts.end() ? part->second : RecordedPart{};
      const bool finished = tests.completed && !tests.no_gpu;
      const bool passed =
          finished &&
          std::none_of(tests.finished.begin(), tests.finished.end(),
                       [](const TestOutcome& o) { return o.result == TestResult::kFailed; }) &&
          std::any_of(tests.finished.begin(), tests.finished.end(),
                      [](const TestOutcome& o) { return o.result == TestResult::kPassed; });
      // A stub's part failed only by its own "not implemented": alone it would say the same.
      const bool stub =
          finished && std::any_of(tests.finished.begin(), tests.finished.end(), stub_failure) &&
          std::all_of(tests.finished.begin(), tests.finished.end(), [](const TestOutcome& o) {
            return o.result != TestResult::kFailed || stub_failure(o);
          });
      if (!clean || !(passed || stub)) {
        alone[i].push_back(tool);
        continue;
      }
      SanitizerRun run;
      run.tool = tool;
      run.ran = true;
      run.summary = summary;
      run.tests_passed = passed;
      run.seconds = r.seconds / static_cast<double>(spec.labs.size());
      run.log = common.log_file.string();
      result[i].push_back(std::move(run));
    }
  }
  for (std::size_t i = 0; i < spec.labs.size(); ++i) {
    if (alone[i].empty()) continue;
    SanitizerSpec one = spec.labs[i].alone;
    one.tools = alone[i];
    for (SanitizerRun& run : run_sanitizer(one)) result[i].push_back(std::move(run));
    std::stable_sort(
        result[i].begin(), result[i].end(), [&](const SanitizerRun& a, const SanitizerRun& b) {
          const auto rank = [&](const std::string& tool) {
            return std::find(common.tools.begin(), common.tools.end(), tool) - common.tools.begin();
          };
          return rank(a.tool) < rank(b.tool);
        });
  }
  if (!result.empty() && !result[0].empty()) {  // the group's checker, counted once
    const CheckerStartups startups = checker_startups(r.output);
    result[0][0].checker_contexts += startups.contexts;
    result[0][0].lab_process_starts += startups.lab_processes;
  }
  return result;
}

}  // namespace reduce::grade
