#include <reduce/not_implemented.hpp>
#include <reduce_grade/base/parse.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/gtest_suite.hpp>
#include <reduce_vocabulary/channels.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <string_view>
#include <system_error>

namespace reduce::grade {
namespace {

constexpr std::size_t kMessageBytes = 6000;
/// The most of a checker's outcome record that is read.
constexpr std::size_t kMaxRecordBytes = std::size_t{64} << 20;

/// The string \p key of a JSON object, or empty when it is missing or not a string (json's
/// value() throws on the wrong type).
std::string string_field(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

int SuiteRun::passed() const {
  return static_cast<int>(std::count_if(tests.begin(), tests.end(), [](const TestOutcome& t) {
    return t.result == TestResult::kPassed;
  }));
}

int SuiteRun::failed() const {
  return static_cast<int>(std::count_if(tests.begin(), tests.end(), [](const TestOutcome& t) {
    return t.result == TestResult::kFailed;
  }));
}

int SuiteRun::skipped() const {
  return static_cast<int>(std::count_if(tests.begin(), tests.end(), [](const TestOutcome& t) {
    return t.result == TestResult::kSkipped;
  }));
}

/// A failure message without GoogleTest's "Expected equality of these values" block (raw
/// operands and bit patterns): the file:line and the test's own explanation remain.
std::string condense_failure(const std::string& message) {
  std::string out;
  bool in_block = false;
  for (const std::string& line : split_lines(message)) {
    if (starts_with(line, "Expected equality of these values:") ||
        starts_with(line, "Value of: ") || starts_with(line, "Expected: ") ||
        (starts_with(line, "Expected ") && contains(line, ", actual:"))) {
      in_block = true;
      continue;
    }
    if (in_block && (starts_with(line, "  ") || starts_with(line, "Actual: ") ||
                     starts_with(line, "Which is: ")))
      continue;
    in_block = false;
    out += line + "\n";
  }
  return trim(out);
}

std::vector<std::string> SuiteRun::failure_summaries(std::size_t max,
                                                     std::size_t lines_each) const {
  std::vector<std::string> out;
  for (const TestOutcome& t : tests) {
    if (t.result != TestResult::kFailed) continue;
    if (out.size() == max) {
      out.push_back(fmt::format("... and {} more failed tests", failed() - static_cast<int>(max)));
      break;
    }
    const std::string message = clip(condense_failure(t.message), lines_each, 1500);
    out.push_back(message.empty() ? t.name : t.name + ":\n" + message);
  }
  return out;
}

std::vector<std::string> parse_gtest_list(const std::string& output) {
  std::vector<std::string> names;
  std::string suite;
  for (const std::string& raw : split_lines(output)) {
    if (trim(raw).empty()) continue;
    std::string line = raw;
    const auto comment = line.find("  #");
    if (comment != std::string::npos) line = line.substr(0, comment);
    if (line[0] == ' ') {
      const std::string test = trim(line);
      if (!suite.empty() && !test.empty()) names.push_back(suite + test);
    } else {
      const std::string text = trim(line);
      suite = !text.empty() && text.back() == '.' && text[0] != '[' ? text : std::string();
    }
  }
  return names;
}

/// How the course's checkers mark a skip they decided themselves.
const char* const kCheckerSkip = "[checker]";
/// How a skip the checker did not decide reads once it is counted as a failure.
const std::string kUnexplainedSkip =
    "skipped without the checker deciding it (counted as failed): ";
/// What a stub's "not implemented" failure says (the message of reduce::NotImplemented).
const char* const kNotImplemented = reduce::kNotImplementedPrefix;
/// How the outcome of a test the checker never reached begins.
const char* const kNotRun = "not run: ";
/// How the checkers' skip for want of a GPU begins (GPU_TEST_OR_SKIP, gpu_test.hpp).
const char* const kNoGpuSkip = "[checker] no CUDA device";

bool stub_failure(const TestOutcome& outcome) {
  return outcome.result == TestResult::kFailed && !outcome.sticky_cuda_error &&
         contains(outcome.message, kNotImplemented);
}

std::map<std::pair<std::size_t, std::size_t>, RecordedPart> parse_outcome_record(
    const std::string& text) {
  std::map<std::pair<std::size_t, std::size_t>, RecordedPart> parts;
  std::pair<std::size_t, std::size_t> at{0, 0};
  for (const std::string& line : split_lines(text)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    if (const auto part = j.find("part"); part != j.end()) {
      const auto repetition = j.find("repetition");
      if (!part->is_number_unsigned() || repetition == j.end() || !repetition->is_number_unsigned())
        continue;
      at = {repetition->get<std::size_t>(), part->get<std::size_t>()};
      parts[at];
      continue;
    }
    RecordedPart& p = parts[at];
    if (j.contains("finished")) {
      p.completed = !p.in_progress.has_value();
    } else if (const std::string started = string_field(j, "start"); !started.empty()) {
      p.in_progress = started;
    } else if (const std::string ended = string_field(j, "end"); !ended.empty()) {
      const std::string result = string_field(j, "result");
      TestOutcome o;
      o.name = ended;
      o.result = result == "passed"    ? TestResult::kPassed
                 : result == "skipped" ? TestResult::kSkipped
                                       : TestResult::kFailed;
      o.message = sanitize_text(clip(string_field(j, "message"), 200, kMessageBytes));
      const auto broken = j.find("broken");
      o.sticky_cuda_error = o.result == TestResult::kFailed && broken != j.end() && *broken == true;
      // A skip is the checker's own (GTEST_SKIP in course code); its words say why.
      if (o.result == TestResult::kSkipped && contains(o.message, kNoGpuSkip)) p.no_gpu = true;
      if (p.in_progress == ended) p.in_progress.reset();
      p.finished.push_back(std::move(o));
    }
  }
  return parts;
}

std::string gtest_filter_for(const std::vector<std::string>& names) {
  std::string filter;
  for (const std::string& n : names) filter += (filter.empty() ? "" : ":") + n;
  return filter;
}

namespace {

fs::path suite_log(const SuiteOptions& options, const std::string& suffix) {
  return options.log_dir.empty() ? fs::path() : options.log_dir / (options.log_stem + suffix);
}

/// Where the launch spec of the checker process \p suffix goes: beside its logs, else a fresh
/// temporary folder.
fs::path launch_path(const SuiteOptions& options, const std::string& suffix) {
  const fs::path beside = suite_log(options, suffix + ".launch.json");
  return beside.empty() ? make_temp_dir("reduce-grade-launch-") / "launch.json" : beside;
}

/// The checker process of \p options (its logs' \p suffix: "", ".list", ".retry1"), told
/// \p launch.
ProcessSpec checker_spec(const SuiteOptions& options, const std::string& suffix,
                         const launch::LaunchSpec& launch) {
  ProcessSpec spec;
  spec.argv = {options.binary.string()};
  spec.argv.insert(spec.argv.end(), options.args.begin(), options.args.end());
  spec.env = options.env;
  // A held checker's wait is no test's: its tests' limit is kept by options.cancel.
  spec.timeout_s = options.timeout_s + launch.hold_limit_s;
  spec.cancel = options.cancel;
  spec.output_cap = options.output_cap;
  give_launch_spec(spec, launch_path(options, suffix), launch);
  return spec;
}

/// checker_spec() told options.launch.
ProcessSpec checker_spec(const SuiteOptions& options, const std::string& suffix) {
  return checker_spec(options, suffix, options.launch);
}

/// The binary's tests by name (--gtest_list_tests); empty with run.problem set when it does not
/// start.
std::vector<std::string> list_tests(const SuiteOptions& options, SuiteRun& run) {
  ProcessSpec list = checker_spec(options, ".list");
  list.argv.push_back("--gtest_list_tests");
  list.timeout_s = std::min(60.0, options.timeout_s);
  list.log_file = suite_log(options, ".list.log");
  const ProcessResult listed = run_process(list);
  if (!list.log_file.empty()) run.logs.push_back(list.log_file.string());
  std::vector<std::string> names = parse_gtest_list(listed.output);
  if (!listed.succeeded() || names.empty()) {
    run.crashed = true;
    run.problem = fmt::format("the test binary does not start ({}):\n{}", listed.describe(),
                              clip(listed.output, 15, 3000));
    names.clear();
  }
  return names;
}

/// Why a run of the test binary ended before its last test; sets the run's flags.
std::string abnormal_end(const ProcessResult& r, const SuiteOptions& options, SuiteRun& run) {
  if (r.timed_out) {
    run.timed_out = true;
    return fmt::format(
        "the test timed out: no result after {} s, the test binary was "
        "killed (an endless loop or a deadlock in the kernel?)",
        points_text(options.timeout_s));
  }
  if (r.output_flood) {
    run.output_flood = true;
    return fmt::format(
        "output flood: the test printed more than {}, the test binary "
        "was killed (remove debug printing)",
        byte_size_text(options.output_cap));
  }
  run.crashed = true;
  if (r.signal != 0) return "the test binary crashed: killed by " + signal_description(r.signal);
  if (!r.started) return "the test binary did not start: " + r.start_error;
  return fmt::format(
      "the test binary exited ({}) in the middle of the run (does the "
      "lab call exit() or abort()?)",
      r.describe());
}

/// One run of the binary over \p remaining (all tests on the first attempt).
struct Attempt {
  ProcessResult process;
  std::vector<TestOutcome> outcomes;  ///< in the order they finished
  std::string stop_reason;            ///< why it stopped early (empty: complete)
  bool abnormal = false;              ///< it ended before its last test
  bool sticky = false;                ///< a sticky CUDA error: the outcomes end at it
};

/// Where a checker's outcome record goes: beside its logs, else a fresh temporary file.
fs::path record_path(const SuiteOptions& options, const std::string& suffix) {
  const fs::path beside = suite_log(options, suffix + ".record");
  return beside.empty() ? make_temp_dir("reduce-grade-record-") / "record" : beside;
}

/// The last lines of \p output, quoted as what the lab's process said (data, never a verdict).
std::string output_tail(const std::string& output) {
  const std::vector<std::string> lines = split_lines(output);
  const std::size_t from = lines.size() > 12 ? lines.size() - 12 : 0;
  std::string tail;
  for (std::size_t i = from; i < lines.size(); ++i) tail += lines[i] + "\n";
  return sanitize_text(clip(trim(tail), 12, 2000));
}

Attempt run_attempt(const SuiteOptions& options, const std::vector<std::string>& remaining,
                    int attempt, SuiteRun& run) {
  std::error_code ec;
  const std::string suffix = attempt == 0 ? "" : fmt::format(".retry{}", attempt);
  const fs::path record = record_path(options, suffix);
  fs::remove(record, ec);
  ProcessSpec spec = checker_spec(options, suffix);
  spec.argv.push_back("--gtest_color=no");
  spec.argv.push_back("--record=" + record.string());
  if (attempt > 0) spec.argv.push_back("--gtest_filter=" + gtest_filter_for(remaining));
  spec.log_file = suite_log(options, suffix + ".log");
  Attempt a;
  a.process = run_process(spec);
  ++run.attempts;
  if (!spec.log_file.empty()) run.logs.push_back(spec.log_file.string());

  const CheckerStartups startups = checker_startups(a.process.output);
  run.checker_contexts += startups.contexts;
  run.lab_process_starts += startups.lab_processes;
  RecordedPart parse = parse_outcome_record(read_file_at_most(record, kMaxRecordBytes))[{0, 0}];
  run.no_gpu = run.no_gpu || parse.no_gpu;
  a.outcomes = std::move(parse.finished);
  a.abnormal = !a.process.exited() || !parse.completed || parse.in_progress.has_value();
  if (a.abnormal) {
    a.stop_reason = abnormal_end(a.process, options, run);
    if (parse.in_progress) {
      TestOutcome culprit{*parse.in_progress, TestResult::kFailed, a.stop_reason};
      if (const std::string tail = output_tail(a.process.output); !tail.empty())
        culprit.message += "\noutput before that:\n" + tail;
      a.outcomes.push_back(std::move(culprit));
    }
    if (run.problem.empty())
      run.problem =
          parse.in_progress ? a.stop_reason + " (in " + *parse.in_progress + ")" : a.stop_reason;
  }
  // After a sticky CUDA error every later test of that process failed for nothing: keep the
  // results up to the first such failure, rerun the rest in a fresh process.
  for (std::size_t i = 0; i < a.outcomes.size(); ++i) {
    if (a.outcomes[i].result != TestResult::kFailed || !a.outcomes[i].sticky_cuda_error) continue;
    a.outcomes.resize(i + 1);
    a.sticky = true;
    if (run.problem.empty())
      run.problem = fmt::format(
          "{} failed and left the checker's CUDA context broken; "
          "the tests after it were rerun in a fresh process",
          a.outcomes[i].name);
    if (!a.abnormal) a.stop_reason = "a sticky CUDA error in an earlier test";
    break;
  }
  return a;
}

}  // namespace

bool is_hidden_test(const std::string& full_name) {
  const std::string suite = full_name.substr(0, full_name.find('.'));
  const auto slash = suite.rfind('/');
  return starts_with(slash == std::string::npos ? suite : suite.substr(slash + 1), "Hidden");
}

CheckerStartups checker_startups(const std::string& output) {
  CheckerStartups counted;
  bool held = false;
  for (const std::string& line : split_lines(output)) {
    if (starts_with(line, runner::kCheckerContextLine)) ++counted.contexts;
    if (starts_with(line, runner::kLabProcessLine)) ++counted.lab_processes;
    if (!held && starts_with(line, runner::kCheckerHeldLine)) {
      held = true;  // the checker's own: it comes before any lab's code runs
      const std::string seconds = line.substr(std::string_view(runner::kCheckerHeldLine).size());
      if (const auto s = parse_number(seconds.substr(0, seconds.find(' '))); s && *s >= 0)
        counted.held_s = *s;
    }
  }
  return counted;
}

std::pair<SuiteRun, SuiteRun> split_hidden(const SuiteRun& run) {
  SuiteRun parts[2] = {run, run};
  parts[1].checker_contexts = 0;  // one process: counted once, with the public part
  parts[1].lab_process_starts = 0;
  for (SuiteRun& part : parts) {
    part.tests.clear();
    part.unexplained_skips = 0;
    part.not_implemented = false;
  }
  for (const TestOutcome& o : run.tests) {
    const bool hidden = is_hidden_test(o.name);
    // The public part may say where the process stopped, never which hidden test that was.
    if (hidden) parts[0].problem = replace_all(parts[0].problem, o.name, "a hidden test");
    SuiteRun& part = parts[hidden ? 1 : 0];
    part.tests.push_back(o);
    if (starts_with(o.message, kUnexplainedSkip)) ++part.unexplained_skips;
    if (contains(o.message, kNotImplemented)) part.not_implemented = true;
  }
  return {std::move(parts[0]), std::move(parts[1])};
}

void give_launch_spec(ProcessSpec& process, const fs::path& file,
                      const launch::LaunchSpec& launch) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  launch::write_launch_spec(file.string(), launch);
  process.env.emplace_back(launch::kLaunchSpecVariable, file.string());
}

std::vector<launch::PlannedLab> launch_labs(const std::vector<PlannedLab>& labs) {
  std::vector<launch::PlannedLab> planned;
  for (const PlannedLab& lab : labs)
    planned.push_back({lab.name, lab.op, lab.order, lab.entry, lab.library.string(), lab.filters});
  return planned;
}

std::string lab_mark() {
  return fmt::format("{:016x}", random_seed());
}

std::map<std::pair<std::size_t, std::size_t>, std::string> split_lab_output(
    const std::string& output, const std::string& mark, const std::vector<std::string>& labels) {
  const std::string head = "[ lab      ] " + mark + " ";
  std::vector<std::size_t> starts;
  for (std::size_t at = output.rfind(head, 0) == 0 ? 0 : output.find("\n" + head);
       at != std::string::npos; at = output.find("\n" + head, at + 1))
    starts.push_back(output[at] == '\n' ? at + 1 : at);
  std::map<std::pair<std::size_t, std::size_t>, std::string> parts;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t eol = std::min(output.find('\n', starts[k]), output.size());
    const std::string words = output.substr(starts[k] + head.size(), eol - starts[k] - head.size());
    const auto space = words.find(' ');
    const auto repetition = parse_count(words.substr(0, space));
    if (!repetition || space == std::string::npos) continue;
    const auto name = std::find(labels.begin(), labels.end(), words.substr(space + 1));
    if (name == labels.end()) continue;
    const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : output.size();
    parts[{static_cast<std::size_t>(*repetition),
           static_cast<std::size_t>(name - labels.begin())}] = output.substr(eol, end - eol);
  }
  return parts;
}

namespace {

/// The labels of \p labs' parts, in order.
std::vector<std::string> part_labels(const std::vector<PlannedLab>& labs) {
  std::vector<std::string> labels;
  for (const PlannedLab& lab : labs) labels.push_back(lab.label());
  return labels;
}

/// The checker of \p options over \p labs, its logs' \p suffix: the labs and \p mark, which
/// opens each part (lab_mark()), go into its launch spec with the rest of options.launch (a
/// command line is public, the grader's logs are not).
ProcessSpec plan_checker(const SuiteOptions& options, const std::vector<PlannedLab>& labs,
                         const std::string& mark, const std::string& suffix) {
  SuiteOptions group = options;
  group.args.clear();
  launch::LaunchSpec spec = options.launch;
  spec.labs = launch_labs(labs);
  spec.mark = mark;
  return checker_spec(group, suffix, spec);
}

/// Whether the recorded \p part ran every test of \p tests and each passed, or failed only with a
/// stub's "not implemented" (\p stub): the lab's own throw, which no other lab of the process
/// can make it say, so a lone run would say the same.
bool settled_part(const RecordedPart& part, const std::vector<std::string>& tests,
                  std::map<std::string, TestOutcome>& done, bool& stub) {
  for (const TestOutcome& o : part.finished) done[o.name] = o;
  stub = false;
  return !tests.empty() && part.completed && !part.in_progress && !part.no_gpu &&
         std::all_of(tests.begin(), tests.end(), [&](const std::string& n) {
           const auto it = done.find(n);
           if (it == done.end()) return false;
           const TestOutcome& o = it->second;
           const bool not_implemented = stub_failure(o);
           stub = stub || not_implemented;
           return o.result == TestResult::kPassed || not_implemented;
         });
}

}  // namespace

std::vector<std::vector<std::string>> list_lab_tests(const SuiteOptions& options,
                                                     const std::vector<PlannedLab>& labs,
                                                     std::string* problem) {
  std::error_code ec;
  if (options.log_dir.empty()) {
    if (problem != nullptr) *problem = "no log folder for the plan";
    return {};
  }
  fs::create_directories(options.log_dir, ec);
  const std::string mark = lab_mark();
  ProcessSpec spec = plan_checker(options, labs, mark, ".list");
  spec.argv.push_back("--gtest_list_tests");
  spec.timeout_s = std::min(60.0, options.timeout_s);
  spec.log_file = suite_log(options, ".list.log");
  const ProcessResult listed = run_process(spec);
  const auto parts = split_lab_output(listed.output, mark, part_labels(labs));
  if (!listed.succeeded() || parts.size() != labs.size()) {
    if (problem != nullptr)
      *problem = fmt::format("the checker does not list its tests ({}):\n{}", listed.describe(),
                             clip(listed.output, 15, 3000));
    return {};
  }
  std::vector<std::vector<std::string>> tests;
  for (std::size_t i = 0; i < labs.size(); ++i) tests.push_back(parse_gtest_list(parts.at({0, i})));
  return tests;
}

LabsRun run_gtest_suite_labs(const SuiteOptions& options, const std::vector<PlannedLab>& labs) {
  const std::vector<std::vector<std::string>> tests = list_lab_tests(options, labs);
  if (tests.empty()) {
    LabsRun none;
    none.labs.resize(labs.size());
    return none;
  }
  return run_gtest_suite_labs(options, labs, tests);
}

LabsRun run_gtest_suite_labs(const SuiteOptions& options, const std::vector<PlannedLab>& labs,
                             const std::vector<std::vector<std::string>>& tests) {
  LabsRun result;
  result.labs.resize(labs.size());
  result.failures.resize(labs.size());
  const double start = now_seconds();
  std::error_code ec;
  if (tests.size() != labs.size() || options.log_dir.empty()) return result;
  fs::create_directories(options.log_dir, ec);
  const std::string mark = lab_mark();
  ProcessSpec spec = plan_checker(options, labs, mark, "");
  const fs::path record = suite_log(options, ".record");
  fs::remove(record, ec);
  spec.argv.push_back("--gtest_color=no");
  spec.argv.push_back("--record=" + record.string());
  spec.log_file = suite_log(options, ".log");
  const ProcessResult r = run_process(spec);
  result.startups = checker_startups(r.output);
  result.seconds = std::max(0.0, now_seconds() - start - result.startups.held_s);
  const auto parts = parse_outcome_record(read_file_at_most(record, kMaxRecordBytes));
  for (std::size_t i = 0; i < labs.size(); ++i) {
    const auto part = parts.find({0, i});
    if (part == parts.end()) continue;
    result.failures[i] = own_failures(part->second.finished);
    std::map<std::string, TestOutcome> done;
    bool stub = false;
    if (!settled_part(part->second, tests[i], done, stub)) continue;
    SuiteRun run;
    run.ran = true;
    run.not_implemented = stub;
    run.attempts = 1;
    run.seconds = result.seconds / static_cast<double>(labs.size());
    run.logs = {spec.log_file.string()};
    for (const std::string& n : tests[i]) run.tests.push_back(done[n]);
    result.labs[i] = std::move(run);
  }
  return result;
}

std::vector<TestOutcome> own_failures(const std::vector<TestOutcome>& tests) {
  std::vector<TestOutcome> failed;
  for (const TestOutcome& o : tests)
    if (o.result == TestResult::kFailed && !o.sticky_cuda_error && !starts_with(o.message, kNotRun))
      failed.push_back(o);
  return failed;
}

void keep_first_failures(const std::vector<TestOutcome>& first, SuiteRun& run) {
  for (const TestOutcome& earlier : first) {
    const std::string message =
        earlier.message + "\n(in its first run, beside other labs; that run's failure stands)";
    auto it = std::find_if(run.tests.begin(), run.tests.end(),
                           [&](const TestOutcome& o) { return o.name == earlier.name; });
    if (it == run.tests.end()) {
      run.tests.push_back({earlier.name, TestResult::kFailed, message, false});
    } else if (it->result != TestResult::kFailed) {
      *it = {earlier.name, TestResult::kFailed, message, false};
    }
  }
}

SuiteRun run_gtest_suite(const SuiteOptions& options) {
  SuiteRun run;
  const double start = now_seconds();
  std::error_code ec;
  if (!options.log_dir.empty()) fs::create_directories(options.log_dir, ec);
  if (!fs::is_regular_file(options.binary, ec)) {
    run.problem = "test binary not found: " + options.binary.string();
    return run;
  }
  const std::vector<std::string> names = list_tests(options, run);
  if (names.empty()) {
    run.seconds = now_seconds() - start;
    return run;
  }
  run.ran = true;

  std::map<std::string, TestOutcome> done;
  std::vector<std::string> remaining = names;
  std::string stop_reason;
  for (int attempt = 0; attempt <= options.max_restarts && !remaining.empty(); ++attempt) {
    const Attempt a = run_attempt(options, remaining, attempt, run);
    for (const TestOutcome& o : a.outcomes) done[o.name] = o;
    remaining.clear();
    for (const std::string& n : names)
      if (done.count(n) == 0) remaining.push_back(n);
    if (!a.stop_reason.empty()) stop_reason = a.stop_reason;
    // Timeouts and floods repeat: rerunning costs time for nothing. A complete run leaves
    // nothing to rerun.
    if (a.process.timed_out || a.process.output_flood) break;
    if (!a.abnormal && !a.sticky) break;
  }
  for (const std::string& n : remaining) {
    done[n] = {n, TestResult::kFailed,
               std::string(kNotRun) + "the test binary stopped before this test (" +
                   (stop_reason.empty() ? std::string("no result reported") : stop_reason) + ")"};
  }
  for (const std::string& n : names) {
    TestOutcome& o = done[n];
    o.name = n;
    // Only the checker may decide a skip (no GPU, a GPU too small in total for the test): its
    // skip messages say "[checker]". Any other skip is one the lab could have provoked.
    if (o.result == TestResult::kSkipped && !contains(o.message, kCheckerSkip)) {
      o.result = TestResult::kFailed;
      o.message = kUnexplainedSkip + o.message;
      ++run.unexplained_skips;
    }
    if (contains(o.message, kNotImplemented)) run.not_implemented = true;
    run.tests.push_back(o);
  }
  run.seconds = now_seconds() - start;
  return run;
}

}  // namespace reduce::grade
