// The benchmark step: one reduce_bench process times every benchmarked operation of the labs
// graded, and each lab's fraction of the ceiling comes from its rows (grader.hpp).
#include <reduce/keyed_hash.hpp>
#include <reduce_grade/base/bench_results.hpp>
#include <reduce_grade/base/parse.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/benchmark/benchmark.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_vocabulary/launch_spec.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <system_error>
#include <vector>

namespace reduce::grade {
namespace {

/// An n a benchmark run times: \p size minus 1..4093 (minus at most a quarter of \p size, so
/// that a launch-bound size of 2^12 stays within one launch's work), drawn from its key for
/// \p use.
std::size_t timed_size(const std::string& size, std::uint64_t key, const char* use) {
  // Never the same n twice and never a power of two: nothing can be prepared for it.
  const std::size_t whole = parse_size(size);
  const std::size_t spread = std::min<std::size_t>(4093, whole / 4);
  return whole - 1 - static_cast<std::size_t>(derive_key(key, use) % spread);
}

/// The n every lab is timed at: the rubric's size.
std::size_t timed_size(const Rubric& rubric, std::uint64_t key) {
  return timed_size(rubric.performance.size, key, "timed size");
}

/// The sizes \p lab is timed at: its own where it has one and its measure is timed beside it
/// (\p measured), else the rubric's; and its launch-bound size where it has one.
std::vector<std::size_t> lab_sizes(const Rubric& rubric, const std::string& lab, std::uint64_t key,
                                   bool measured) {
  const LabRubric* lr = rubric.find(lab);
  std::vector<std::size_t> sizes = {lr != nullptr && measured && !lr->size.empty()
                                        ? timed_size(lr->size, key, "lab size")
                                        : timed_size(rubric, key)};
  if (lr != nullptr && !lr->launch_bound_size.empty())
    sizes.push_back(timed_size(lr->launch_bound_size, key, "launch-bound size"));
  return sizes;
}

/// The library that \p lab's \p op is measured against, where the rubric judges it against one
/// timed like it and the course build has it; else empty.
fs::path measure_library(const Rubric& rubric, const BuildManifest& course, const std::string& lab,
                         const std::string& op) {
  const LabRubric* lr = rubric.find(lab);
  if (lr == nullptr || !lr->timed_measure()) return {};
  if (lr->measure == "reference") return course.library(lab, op);
  const auto it = course.cub_references.find(op);
  return it == course.cub_references.end() ? fs::path() : it->second;
}

/// Why the benchmark's output holds no row named \p row_name, in the course's words (what the
/// process printed may quote a lab, and stays in its log).
std::string missing_row_problem(const std::string& row_name, const ProcessResult& r,
                                const BenchResults& results) {
  if (r.output_flood) return "output flood in the benchmark: " + r.describe();
  if (r.timed_out)
    return fmt::format("the benchmark timed out after {} s", points_text(r.timeout_s));
  return fmt::format("no benchmark result for {} ({}{})", row_name, r.describe(),
                     results.parsed ? "" : ", " + results.problem);
}

/// Whether a course.json "bench" names a family pattern: a prefix and '*' (lab 17's
/// segmented_sum_*, one family per segment length).
bool is_family_pattern(const std::string& bench_op) {
  return !bench_op.empty() && bench_op.back() == '*';
}

/// Whether a benchmark family is one that \p bench_op times.
bool family_matches(const std::string& family, const std::string& bench_op) {
  return is_family_pattern(bench_op) ? starts_with(family, bench_op.substr(0, bench_op.size() - 1))
                                     : family == bench_op;
}

/// \p bench_op in the benchmark's --benchmark_filter: a pattern's '*' stands for digits.
std::string family_regex(const std::string& bench_op) {
  return is_family_pattern(bench_op) ? bench_op.substr(0, bench_op.size() - 1) + "[0-9]+"
                                     : bench_op;
}

/// The rows of \p plan, named \p row_name, at \p n: one (the last), or, for a family pattern
/// (lab 17's segment lengths), one per family.
std::vector<const BenchRow*> plan_rows(const OpPlan& plan, const std::string& row_name,
                                       const BenchResults& results, std::size_t n) {
  std::vector<const BenchRow*> matching;
  for (const BenchRow& candidate : results.rows)
    if (candidate.impl == row_name && candidate.n == n &&
        (candidate.family.empty() || family_matches(candidate.family, plan.bench_op))) {
      if (!is_family_pattern(plan.bench_op)) matching.clear();  // the last one, as before
      matching.push_back(&candidate);
    }
  return matching;
}

/// The name of the row of the course's reference of a lab whose rows are named \p row_name.
std::string reference_row_name(const std::string& row_name) {
  return "reference-" + row_name;
}

/// The row of the course's reference beside \p row (same family, same n), where it ran and
/// passed; else nullptr.
const BenchRow* measure_row(const BenchRow& row, const std::string& row_name,
                            const BenchResults& results) {
  const BenchRow* reference = results.find(reference_row_name(row_name), row.n, row.family);
  return reference != nullptr && graded_verdict(*reference).passed ? reference : nullptr;
}

/// Adds the lab's row \p row of \p plan to \p perf, beside the same run's ceiling and CUB, and
/// its course reference's row \p measure where the lab is judged against it (else nullptr); the
/// slowest fraction so far is \p slowest. Returns false, with perf.problem set, where the row
/// gives the lab no fraction of its measure.
/// A call of \p row as a fraction of the speed of a call of its \p measure, the request's own
/// cost left out of both: the fraction, and the cost left out (0: none). The benchmark's clock
/// times a request whole: its calls and, around them, the socket's round trip, the switches between
/// the two processes' GPU contexts and the copy of the results back (about 11 us a call at 2^12
/// floats, where CUB's call is 6). The course's reference measures that cost in the same run: its
/// clock less its own CUDA events, which are trusted. A lab is charged its clock less that cost,
/// never less than its own events say (a lab's events could be forged lower, never its clock);
/// without the reference's events, both clocks whole.
struct ChargedCall {
  double fraction = 0;
  double request_us = 0;
};
ChargedCall fraction_of_measure(const BenchRow& row, const BenchRow& measure) {
  const double own = measure.event_us > 0
                         ? std::clamp(measure.median_us - measure.event_us, 0.0, measure.median_us)
                         : 0.0;
  double lab = std::max(row.median_us - own, row.event_us);
  if (!(lab > 0)) lab = row.median_us;
  return {(measure.median_us - own) / lab, row.median_us - lab};
}

bool add_row(const BenchRow& row, const OpPlan& plan, const BenchResults& results, bool probe,
             const BenchRow* measure, PerfFacts& perf, double& slowest) {
  const double reference = measure != nullptr ? measure->median_gbps : 0;
  std::string what = is_family_pattern(plan.bench_op) ? plan.op + " (" + row.family + ")" : plan.op;
  if (row.n != perf.n) what += fmt::format(" at n = {}", row.n);
  // The row's verdict comes from its fields; its message is only shown.
  const GradedVerdict verdict = graded_verdict(row);
  perf.wrong_results += verdict.wrong_results;
  perf.throttled_samples += row.throttled_samples + (measure ? measure->throttled_samples : 0);
  perf.throttled_figure =
      perf.throttled_figure || row.throttled_figure || (measure && measure->throttled_figure);
  if (!row.error_message.empty())
    perf.lab_text += (perf.lab_text.empty() ? "" : "\n") + row.error_message;
  if (!verdict.passed) {
    perf.problem = (row.family.empty() ? plan.bench_op : row.family) + ": " + verdict.reason;
    perf.clocks_disagree = verdict.clocks_disagree;
    return false;
  }
  // The stream read is the same kernel whatever the family: the benchmark runs it once.
  double stream = 0, cub = 0;
  for (const BenchRow& other : results.rows) {
    if (other.n != row.n) continue;
    if (other.impl == "stream_read" && (stream == 0 || other.family == row.family))
      stream = other.median_gbps;
    if (other.impl == "cub" && (other.family.empty() || other.family == row.family))
      cub = other.median_gbps;
  }
  double ceiling = probe ? perf.probe_gbps : stream;
  if (ceiling <= 0) ceiling = probe ? stream : perf.probe_gbps;
  if (ceiling <= 0) {
    perf.problem = "the benchmark measured no ceiling";
    return false;
  }
  // Faster than the GPU can read is not a fast lab: the work was not done, or not timed.
  const double tolerance = 1.10;  // noise between the probe's run and the lab's
  if ((perf.probe_gbps > 0 && row.median_gbps > tolerance * perf.probe_gbps) ||
      (results.theoretical_gbps > 0 && row.median_gbps > results.theoretical_gbps)) {
    perf.problem = fmt::format(
        "physically impossible: {} read at {} GB/s, above what this GPU can read (ceiling "
        "probe {} GB/s, theoretical peak {} GB/s); no performance points",
        what, fixed(row.median_gbps, 1), fixed(perf.probe_gbps, 1),
        fixed(results.theoretical_gbps, 1));
    perf.impossible = true;
    return false;
  }
  const ChargedCall charged =
      measure != nullptr && measure->median_us > 0 && row.median_us > 0
          ? fraction_of_measure(row, *measure)
          : ChargedCall{row.median_gbps / (reference > 0 ? reference : ceiling)};
  const double fraction = charged.fraction;
  perf.detail += fmt::format("{}{} {} ({} GB/s", perf.detail.empty() ? "" : ", ", what,
                             fraction_text(fraction), fixed(row.median_gbps, 1));
  if (charged.request_us > 0)
    perf.detail += fmt::format("; {} of its {} us a call the request's own, left out",
                               fixed(charged.request_us, 1), fixed(row.median_us, 1));
  perf.detail += ")";
  const std::string length =
      is_family_pattern(plan.bench_op)
          ? row.family.substr(std::min(row.family.size(), plan.bench_op.size() - 1))
          : std::string();
  perf.rows.push_back({plan.op, length, row.n, fraction, row.median_gbps});
  if (slowest < 0 || fraction < slowest) {
    slowest = fraction;
    perf.op = what;
    perf.slowest_n = row.n;
    perf.fraction = fraction;
    perf.gbps = row.median_gbps;
    perf.median_us = row.median_us;
    perf.request_us = charged.request_us;
    perf.ceiling_gbps = ceiling;
    perf.stream_read_gbps = stream;
    perf.cub_gbps = cub;
    perf.reference_gbps = reference;
    perf.noise = row.noise;
    perf.reference_noise = measure != nullptr ? measure->noise : 0;
  }
  return true;
}

/// Whether every row of \p target has its course reference in \p results (ran and passed), so
/// that the lab is judged against it; where one is missing the probe judges the whole lab.
bool references_ran(const BenchTarget& target, const BuildManifest& labs,
                    const BenchResults& results) {
  for (const OpPlan& plan : target.plans) {
    if (plan.bench_op.empty()) continue;
    const std::string row_name = labs.bench_name(target.lab, plan.op);
    for (const std::size_t n : target.sizes)
      for (const BenchRow* row : plan_rows(plan, row_name, results, n))
        if (measure_row(*row, row_name, results) == nullptr) return false;
  }
  return true;
}

/// The lab's facts from one benchmark process: its rows (named as \p labs says) beside the same
/// run's ceiling and CUB.
PerfFacts perf_from_results(const BenchTarget& target, const BuildManifest& labs,
                            const ProcessResult& r, const BenchResults& results,
                            const Rubric& rubric, const fs::path& log, std::uint64_t key) {
  PerfFacts perf;
  const std::vector<std::size_t> sizes =
      target.sizes.empty() ? std::vector<std::size_t>{timed_size(rubric, key)} : target.sizes;
  perf.n = sizes.front();
  perf.log = log.string();
  // The benchmark's exit status says it found no GPU: no sentence of its output is read.
  if (r.exited() && r.exit_code == bench::kNoGpuExitCode && results.rows.empty()) {
    perf.problem = "no CUDA device";
    return perf;
  }
  perf.probe_gbps = results.ceiling_gbps;
  const bool probe = rubric.performance.ceiling == "probe";
  const LabRubric* lr = rubric.find(target.lab);
  const bool wants_measure = lr != nullptr && lr->timed_measure();
  const bool timed = wants_measure && references_ran(target, labs, results);
  perf.measure = timed ? lr->measure : (probe ? "probe" : "stream_read");
  if (wants_measure && !timed)
    perf.measure_note = target.references
                            ? "its measure did not run in this benchmark"
                            : "this copy of the course has no reference solution for this lab";
  double slowest = -1;
  for (const OpPlan& plan : target.plans) {
    if (plan.bench_op.empty()) continue;
    const std::string row_name = labs.bench_name(target.lab, plan.op);
    // Where the measure did not run, the lab's first size alone (beside the probe, which ran at
    // the rubric's size).
    for (const std::size_t n : timed ? sizes : std::vector<std::size_t>{perf.n}) {
      const std::vector<const BenchRow*> matching = plan_rows(plan, row_name, results, n);
      if (matching.empty()) {
        perf.problem = missing_row_problem(row_name, r, results);
        perf.unattributed = true;
        return perf;
      }
      for (const BenchRow* row : matching) {
        const BenchRow* measure = timed ? measure_row(*row, row_name, results) : nullptr;
        if (!add_row(*row, plan, results, probe, measure, perf, slowest)) return perf;
      }
    }
  }
  if (perf.slowest_n != 0) perf.n = perf.slowest_n;
  if (slowest < 0) {
    perf.problem = "no benchmark for this lab's operations";
    return perf;
  }
  perf.ran = true;
  return perf;
}

/// What the benchmark is told (its launch spec) of a run of key \p key, its labs' runner behind
/// \p isolation's sandbox; the labs, their measures and the sizes are the caller's to add.
launch::LaunchSpec bench_launch(std::uint64_t key, const Isolation& isolation) {
  launch::LaunchSpec launch;
  launch.child = launch::Child::kBench;
  launch.seed = key;
  launch.runner.prefix = isolation.runner_prefix;
  launch.runner.call_timeout_s = 60;
  return launch;
}

}  // namespace

std::map<std::string, PerfFacts> run_benchmarks(
    const BuildManifest& course, const BuildManifest& labs, const std::vector<BenchTarget>& targets,
    const Rubric& rubric, std::uint64_t key, const fs::path& log_dir, const Isolation& isolation,
    const std::string& cuda_device, ProcessCounts* counts) {
  std::error_code ec;
  fs::create_directories(log_dir, ec);
  const std::size_t n = timed_size(rubric, key);
  std::string families, names, first_family, extra_rows;
  launch::LaunchSpec launch = bench_launch(key, isolation);  // the labs and sizes added below
  std::vector<std::size_t>& sizes = launch.sizes;
  sizes = {n};
  std::vector<BenchTarget> timed = targets;
  for (BenchTarget& target : timed) {
    const LabRubric* lr = rubric.find(target.lab);
    target.references = lr != nullptr && lr->timed_measure();
    for (const OpPlan& plan : target.plans)
      target.references =
          target.references &&
          (plan.bench_op.empty() || !measure_library(rubric, course, target.lab, plan.op).empty());
    target.sizes = lab_sizes(rubric, target.lab, key, target.references);
    std::string rows;  // this lab's rows and their measures'
    for (const OpPlan& plan : target.plans) {
      if (plan.bench_op.empty()) continue;
      // The rows' name is the build's (course-manifest.json), as the benchmark's labs.txt has it.
      const std::string row_name = labs.bench_name(target.lab, plan.op);
      launch.graded.push_back({row_name, plan.entry, labs.library(target.lab, plan.op).string()});
      rows += "|" + row_name;
      if (target.references) {
        launch.references.push_back(
            {reference_row_name(row_name), plan.entry,
             measure_library(rubric, course, target.lab, plan.op).string()});
        rows += "|" + reference_row_name(row_name);
      }
      if (first_family.empty()) first_family = family_regex(plan.bench_op);
      const std::string family = family_regex(plan.bench_op);
      if (!contains("|" + families + "|", "|" + family + "|"))
        families += (families.empty() ? "" : "|") + family;
    }
    if (target.sizes.front() == n) names += rows;
    // The lab's own size and its launch-bound one: this lab's rows only (and their measures),
    // nobody else's.
    for (const std::size_t size : target.sizes) {
      if (size == n || rows.empty() || !target.references) continue;
      extra_rows += fmt::format("|^[a-z_0-9]+/({})/{}(/|$)", rows.substr(1), size);
      if (std::find(sizes.begin(), sizes.end(), size) == sizes.end()) sizes.push_back(size);
    }
  }
  std::map<std::string, PerfFacts> perf;
  if (families.empty()) {
    for (const BenchTarget& target : timed)
      perf[target.lab].problem = "no benchmark for this lab's operations";
    return perf;
  }
  const fs::path json_path = log_dir / "bench.json";
  fs::remove(json_path, ec);
  // Beside its logs, in the grader's output, which no lab's sandbox shows.
  const fs::path launch_path = log_dir / "bench.launch.json";
  launch::write_launch_spec(launch_path.string(), launch);
  ProcessSpec spec;
  spec.argv = {course.bench.string(),
               fmt::format("--benchmark_filter=^({})/(cub{})/{}(/|$)|^{}/stream_read/{}(/|$){}",
                           families, names, n, first_family, n, extra_rows),
               "--benchmark_out=" + json_path.string(), "--benchmark_out_format=json"};
  spec.env = {{launch::kLaunchSpecVariable, launch_path.string()}};
  if (!cuda_device.empty()) spec.env.emplace_back("CUDA_VISIBLE_DEVICES", cuda_device);
  spec.timeout_s = rubric.limits.bench_timeout_s;
  spec.output_cap = rubric.limits.output_cap_bytes;
  spec.log_file = log_dir / "bench.log";
  const ProcessResult r = run_process(spec);
  const BenchResults results = parse_bench_json(read_file(json_path));
  if (counts != nullptr && r.started) {
    ++counts->benchmarks;
    counts->benchmark_lab_processes += results.lab_process_starts;
  }
  for (const BenchTarget& target : timed)
    perf[target.lab] = perf_from_results(target, labs, r, results, rubric, spec.log_file, key);
  return perf;
}

PerfFacts run_benchmark(const BuildManifest& course, const BuildManifest& labs,
                        const std::string& lab, const std::vector<OpPlan>& plans,
                        const Rubric& rubric, std::uint64_t key, const fs::path& log_dir,
                        const Isolation& isolation, const std::string& cuda_device,
                        ProcessCounts* counts) {
  return run_benchmarks(course, labs, {BenchTarget{lab, plans}}, rubric, key, log_dir, isolation,
                        cuda_device, counts)[lab];
}

}  // namespace reduce::grade
