#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/submission/build.hpp>
#include <reduce_grade/submission/ninja_logs.hpp>
#include <reduce_grade/submission/staging.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <thread>

namespace reduce::grade {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

/// True for ninja's progress prefix "[12/40] " at the start of \p line (read without a regex:
/// a compiler line can be megabytes long).
bool is_progress(std::string_view line) {
  const auto digits_then = [&line](std::size_t at, char end) {
    std::size_t i = at;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
    return i > at && i < line.size() && line[i] == end ? i + 1 : std::string_view::npos;
  };
  if (line.empty() || line[0] != '[') return false;
  const std::size_t slash = digits_then(1, '/');
  if (slash == std::string_view::npos) return false;
  const std::size_t close = digits_then(slash, ']');
  return close != std::string_view::npos && close < line.size() && line[close] == ' ';
}

bool is_noise(const std::string& line) {
  const std::string t = trim(line);
  if (t.empty()) return false;
  if (is_progress(t)) return true;
  if (starts_with(t, "FAILED: ") || starts_with(t, "ninja: ") || starts_with(t, "gmake") ||
      starts_with(t, "make[") || starts_with(t, "cd ") || starts_with(t, "[reduce-grade]"))
    return true;
  // Compiler and linker command lines.
  if (contains(t, " -o ") &&
      (contains(t, " -c ") || contains(t, " -shared ") || contains(t, "-Wl,")))
    return true;
  return false;
}

}  // namespace

fs::path staging_tree(const fs::path& build_dir) {
  return build_dir / "staging";
}

const char* stage_name(BuildStage stage) {
  switch (stage) {
    case BuildStage::kStaging:
      return "staging";
    case BuildStage::kConfigure:
      return "configure";
    case BuildStage::kCompile:
      return "compile";
    case BuildStage::kLink:
      return "link";
    case BuildStage::kNone:
      break;
  }
  return "";
}

bool links_only(const std::string& log) {
  bool undefined = false;
  for (const std::string& line : split_lines(log)) {
    const std::string l = lower(line);
    if (contains(l, "undefined reference") || contains(l, "undefined symbol"))
      undefined = true;
    else if (contains(l, "error:") && !contains(l, "ld returned") &&
             !contains(l, "linker command failed"))
      return false;  // a compiler's diagnostic
  }
  return undefined;
}

std::string extract_compiler_errors(const std::string& log, const std::string& submission,
                                    std::size_t max_lines) {
  std::vector<std::string> kept;
  for (const std::string& line : split_lines(log))
    if (!is_noise(line)) kept.push_back(line);
  std::size_t first = kept.size();
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const std::string l = lower(kept[i]);
    if (contains(l, "error") || contains(l, "undefined reference") ||
        contains(l, "undefined symbol")) {
      first = i;
      break;
    }
  }
  std::size_t begin;
  if (first == kept.size()) {
    begin = kept.size() > max_lines ? kept.size() - max_lines : 0;  // no "error": the tail
  } else {
    begin = first > 0 && contains(kept[first - 1], "In function") ? first - 1 : first;
    if (first > 0 && contains(lower(kept[first]), "undefined reference") && first > 0)
      begin = first - 1;
  }
  std::string out;
  std::size_t taken = 0;
  for (std::size_t i = begin; i < kept.size() && taken < max_lines; ++i, ++taken) {
    out += kept[i] + "\n";
  }
  if (kept.size() - begin > max_lines)
    out += fmt::format("[... {} more lines in the build log]\n", kept.size() - begin - max_lines);
  std::string prefix = submission;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  if (!prefix.empty()) out = replace_all(out, prefix, "");
  return trim(sanitize_text(out));
}

namespace {

/// A build folder's arguments of its last configure that succeeded, one a line.
const char* const kConfigureStamp = "reduce-configure-args.txt";
/// How a configure that was not needed begins its log.
const char* const kConfigureSkipped = "configure skipped";
/// The configure define that names the suite files the course's checkers link.
const std::string kCheckerSuitesDefine = "-DREDUCE_CHECKER_SUITES=";

/// A submission's build folder's record of what its configure wrote: the SHA-256 of each file,
/// in sha256sum's format, taken right after the configure (keep_configure()).
const char* const kConfigureRecord = "reduce-configured-files.txt";

/// One cmake configure or build in a grading folder.
struct CMakeRun {
  fs::path course_root;
  fs::path build_dir;
  int jobs = 0;
  std::vector<std::string> cmake_args;
  Limits limits;
  std::size_t memory_limit = 0;      ///< per build process (RLIMIT_AS); 0: none
  std::vector<std::string> sandbox;  ///< the command in front of cmake (empty: none)

  /// \p words with the sandbox in front.
  std::vector<std::string> confined(std::vector<std::string> words) const {
    words.insert(words.begin(), sandbox.begin(), sandbox.end());
    return words;
  }

  ProcessResult configure(const std::vector<std::string>& defines, const fs::path& log) const {
    ProcessSpec spec;
    spec.argv = {"cmake", "-S", course_root.string(), "-B", build_dir.string()};
    if (find_program("ninja")) {  // the grader reads ninja's deps log (lab_dependencies())
      spec.argv.push_back("-G");
      spec.argv.push_back("Ninja");
    }
    for (const char* arg :
         {"-DCMAKE_BUILD_TYPE=Release", "-DREDUCE_BUILD_GRADER=OFF", "-DREDUCE_BUILD_DOCS=OFF"})
      spec.argv.push_back(arg);
    for (const std::string& arg : defines) spec.argv.push_back(arg);
    for (const std::string& arg : cmake_args) spec.argv.push_back(arg);
    const std::string args = join(spec.argv, "\n");  // the sandbox's own paths left out
    spec.argv = confined(std::move(spec.argv));
    spec.timeout_s = limits.configure_timeout_s;
    spec.output_cap = std::size_t{16} << 20;
    spec.log_file = log;
    // The same arguments as this folder's last configure: cmake --build configures again by
    // itself when a CMake input changed (course.json included), so a configure here would only
    // cost its seconds (3.6 s of a course's grading on the H200). A submission's build folder
    // keeps its configure only where the grading allows it (keep_configure()).
    const fs::path stamp = build_dir / kConfigureStamp;
    std::error_code ec;
    if (fs::is_regular_file(build_dir / "CMakeCache.txt", ec) && fs::exists(stamp, ec) &&
        read_file(stamp) == args) {
      ProcessResult same;
      same.started = true;
      same.exit_code = 0;
      same.output = std::string(kConfigureSkipped) + ": the same arguments as its last configure\n";
      write_file(log, same.output);
      return same;
    }
    fs::remove(stamp, ec);
    ProcessResult r = run_process(spec);
    if (r.succeeded()) write_file(stamp, args);
    return r;
  }

  ProcessResult build(const std::vector<std::string>& targets, const fs::path& log,
                      bool keep_going) const {
    ProcessSpec spec;
    const int j =
        jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    spec.argv = {"cmake", "--build", build_dir.string(), "-j", std::to_string(j), "--target"};
    for (const std::string& t : targets) spec.argv.push_back(t);
    if (keep_going) {
      spec.argv.push_back("--");
      spec.argv.push_back("-k");
      if (find_program("ninja")) spec.argv.push_back("0");
    }
    spec.argv = confined(std::move(spec.argv));
    spec.timeout_s = limits.build_timeout_s;
    spec.output_cap = std::size_t{32} << 20;
    spec.log_file = log;
    spec.memory_limit_bytes = memory_limit;
    return run_process(spec);
  }
};

/// The "CMake Error" lines of a failed configure (or its tail).
std::string configure_errors(const ProcessResult& conf) {
  std::string errors;
  const auto lines = split_lines(conf.output);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (contains(lines[i], "CMake Error")) {
      for (std::size_t k = i; k < lines.size() && k < i + 12; ++k) errors += lines[k] + "\n";
      break;
    }
  }
  if (errors.empty()) errors = clip(conf.output, 20, 4000);
  return fmt::format("cmake configure failed ({}):\n{}", conf.describe(), trim(errors));
}

/// SHA-256 of every file under \p dir / each of \p subs (sha256sum), by path relative to
/// \p dir with \p label in front.
std::map<std::string, std::string> digest_files(const fs::path& dir,
                                                const std::vector<std::string>& subs,
                                                const std::string& label) {
  std::map<std::string, std::string> digests;
  std::vector<std::string> files;
  std::error_code ec;
  for (const std::string& sub : subs) {
    const fs::path top = dir / sub;
    if (fs::is_regular_file(top, ec)) files.push_back(top.string());
    if (!fs::is_directory(top, ec)) continue;
    for (const auto& e : fs::recursive_directory_iterator(top, ec))
      if (e.is_regular_file(ec) || e.is_symlink(ec)) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) return digests;
  ProcessSpec spec;
  spec.argv = {"sha256sum", "--"};
  for (const std::string& f : files) spec.argv.push_back(f);
  spec.timeout_s = 300;
  spec.output_cap = std::size_t{16} << 20;
  const ProcessResult r = run_process(spec);
  for (const std::string& line : split_lines(r.output)) {
    const std::size_t space = line.find("  ");
    if (space == std::string::npos) continue;
    digests[label + fs::path(line.substr(space + 2)).lexically_relative(dir).string()] =
        line.substr(0, space);
  }
  // A file sha256sum could not read gets no digest; changes() then reports it.
  for (const std::string& f : files) {
    const std::string rel = label + fs::path(f).lexically_relative(dir).string();
    if (!digests.count(rel)) digests[rel] = "unreadable";
  }
  return digests;
}

/// The SHA-256 of every file of a submission's build folder but the course's build, the staged
/// lab folders and the record itself: right after a configure, what it wrote.
std::map<std::string, std::string> configure_digests(const fs::path& build_dir) {
  std::vector<std::string> tops;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(build_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name != "course" && fs::path(name) != staging_tree(build_dir).filename() &&
        name != kConfigureRecord)
      tops.push_back(name);
  }
  return digest_files(build_dir, tops, "");
}

}  // namespace

void record_configure(const fs::path& build_dir) {
  std::string text;
  for (const auto& [file, digest] : configure_digests(build_dir))
    text += digest + "  " + file + "\n";
  write_file(build_dir / kConfigureRecord, text);
}

bool keep_configure(const fs::path& build_dir, std::string& why) {
  std::error_code ec;
  const fs::path record = build_dir / kConfigureRecord;
  if (!fs::is_regular_file(fs::symlink_status(record, ec))) {
    why = "no record of its configure";
    return false;
  }
  std::map<std::string, std::string> recorded;
  for (const std::string& line : split_lines(read_file(record))) {
    const std::size_t space = line.find("  ");
    if (space != std::string::npos) recorded[line.substr(space + 2)] = line.substr(0, space);
  }
  if (!recorded.count("CMakeCache.txt")) {
    why = "its record names no CMakeCache.txt";
    return false;
  }
  std::vector<std::string> files;
  for (const auto& [file, digest] : recorded) {
    // A recorded file must still be one (not a link to one) with the same contents.
    if (!fs::is_regular_file(fs::symlink_status(build_dir / file, ec))) {
      why = file + " is no longer the file its configure wrote";
      return false;
    }
    files.push_back(file);
  }
  const std::map<std::string, std::string> now = digest_files(build_dir, files, "");
  for (const auto& [file, digest] : recorded) {
    const auto it = now.find(file);
    if (it == now.end() || it->second != digest) {
      why = file + " changed since its configure";
      return false;
    }
  }
  // Everything else goes: the staged labs, every object and library of the last build, ninja's
  // logs, and whatever else appeared; the course's build is not the submission's.
  std::vector<fs::path> extra;
  for (auto it = fs::recursive_directory_iterator(build_dir, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(build_dir);
    if (it.depth() == 0 && rel == "course") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory(ec) && !it->is_symlink(ec)) continue;
    if (rel != kConfigureRecord && !recorded.count(rel.string())) extra.push_back(it->path());
  }
  for (const fs::path& path : extra) fs::remove(path, ec);
  remove_all_quietly(staging_tree(build_dir));
  why = fmt::format("kept its configure ({} files as it wrote them; {} others removed)",
                    recorded.size(), extra.size());
  return true;
}

std::string clear_build_dir(const fs::path& build_dir, bool keep) {
  std::string why;
  if (keep && keep_configure(build_dir, why)) return why;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(build_dir, ec))
    if (entry.path().filename() != "course") remove_all_quietly(entry.path());
  return why.empty() ? "emptied" : "emptied: " + why;
}

std::map<std::string, std::string> course_digests(const fs::path& build_dir,
                                                  const fs::path& course_root) {
  std::map<std::string, std::string> digests =
      digest_files(build_dir, {"bin", "lib", "solutions/lib", "references/lib"}, "");
  if (!course_root.empty()) {
    const auto sources = digest_files(
        course_root,
        {"course.json", "CMakeLists.txt", "cmake", "common", "autograder", "solutions"},
        "course: ");
    digests.insert(sources.begin(), sources.end());
  }
  return digests;
}

std::string CourseBuild::changes() const {
  const std::map<std::string, std::string> now = course_digests(dir, course_root);
  std::vector<std::string> what;
  for (const auto& [file, digest] : digests) {
    const auto it = now.find(file);
    if (it == now.end())
      what.push_back(file + " went missing");
    else if (it->second != digest)
      what.push_back(file + " changed");
  }
  for (const auto& [file, digest] : now)
    if (!digests.count(file)) what.push_back(file + " appeared");
  if (what.size() > 5) {
    const std::size_t more = what.size() - 5;
    what.resize(5);
    what.push_back(fmt::format("and {} more", more));
  }
  return join(what, ", ");
}

std::string checker_suites(const std::vector<OpPlan>& plans, const std::string& configured) {
  std::set<std::string> ops;
  for (const OpPlan& plan : plans) {
    ops.insert(plan.suites.begin(), plan.suites.end());
    if (plan.suites.empty()) ops.insert(plan.op);
  }
  if (!configured.empty()) {
    const auto lines = split_lines(configured);
    const auto define = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
      return starts_with(line, kCheckerSuitesDefine);
    });
    // Configured without the define, or with it empty: the checkers link every suite file.
    if (define == lines.end() || define->size() == kCheckerSuitesDefine.size()) return "";
    for (const std::string& op : split(define->substr(kCheckerSuitesDefine.size()), ";"))
      ops.insert(op);
  }
  return join(std::vector<std::string>(ops.begin(), ops.end()), ";");
}

CourseBuild build_course(const CourseBuildOptions& o) {
  CourseBuild course;
  course.dir = o.build_dir;
  const double start = now_seconds();
  const auto say = [&](const std::string& text) {
    if (o.progress) o.progress(text);
  };
  std::error_code ec;
  fs::create_directories(o.build_dir, ec);
  fs::create_directories(o.log_dir, ec);
  const CMakeRun cmake{o.course_root, o.build_dir, o.jobs, o.cmake_args, o.limits, 0, {}};
  const fs::path stamp = o.build_dir / kConfigureStamp;
  const std::string suites =
      checker_suites(o.plans, fs::is_regular_file(stamp, ec) ? read_file(stamp) : "");
  say(fmt::format(
      "configure: the course's checkers ({}), lab runner and benchmark",
      suites.empty() ? "every suite" : "the suites of " + replace_all(suites, ";", ", ")));
  // The references, where the rubric judges a lab against its own: the tree "solutions", only
  // those labs.
  const bool references = !o.reference_labs.empty();
  const ProcessResult conf = cmake.configure(
      {references ? "-DREDUCE_TREES=solutions" : "-DREDUCE_TREES=",
       "-DREDUCE_ONLY_LABS=" + join(o.reference_labs, ";"), "-DREDUCE_BUILD_TESTS=ON",
       std::string("-DREDUCE_BUILD_HIDDEN_TESTS=") + (o.hidden ? "ON" : "OFF"),
       std::string("-DREDUCE_BUILD_BENCHMARKS=") + (o.benchmark ? "ON" : "OFF"),
       kCheckerSuitesDefine + suites},
      o.log_dir / "course-configure.log");
  if (!conf.succeeded()) {
    course.problem = configure_errors(conf);
    course.seconds = now_seconds() - start;
    return course;
  }
  // The course's two checkers hold the suites of `suites` (autograder/tests/CMakeLists.txt).
  std::vector<std::string> targets = {"reduce_lab_runner"};
  const bool any_public = std::any_of(o.plans.begin(), o.plans.end(),
                                      [](const OpPlan& plan) { return plan.public_tests; });
  const bool any_hidden = std::any_of(o.plans.begin(), o.plans.end(),
                                      [](const OpPlan& plan) { return plan.hidden_tests; });
  if (any_public) targets.push_back("reduce_course_test");
  if (o.hidden && any_public && any_hidden) targets.push_back("reduce_course_graded_test");
  if (o.benchmark) targets.push_back("reduce_bench");
  if (o.benchmark && references) targets.push_back("solutions_all");
  if (o.benchmark && o.cub_references)
    targets.insert(targets.end(),
                   {"reduce_cub_reference_sum", "reduce_cub_reference_sum_deterministic"});
  say(fmt::format("build: the course's binaries ({} targets)", targets.size()));
  const ProcessResult b = cmake.build(targets, o.log_dir / "course-build.log", false);
  // Read after the build: a build that configured again (a CMake input changed) rewrote it.
  try {
    course.manifest = read_manifest(o.build_dir);
  } catch (const std::exception& e) {
    course.problem = e.what();
    course.seconds = now_seconds() - start;
    return course;
  }
  course.benchmark_ok = o.benchmark && !course.manifest.bench.empty() &&
                        fs::is_regular_file(course.manifest.bench, ec);
  course.ok = b.succeeded();
  if (!course.ok)
    course.problem = fmt::format("the course's checkers did not build ({}):\n{}", b.describe(),
                                 extract_compiler_errors(b.output, o.course_root.string(), 20));
  course.course_root = o.course_root;
  course.digests = course_digests(o.build_dir, o.course_root);
  course.seconds = now_seconds() - start;
  return course;
}

namespace {

/// The library targets of one lab, one per operation.
std::vector<std::string> lab_targets(const BuildOptions& o, const std::string& lab) {
  std::vector<std::string> targets;
  for (const OpPlan& plan : o.plans.at(lab))
    targets.push_back(fmt::format("submission_{}_{}", lab, plan.op));
  return targets;
}

/// Stage: a copy of exactly the lab folders, refusing links and special files. Returns the labs
/// staged.
std::vector<std::string> stage_labs(const BuildOptions& o, const fs::path& staged,
                                    BuildOutcome& outcome) {
  std::vector<std::string> labs;
  for (const std::string& lab : o.labs) {
    const StageResult st = stage_lab(o.submission / lab, staged / lab);
    if (st.ok) {
      labs.push_back(lab);
      continue;
    }
    BuildFacts& b = outcome.labs[lab];
    b.stage = BuildStage::kStaging;
    b.errors = "the lab folder was refused: " + st.describe();
    if (o.progress) o.progress(fmt::format("{}: refused: {}", lab, clip(st.describe(), 1, 200)));
  }
  return labs;
}

/// Configure once for all labs: their libraries only (the checkers are the course's).
bool configure_labs(const BuildOptions& o, const CMakeRun& cmake, const fs::path& staged,
                    const std::vector<std::string>& labs, BuildOutcome& outcome) {
  if (o.progress)
    o.progress(fmt::format("configure: {} lab{} of {}", labs.size(), labs.size() == 1 ? "" : "s",
                           o.submission.string()));
  const ProcessResult conf =
      cmake.configure({"-DREDUCE_TREES=" + staged.string(), "-DREDUCE_LABS_ARE_STUBS=OFF",
                       "-DREDUCE_ONLY_LABS=" + join(labs, ";"), "-DREDUCE_BUILD_TESTS=OFF",
                       "-DREDUCE_BUILD_HIDDEN_TESTS=OFF", "-DREDUCE_BUILD_BENCHMARKS=OFF"},
                      o.log_dir / "configure.log");
  if (!conf.succeeded()) {
    outcome.configure_problem = configure_errors(conf);
    for (const std::string& lab : labs) {
      BuildFacts& b = outcome.labs[lab];
      b.stage = BuildStage::kConfigure;
      b.errors = outcome.configure_problem;
      b.log = (o.log_dir / "configure.log").string();
    }
    return false;
  }
  // What this configure wrote, before the build adds to it: a later grading in this folder keeps
  // exactly that (keep_configure()).
  std::error_code ec;
  if (!starts_with(conf.output, kConfigureSkipped) ||
      !fs::exists(o.build_dir / kConfigureRecord, ec))
    record_configure(o.build_dir);
  try {
    outcome.manifest = read_manifest(o.build_dir);
  } catch (const std::exception& e) {
    outcome.configure_problem = e.what();
    return false;
  }
  outcome.configured = true;
  return true;
}

/// Whether every library of \p lab exists (BuildFacts::library_ok and ok, in \p outcome).
bool libraries_built(const BuildOptions& o, const std::string& lab, BuildOutcome& outcome) {
  std::error_code ec;
  BuildFacts& b = outcome.labs[lab];
  b.library_ok = true;
  for (const OpPlan& plan : o.plans.at(lab))
    b.library_ok = b.library_ok && !outcome.manifest.library(lab, plan.op).empty() &&
                   fs::is_regular_file(outcome.manifest.library(lab, plan.op), ec);
  b.ok = b.library_ok;  // built; keep_lab decides whether any of its code runs
  return b.library_ok;
}

/// While \p ninja runs: each lab of \p labs whose libraries it has linked (its build log says so)
/// and whose compiles it has recorded (its deps log) is checked (keep_lab) and told
/// (lab_checked), in the order they finish. Returns the labs it checked; the others are checked
/// after the build.
std::set<std::string> check_during_build(const BuildOptions& o,
                                         const std::vector<std::string>& labs,
                                         BuildOutcome& outcome, std::future<ProcessResult>& ninja) {
  std::map<std::string, std::set<std::string>> outputs;  // as build.ninja names them
  for (const std::string& lab : labs)
    for (const OpPlan& plan : o.plans.at(lab))
      outputs[lab].insert(fs::absolute(outcome.manifest.library(lab, plan.op))
                              .lexically_normal()
                              .lexically_relative(fs::absolute(o.build_dir).lexically_normal())
                              .generic_string());
  std::set<std::string> checked;
  while (checked.size() < labs.size() &&
         ninja.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout) {
    const std::set<std::string> done = finished_outputs(o.build_dir);
    std::optional<std::string> deps;  // read once a lab is linked
    for (const std::string& lab : labs) {
      const std::set<std::string>& mine = outputs[lab];
      if (checked.count(lab) != 0 ||
          !std::includes(done.begin(), done.end(), mine.begin(), mine.end()))
        continue;
      if (!deps) deps = read_deps_log(o.build_dir);
      const auto recorded = [&](const OpPlan& plan) {
        return !lab_dependencies(*deps, lab, plan.op).empty();
      };
      if (!std::all_of(o.plans.at(lab).begin(), o.plans.at(lab).end(), recorded)) continue;
      checked.insert(lab);
      o.lab_checked(lab,
                    libraries_built(o, lab, outcome) && o.keep_lab(lab, outcome.manifest, *deps));
    }
  }
  return checked;
}

/// Every lab library in one ninja run that keeps going past failures, each lab checked as soon as
/// it is linked where BuildOptions::lab_checked is set; the other built labs' checks (keep_lab)
/// run side by side after it, several labs at once, since each starts processes of its own and
/// waits for them; then a lab that failed is rebuilt alone, so that its log holds only its own
/// errors.
void build_libraries(const BuildOptions& o, const CMakeRun& cmake,
                     const std::vector<std::string>& labs, BuildOutcome& outcome) {
  std::vector<std::string> lib_targets;
  for (const std::string& lab : labs)
    for (const std::string& t : lab_targets(o, lab)) lib_targets.push_back(t);
  if (o.progress) o.progress(fmt::format("build: lab libraries ({} targets)", lib_targets.size()));
  std::future<ProcessResult> ninja = std::async(std::launch::async, [&] {
    return cmake.build(lib_targets, o.log_dir / "build-libraries.log", true);
  });
  const std::set<std::string> checked = o.keep_lab && o.lab_checked
                                            ? check_during_build(o, labs, outcome, ninja)
                                            : std::set<std::string>{};
  const ProcessResult all = ninja.get();
  std::vector<std::string> built;
  for (const std::string& lab : labs) {
    if (checked.count(lab) != 0) continue;
    if (libraries_built(o, lab, outcome))
      built.push_back(lab);
    else if (o.lab_checked)
      o.lab_checked(lab, false);  // before it is rebuilt alone for its log
  }
  if (!built.empty()) {
    const std::string deps = o.keep_lab ? read_deps_log(o.build_dir) : "";  // once: checks read it
    const int threads =
        o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    run_in_parallel(built.size(), threads, [&](std::size_t k) {
      const bool kept = !o.keep_lab || o.keep_lab(built[k], outcome.manifest, deps);
      if (o.lab_checked) o.lab_checked(built[k], kept);
    });
  }
  std::error_code ec;
  for (const std::string& lab : labs) {
    BuildFacts& b = outcome.labs[lab];
    if (b.library_ok) continue;
    b.stage = BuildStage::kCompile;
    if (all.timed_out) {
      b.timed_out = true;
      b.errors =
          fmt::format("the build timed out after {} s", points_text(o.limits.build_timeout_s));
      continue;
    }
    const fs::path log = o.log_dir / lab / "build.log";
    const ProcessResult r = cmake.build(lab_targets(o, lab), log, false);
    b.log = log.string();
    b.timed_out = r.timed_out;
    // The compiler names the staged copies; without their folder, paths read
    // "04_sequential/sum.cu(12)" instead of a temporary path.
    b.errors = extract_compiler_errors(
        r.output, fs::weakly_canonical(fs::absolute(staging_tree(o.build_dir)), ec).string());
    if (b.errors.empty()) b.errors = "(no compiler messages; " + r.describe() + ")";
    // The sources compiled when the only errors are the linker's (--no-undefined): an entry
    // point of the contract is missing or was given another signature.
    if (links_only(r.output)) b.stage = BuildStage::kLink;
    if (o.progress) o.progress(fmt::format("{}: does not compile", lab));
  }
}

/// How a submission's labs are configured and built: every process held to 8 GiB of address
/// space (a lab compiles in well under 1 GiB), so that a source that makes the compiler read
/// without end fails there instead of exhausting the grading host; and confined, since the
/// compiler and assembler read what the sources name (an `.incbin`, say) and must find no hidden
/// test, solution or report there.
CMakeRun submission_cmake(const BuildOptions& o) {
  return CMakeRun{o.course_root, o.build_dir,          o.jobs,   o.cmake_args,
                  o.limits,      std::size_t{8} << 30, o.sandbox};
}

}  // namespace

BuildOutcome build_submission(const BuildOptions& o) {
  BuildOutcome outcome;
  const double start = now_seconds();
  std::error_code ec;
  fs::create_directories(o.build_dir, ec);
  fs::create_directories(o.log_dir, ec);
  for (const std::string& lab : o.labs) outcome.labs[lab].attempted = true;
  const fs::path staged = staging_tree(o.build_dir);
  const std::vector<std::string> labs =
      o.labs.empty() ? std::vector<std::string>{} : stage_labs(o, staged, outcome);
  const CMakeRun cmake = submission_cmake(o);
  if (labs.empty()) {
    outcome.configure_problem = "no labs to build";
  } else if (configure_labs(o, cmake, staged, labs, outcome)) {
    if (o.defer_build && o.defer_build())
      outcome.deferred = labs;
    else
      build_libraries(o, cmake, labs, outcome);
  }
  outcome.seconds = now_seconds() - start;
  return outcome;
}

void build_later_labs(const BuildOptions& o, BuildOutcome& outcome) {
  if (outcome.deferred.empty()) return;
  const double start = now_seconds();
  const std::vector<std::string> labs = std::move(outcome.deferred);
  outcome.deferred.clear();
  build_libraries(o, submission_cmake(o), labs, outcome);
  outcome.seconds += now_seconds() - start;
}

}  // namespace reduce::grade
