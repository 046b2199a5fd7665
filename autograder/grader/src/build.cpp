#include <reduce_grade/build.hpp>
#include <reduce_grade/process.hpp>
#include <reduce_grade/staging.hpp>
#include <reduce_grade/util.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <system_error>
#include <thread>

namespace reduce::grade {
namespace {

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool is_noise(const std::string& line) {
  static const std::regex progress(R"(^\[[0-9]+/[0-9]+\] )");
  const std::string t = trim(line);
  if (t.empty()) return false;
  if (std::regex_search(t, progress)) return true;
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

fs::path lab_library_path(const fs::path& build_dir, const std::string& lab,
                          const std::string& op) {
  return build_dir / "submission" / "lib" / fmt::format("lib{}_{}.so", lab, op);
}

fs::path test_binary_path(const fs::path& build_dir, const std::string& op, bool hidden) {
  return build_dir / "bin" / fmt::format("{}_{}test", op, hidden ? "hidden_" : "");
}

fs::path bench_binary_path(const fs::path& build_dir) { return build_dir / "bin" / "reduce_bench"; }

fs::path staging_tree(const fs::path& build_dir) { return build_dir / "staging"; }

std::string lab_dependencies(const fs::path& build_dir, const std::string& lab,
                             const std::string& op) {
  // Ninja keeps every object's dependency list (the compiler's -MD output) in its deps log.
  ProcessSpec spec;
  spec.argv = {"ninja", "-C", build_dir.string(), "-t", "deps"};  // the grader builds with Ninja
  spec.timeout_s = 60;
  spec.output_cap = std::size_t{64} << 20;
  const ProcessResult r = run_process(spec);
  const std::string marker = fmt::format("submission_{}_{}.dir", lab, op);
  std::string depfile;
  bool inside = false;
  for (const std::string& line : split_lines(r.output)) {
    if (!line.empty() && line[0] != ' ' && line[0] != '\t') {
      inside = contains(line, marker) && contains(line, ": #deps");
      if (inside) depfile += line.substr(0, line.find(": #deps")) + ":";
      continue;
    }
    const std::string dep = trim(line);
    if (inside && !dep.empty()) depfile += " " + replace_all(dep, " ", "\\ ");
  }
  return depfile.empty() ? depfile : depfile + "\n";
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

BuildOutcome build_submission(const BuildOptions& o) {
  BuildOutcome outcome;
  const double start = now_seconds();
  const auto say = [&](const std::string& text) {
    if (o.progress) o.progress(text);
  };
  std::error_code ec;
  fs::create_directories(o.build_dir, ec);
  fs::create_directories(o.log_dir, ec);
  for (const std::string& lab : o.labs) outcome.labs[lab].attempted = true;
  if (o.labs.empty()) {
    outcome.configure_problem = "no labs to build";
    return outcome;
  }

  const fs::path staged = staging_tree(o.build_dir);
  const auto ninja = find_program("ninja");
  const std::string cmake = "cmake";
  const std::vector<std::string> keep_going =
      ninja ? std::vector<std::string>{"-k", "0"} : std::vector<std::string>{"-k"};
  const int jobs = o.jobs > 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());

  const auto configure = [&](const std::vector<std::string>& labs, const fs::path& log) {
    ProcessSpec spec;
    spec.argv = {cmake, "-S", o.course_root.string(), "-B", o.build_dir.string()};
    if (ninja) {
      spec.argv.push_back("-G");
      spec.argv.push_back("Ninja");
    }
    for (const std::string& arg :
         {std::string("-DCMAKE_BUILD_TYPE=Release"), "-DREDUCE_TREES=" + staged.string(),
          std::string("-DREDUCE_LABS_ARE_STUBS=OFF"), "-DREDUCE_ONLY_LABS=" + join(labs, ";"),
          std::string("-DREDUCE_BUILD_TESTS=ON"),
          std::string("-DREDUCE_BUILD_HIDDEN_TESTS=") + (o.hidden ? "ON" : "OFF"),
          std::string("-DREDUCE_BUILD_BENCHMARKS=") + (o.benchmark ? "ON" : "OFF"),
          std::string("-DREDUCE_BUILD_GRADER=OFF")})
      spec.argv.push_back(arg);
    for (const std::string& arg : o.cmake_args) spec.argv.push_back(arg);
    spec.timeout_s = o.limits.configure_timeout_s;
    spec.output_cap = std::size_t{16} << 20;
    spec.log_file = log;
    return run_process(spec);
  };
  const auto build = [&](const std::vector<std::string>& targets, const fs::path& log, bool keep) {
    ProcessSpec spec;
    spec.argv = {cmake, "--build", o.build_dir.string(), "-j", std::to_string(jobs), "--target"};
    for (const std::string& t : targets) spec.argv.push_back(t);
    if (keep) {
      spec.argv.push_back("--");
      for (const std::string& k : keep_going) spec.argv.push_back(k);
    }
    spec.timeout_s = o.limits.build_timeout_s;
    spec.output_cap = std::size_t{32} << 20;
    spec.log_file = log;
    return run_process(spec);
  };

  // ---- stage: a copy of exactly the lab folders, refusing links and special files
  std::vector<std::string> labs;
  for (const std::string& lab : o.labs) {
    const StageResult st = stage_lab(o.submission / lab, staged / lab);
    if (st.ok) {
      labs.push_back(lab);
      continue;
    }
    BuildFacts& b = outcome.labs[lab];
    b.stage = "staging";
    b.errors = "the lab folder was refused: " + st.describe();
    say(fmt::format("{}: refused: {}", lab, clip(st.describe(), 1, 200)));
  }
  if (labs.empty()) {
    outcome.configure_problem = "no labs to build";
    outcome.seconds = now_seconds() - start;
    return outcome;
  }

  // ---- configure once for all labs
  say(fmt::format("configure: {} lab{} of {}", labs.size(), labs.size() == 1 ? "" : "s",
                  o.submission.string()));
  const ProcessResult conf = configure(labs, o.log_dir / "configure.log");
  if (!conf.succeeded()) {
    std::string errors;
    const auto lines = split_lines(conf.output);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (contains(lines[i], "CMake Error")) {
        for (std::size_t k = i; k < lines.size() && k < i + 12; ++k) errors += lines[k] + "\n";
        break;
      }
    }
    if (errors.empty()) errors = clip(conf.output, 20, 4000);
    outcome.configure_problem =
        fmt::format("cmake configure failed ({}):\n{}", conf.describe(), trim(errors));
    for (const std::string& lab : labs) {
      BuildFacts& b = outcome.labs[lab];
      b.stage = "configure";
      b.errors = outcome.configure_problem;
      b.log = (o.log_dir / "configure.log").string();
    }
    outcome.seconds = now_seconds() - start;
    return outcome;
  }
  outcome.configured = true;

  const auto isolated_errors = [&](const std::string& lab, const std::vector<std::string>& targets,
                                   BuildFacts& b) {
    const fs::path log = o.log_dir / lab / "build.log";
    const ProcessResult r = build(targets, log, false);
    b.log = log.string();
    b.timed_out = r.timed_out;
    b.errors = extract_compiler_errors(r.output, o.submission.string());
    if (b.errors.empty()) b.errors = "(no compiler messages; " + r.describe() + ")";
  };

  // ---- phase A: every lab library, in one ninja run that keeps going past failures
  std::vector<std::string> lib_targets;
  for (const std::string& lab : labs)
    for (const OpPlan& plan : o.plans.at(lab))
      lib_targets.push_back(fmt::format("submission_{}_{}", lab, plan.op));
  say(fmt::format("build: lab libraries ({} targets, -j {})", lib_targets.size(), jobs));
  const ProcessResult a = build(lib_targets, o.log_dir / "build-libraries.log", true);
  std::vector<std::string> libs_ok;
  for (const std::string& lab : labs) {
    BuildFacts& b = outcome.labs[lab];
    b.library_ok = true;
    for (const OpPlan& plan : o.plans.at(lab))
      b.library_ok =
          b.library_ok && fs::is_regular_file(lab_library_path(o.build_dir, lab, plan.op), ec);
    if (b.library_ok) {
      if (o.keep_lab && !o.keep_lab(lab)) {
        b.ok = true;  // the lab itself built; it goes no further
        continue;
      }
      libs_ok.push_back(lab);
      continue;
    }
    b.stage = "library";
    if (a.timed_out) {
      b.timed_out = true;
      b.errors =
          fmt::format("the build timed out after {} s", points_text(o.limits.build_timeout_s));
      continue;
    }
    std::vector<std::string> targets;
    for (const OpPlan& plan : o.plans.at(lab))
      targets.push_back(fmt::format("submission_{}_{}", lab, plan.op));
    isolated_errors(lab, targets, b);
    say(fmt::format("{}: does not compile", lab));
  }

  // ---- phase B: the test binaries of the labs whose library built
  // The checkers are course binaries: one per operation, whichever labs use it.
  std::vector<std::string> test_targets;
  const auto add_target = [&](const std::string& t) {
    if (std::find(test_targets.begin(), test_targets.end(), t) == test_targets.end())
      test_targets.push_back(t);
  };
  for (const std::string& lab : libs_ok) {
    for (const OpPlan& plan : o.plans.at(lab)) {
      if (plan.public_tests) add_target(fmt::format("reduce_{}_test", plan.op));
      if (o.hidden && plan.hidden_tests) add_target(fmt::format("reduce_{}_hidden_test", plan.op));
    }
  }
  std::vector<std::string> labs_ok;
  if (test_targets.empty()) {
    for (const std::string& lab : libs_ok) {
      outcome.labs[lab].ok = true;  // a lab without any test suite: nothing more to build
      labs_ok.push_back(lab);
    }
  } else {
    // The benchmark does not compile any lab source (it loads the lab libraries at run time),
    // so when every library built it compiles beside the tests instead of after them.
    std::vector<std::string> targets = test_targets;
    if (o.benchmark) targets.push_back("reduce_bench");
    say(fmt::format("build: test binaries ({} targets){}", test_targets.size(),
                    targets.size() > test_targets.size() ? " and the benchmark" : ""));
    const ProcessResult b_run = build(targets, o.log_dir / "build-tests.log", true);
    for (const std::string& lab : libs_ok) {
      BuildFacts& b = outcome.labs[lab];
      bool ok = true;
      std::vector<std::string> targets;
      for (const OpPlan& plan : o.plans.at(lab)) {
        if (plan.public_tests) {
          ok = ok && fs::is_regular_file(test_binary_path(o.build_dir, plan.op, false), ec);
          targets.push_back(fmt::format("reduce_{}_test", plan.op));
        }
        if (o.hidden && plan.hidden_tests) {
          ok = ok && fs::is_regular_file(test_binary_path(o.build_dir, plan.op, true), ec);
          targets.push_back(fmt::format("reduce_{}_hidden_test", plan.op));
        }
      }
      if (ok) {
        b.ok = true;
        labs_ok.push_back(lab);
        continue;
      }
      b.stage = "tests";
      if (b_run.timed_out) {
        b.timed_out = true;
        b.errors =
            fmt::format("the build timed out after {} s", points_text(o.limits.build_timeout_s));
        continue;
      }
      isolated_errors(lab, targets, b);
      say(fmt::format("{}: the tests do not link with the lab", lab));
    }
  }

  // ---- phase C: the benchmark, a course binary that never links a lab (a no-op when it was
  // built beside the tests)
  if (o.benchmark && !labs_ok.empty()) {
    say("build: benchmark");
    const ProcessResult c = build({"reduce_bench"}, o.log_dir / "build-bench.log", false);
    outcome.benchmark_ok = fs::is_regular_file(bench_binary_path(o.build_dir), ec);
    if (!outcome.benchmark_ok)
      outcome.benchmark_problem =
          fmt::format("the benchmark did not build ({}):\n{}", c.describe(),
                      extract_compiler_errors(c.output, o.submission.string(), 10));
  } else if (o.benchmark) {
    outcome.benchmark_problem = "no lab built";
  } else {
    outcome.benchmark_problem = "not built";
  }
  outcome.seconds = now_seconds() - start;
  return outcome;
}

}  // namespace reduce::grade
