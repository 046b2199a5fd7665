#include <reduce_grade/base/util.hpp>
#include <reduce_grade/scoring/score.hpp>
#include <reduce_vocabulary/channels.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace reduce::grade {
namespace {

/// How the checkers' skip for a GPU too small for a test reads (memory_shortfall(),
/// autograder/tests/gpu_test.cpp).
const char* const kMemorySkip = "too little memory";

struct SuiteTotals {
  int passed = 0, failed = 0, skipped = 0;
  bool ran = false, no_gpu = false, not_implemented = false;
  std::vector<std::string> problems;
  std::vector<std::string> failures;
  std::vector<std::string> unverified;  // the tests the checker skipped: none ran on this GPU
  bool unverified_for_memory = true;    // every one of them for want of memory
};

SuiteTotals totals(const std::vector<SuiteRun>& suites) {
  SuiteTotals t;
  for (const SuiteRun& s : suites) {
    t.passed += s.passed();
    t.failed += s.failed();
    t.skipped += s.skipped();
    for (const TestOutcome& o : s.tests) {
      if (o.result != TestResult::kSkipped) continue;
      t.unverified.push_back(o.name);
      t.unverified_for_memory = t.unverified_for_memory && contains(o.message, kMemorySkip);
    }
    t.ran = t.ran || s.ran;
    t.no_gpu = t.no_gpu || s.no_gpu;
    t.not_implemented = t.not_implemented || s.not_implemented;
    if (!s.problem.empty()) t.problems.push_back(s.problem);
    for (const std::string& f : s.failure_summaries(5)) t.failures.push_back(f);
  }
  return t;
}

/// "2 tests not verified on this GPU (it has too little memory)", then with \p names ": A, B"
/// (the first few of them).
std::string unverified_text(const SuiteTotals& t, bool names) {
  const std::size_t count = t.unverified.size();
  std::string text =
      fmt::format("{} test{} not verified on this GPU{}", count, count == 1 ? "" : "s",
                  t.unverified_for_memory ? " (it has too little memory)" : "");
  if (!names || count == 0) return text;
  constexpr std::size_t kNamed = 6;
  const std::vector<std::string> named(t.unverified.begin(),
                                       t.unverified.begin() + std::min(count, kNamed));
  text += ": " + join(named, ", ");
  if (count > kNamed) text += fmt::format(" and {} more", count - kNamed);
  return text;
}

std::string first_line(const std::string& text) {
  const auto nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

/// What the lab's figures say of the GPU's clocks, for its performance line (empty: nothing).
std::string clocks_note(const PerfFacts& perf) {
  if (perf.throttled_figure)
    return " (the GPU slowed its clocks, a power or thermal limit, during most samples of a row: "
           "its figure may be low for want of clocks, not code; grade again on an idle, cooler "
           "GPU)";
  if (perf.throttled_samples > 0)
    return fmt::format(" ({} samples taken while the GPU slowed its clocks were left out)",
                       perf.throttled_samples);
  return "";
}

/// A timed row's length in the report's words: "rows of 32", "rows of 2^20" (a power of two from
/// 2^16 up), or "n = 3457" for a row of no segment length.
std::string length_label(const TimedRow& row) {
  if (row.length.empty()) return fmt::format("n = {}", row.n);
  const unsigned long long length = std::strtoull(row.length.c_str(), nullptr, 10);
  if (length >= (1ull << 16) && (length & (length - 1)) == 0) {
    int power = 0;
    while ((length >> power) > 1) ++power;
    return fmt::format("rows of 2^{}", power);
  }
  return "rows of " + row.length;
}

}  // namespace

const char* item_key(Item item) {
  switch (item) {
    case Item::kBuild:
      return "build";
    case Item::kLibrary:
      return "library";
    case Item::kTests:
      return "tests";
    case Item::kHidden:
      return "hidden";
    case Item::kSanitizer:
      return "sanitizer";
    case Item::kPerformance:
      return "performance";
  }
  return "";
}

const char* item_name(Item item) {
  switch (item) {
    case Item::kBuild:
      return "build";
    case Item::kLibrary:
      return "library check";
    case Item::kTests:
      return "public tests";
    case Item::kHidden:
      return "hidden tests";
    case Item::kSanitizer:
      return "sanitizer";
    case Item::kPerformance:
      return "performance";
  }
  return "";
}

const char* lab_status_name(LabStatus status) {
  switch (status) {
    case LabStatus::kGraded:
      return "graded";
    case LabStatus::kMissing:
      return "missing";
    case LabStatus::kBuildFailed:
      return "build failed";
    case LabStatus::kForbiddenLibrary:
      return "forbidden library";
    case LabStatus::kStub:
      return "stub";
    case LabStatus::kBuildOnly:
      return "build only (no GPU)";
  }
  return "";
}

double round_points(double points) {
  return std::round(points * 100.0) / 100.0;
}

double proportional_points(int passed, int counted, double max_points) {
  if (counted <= 0 || passed <= 0) return 0;
  return max_points * static_cast<double>(std::min(passed, counted)) / counted;
}

namespace {

/// Scores one lab item by item; each method is one part of the grade.
class LabScorer {
 public:
  LabScorer(const LabFacts& f, const LabRubric& lr) : f_(f), lr_(lr), p_(lr.points) {}

  LabScore score() {
    if (!f_.present) {
      s_.status = LabStatus::kMissing;
      const std::string why = fmt::format("missing: {} is not in the submission", f_.missing_what);
      zero_all(why, why);
      s_.messages.push_back(why);
    } else if (!f_.build.ok) {
      build_failed();
    } else if (!f_.library.forbidden.empty()) {
      forbidden_library();
    } else {
      graded();
    }
    for (const ScoredItem& item : s_.items) {
      s_.score += item.score;
      s_.max_score += item.max_score;
    }
    s_.score = round_points(s_.score);
    s_.max_score = round_points(s_.max_score);
    return s_;
  }

 private:
  ScoredItem& add(Item part, double score, double max, ItemStatus status,
                  const std::string& output) {
    ScoredItem item;
    item.key = item_key(part);
    item.name = item_name(part);
    item.max_score = round_points(max);
    item.score = round_points(std::clamp(score, 0.0, max));
    item.status = status;
    item.output = output;
    s_.items.push_back(item);
    return s_.items.back();
  }

  void zero_all(const std::string& why, const std::string& build_text) {
    add(Item::kBuild, 0, p_.build, ItemStatus::kFailed, build_text);
    add(Item::kLibrary, 0, 0,
        f_.library.forbidden.empty() ? ItemStatus::kSkipped : ItemStatus::kFailed,
        f_.library.forbidden.empty() ? "not run: " + why : f_.library.describe());
    add(Item::kTests, 0, p_.tests, ItemStatus::kFailed, "not run: " + why);
    add(Item::kHidden, 0, p_.hidden, ItemStatus::kFailed, "not run: " + why);
    add(Item::kSanitizer, 0, p_.sanitizer, ItemStatus::kFailed, "not run: " + why);
    add(Item::kPerformance, 0, p_.performance, ItemStatus::kFailed, "not run: " + why);
  }

  void build_failed() {
    s_.status = LabStatus::kBuildFailed;
    std::string text, errors = f_.build.errors;
    static const std::string kRefused = "the lab folder was refused: ";
    switch (f_.build.stage) {
      case BuildStage::kStaging:
        // The headline (the gradebook's reason) names what was refused: a file too large is not
        // a link.
        if (errors.rfind(kRefused, 0) == 0) {
          text = "build failed: the lab folder was refused before the build: " +
                 errors.substr(kRefused.size());
          errors.clear();
        } else {
          text =
              "build failed: the lab folder was refused before the build (links, special files "
              "and files outside the lab folder are not graded)";
        }
        break;
      case BuildStage::kConfigure:
        text = "build failed: the course could not be configured (a grading problem, not yours)";
        break;
      case BuildStage::kLink:
        text =
            "build failed: the lab compiles, but its library does not link (did a function "
            "signature of the lab contract change?)";
        break;
      case BuildStage::kCompile:
      case BuildStage::kNone:
        text = f_.build.timed_out ? "build failed: the build timed out"
                                  : "build failed: the lab does not compile";
        break;
    }
    if (!errors.empty()) text += "\n" + errors;
    zero_all("the lab did not build", text);
    s_.messages.push_back(first_line(text));
  }

  void forbidden_library() {
    s_.status = LabStatus::kForbiddenLibrary;
    const std::string why = f_.library.describe() +
                            " - library reductions (CUB, Thrust, cuBLAS, cuDNN...) are not "
                            "allowed inside a lab: 0 points for the whole lab";
    add(Item::kBuild, 0, p_.build, ItemStatus::kFailed, why);
    add(Item::kLibrary, 0, 0, ItemStatus::kFailed, why);
    for (const auto& [part, max] :
         {std::pair{Item::kTests, p_.tests}, std::pair{Item::kHidden, p_.hidden},
          std::pair{Item::kSanitizer, p_.sanitizer}, std::pair{Item::kPerformance, p_.performance}})
      add(part, 0, max, ItemStatus::kFailed, "0 points: forbidden library reduction");
    s_.messages.push_back(why);
  }

  /// A lab that built: build and library items, then the GPU's parts.
  void graded() {
    pub_ = totals(f_.tests);
    hid_ = totals(f_.hidden);
    const bool stub = pub_.not_implemented || hid_.not_implemented || (!f_.gpu && f_.library.stub);
    if (stub) {
      add(Item::kBuild, 0, p_.build, ItemStatus::kFailed,
          "not implemented: the lab is still the stub (it throws reduce::NotImplemented); "
          "complete the TODOs in its .cu file");
      s_.messages.push_back("not implemented: the lab is still the stub");
    } else {
      add(Item::kBuild, p_.build, p_.build, ItemStatus::kPassed,
          "builds and links with the course's tests");
    }
    add(Item::kLibrary, 0, 0, ItemStatus::kPassed,
        f_.library.describe() +
            (f_.library.problem.empty() ? "" : " (" + f_.library.problem + ")"));
    if (!f_.gpu) {
      s_.status = LabStatus::kBuildOnly;
      const std::string why =
          "needs a GPU: not run (no CUDA device on this machine); "
          "correctness and timing are graded on a GPU";
      add(Item::kTests, 0, p_.tests, ItemStatus::kSkipped, why);
      add(Item::kHidden, 0, p_.hidden, ItemStatus::kSkipped, why);
      add(Item::kSanitizer, 0, p_.sanitizer, ItemStatus::kSkipped, why);
      add(Item::kPerformance, 0, p_.performance, ItemStatus::kSkipped, why);
      return;
    }
    s_.status = stub ? LabStatus::kStub : LabStatus::kGraded;
    public_tests();
    hidden_tests();
    sanitizer();
    performance();
  }

  void public_tests() {
    const int counted = pub_.passed + pub_.failed;
    std::string out;
    if (f_.tests.empty() && f_.tests_step.ran()) {
      out = "the course has no public tests for this lab's operations";
    } else if (!f_.tests_step.ran()) {
      out = "not run: " + f_.tests_step.reason;
    } else {
      out = fmt::format("passed {} of {} public tests", pub_.passed, counted);
      if (pub_.skipped > 0) out += "; not counted: " + unverified_text(pub_, true);
      if (!pub_.problems.empty()) out += "\n" + join(pub_.problems, "\n");
      if (!pub_.failures.empty()) out += "\nfailed:\n" + join(pub_.failures, "\n");
    }
    add(Item::kTests, proportional_points(pub_.passed, counted, p_.tests), p_.tests,
        counted > 0 && pub_.failed == 0 ? ItemStatus::kPassed : ItemStatus::kFailed, out);
    if (pub_.failed > 0 || counted == 0)
      s_.messages.push_back("public tests: " + first_line(out) +
                            (pub_.problems.empty() ? "" : "; " + first_line(pub_.problems[0])));
    else if (pub_.skipped > 0)  // a full grade, but not for everything the tests check
      s_.messages.push_back("public tests: " + unverified_text(pub_, true));
  }

  /// The count is visible, the details only after publication.
  void hidden_tests() {
    if (!f_.hidden_exists) {
      add(Item::kHidden, 0, 0, ItemStatus::kSkipped, "the course has no hidden tests for this lab");
      return;
    }
    const int counted = hid_.passed + hid_.failed;
    std::string out, details;
    if (!f_.hidden_step.ran()) {
      out = "not run: " + f_.hidden_step.reason;
    } else {
      out = fmt::format("passed {} of {} hidden tests", hid_.passed, counted);
      if (hid_.skipped > 0) {  // their names are details, published later
        out += "; not counted: " + unverified_text(hid_, false);
        details += "not verified on this GPU: " + join(hid_.unverified, ", ") + "\n";
      }
      if (!hid_.problems.empty()) details += join(hid_.problems, "\n") + "\n";
      if (!hid_.failures.empty()) details += "failed:\n" + join(hid_.failures, "\n");
    }
    ScoredItem& item =
        add(Item::kHidden, proportional_points(hid_.passed, counted, p_.hidden), p_.hidden,
            counted > 0 && hid_.failed == 0 ? ItemStatus::kPassed : ItemStatus::kFailed, out);
    item.hidden_details = trim(details);
    if (hid_.failed > 0 || counted == 0)
      s_.messages.push_back("hidden tests: " + first_line(out));
    else if (hid_.skipped > 0)
      s_.messages.push_back("hidden tests: " + unverified_text(hid_, false));
  }

  /// One equal share per tool; a tool earns it when every run of it (one per tested operation)
  /// was clean with its tests passing.
  void sanitizer() {
    if (!f_.sanitizer_step.ran() || f_.sanitizer.empty()) {
      const std::string why =
          f_.sanitizer_step.ran() ? "no sanitizer tools configured" : f_.sanitizer_step.reason;
      add(Item::kSanitizer, 0, p_.sanitizer, ItemStatus::kFailed, "not run: " + why);
      s_.messages.push_back("sanitizer: not run: " + why);
      return;
    }
    std::vector<std::string> tools;
    for (const SanitizerRun& run : f_.sanitizer)
      if (std::find(tools.begin(), tools.end(), run.tool) == tools.end()) tools.push_back(run.tool);
    const double share = p_.sanitizer / static_cast<double>(tools.size());
    double earned = 0;
    std::string out;
    bool all_clean = true;
    for (const std::string& tool : tools) {
      bool clean = true;
      for (const SanitizerRun& run : f_.sanitizer) {
        if (run.tool != tool) continue;
        clean = clean && run.clean();
        out += (out.empty() ? "" : "\n") + run.describe() + (run.clean() ? " - clean" : "");
        if (!run.clean()) {
          s_.messages.push_back("sanitizer: " + run.describe());
          if (!run.excerpt.empty()) out += "\n" + clip(run.excerpt, 12, 2500);
        }
      }
      if (clean) earned += share;
      all_clean = all_clean && clean;
    }
    if (!all_clean &&
        std::any_of(f_.sanitizer.begin(), f_.sanitizer.end(), [](const SanitizerRun& r) {
          return r.tool == "racecheck" && r.ran && r.summary.hazards > 0;
        }))
      out +=
          "\nracecheck hazards are data races on shared memory: a missing __syncthreads() "
          "between tree steps, or warp-synchronous code without __syncwarp()";
    add(Item::kSanitizer, earned, p_.sanitizer,
        all_clean ? ItemStatus::kPassed : ItemStatus::kFailed, out);
  }

  /// Why the lab earns no performance points whatever its speed (empty: it may earn them).
  std::string performance_gate() const {
    const int counted = pub_.passed + pub_.failed;
    const int hcounted = hid_.passed + hid_.failed;
    if (counted == 0 || pub_.failed > 0) return "the lab fails public tests";
    if (f_.hidden_exists && (hcounted == 0 || hid_.failed > 0)) return "the lab fails hidden tests";
    // A race, or a racecheck run that did not end clean (a lab may misbehave only under the
    // sanitizer, which slows its kernels a hundredfold, so that no hazard is ever reported).
    if (lr_.races_gate_performance)
      for (const SanitizerRun& run : f_.sanitizer)
        if (run.tool == "racecheck" && !run.clean())
          return run.ran && run.summary.hazards > 0
                     ? fmt::format(
                           "racecheck found {} data race hazard(s) on shared memory; in "
                           "this lab a race costs the performance points as a failed "
                           "test does",
                           run.summary.hazards)
                     : "racecheck did not end clean (" + run.describe() +
                           "); in this lab the performance points need a clean racecheck run";
    if (!f_.perf_step.ran()) return f_.perf_step.reason;
    if (!f_.perf.ran) return "the benchmark did not run: " + f_.perf.problem;
    if (f_.perf.wrong_results > 0)
      return fmt::format("{} timed benchmark runs returned a wrong sum", f_.perf.wrong_results);
    if (!f_.perf.problem.empty()) return "the benchmark failed: " + f_.perf.problem;
    return "";
  }

  /// Correctness gates performance; then the credit curve between floor and threshold.
  void performance() {
    if (const std::string gate = performance_gate(); !gate.empty()) {
      std::string why = "0 points: " + gate;
      if (f_.perf.clocks_disagree)  // a patched timer, work off the stream, or load
        why +=
            "; the lab's clock and the grader's agree when all of the lab's work runs on the "
            "stream it is given and nothing else loads the machine: if this one was busy, grade "
            "again";
      else if (starts_with(gate, "the lab fails") || starts_with(gate, "racecheck") ||
               f_.perf.wrong_results > 0)
        why += " (correctness gates performance)";
      add(Item::kPerformance, 0, p_.performance, ItemStatus::kFailed, why);
      s_.messages.push_back("performance: 0 points: " + gate);
      return;
    }
    const PerfFacts& perf = f_.perf;
    // The rubric's threshold is of the lab's measure; against the probe instead (no reference
    // timed), the lab's probe threshold.
    const bool reference = perf.timed_measure();
    const double threshold = lr_.threshold_for(reference);
    const double floor = lr_.floor_for(reference);
    const std::string of = "of " + perf.measure_words();
    if (lr_.credit == "per_length" && !perf.rows.empty()) return per_length(threshold, floor, of);
    const double pts = performance_points(perf.fraction, threshold, floor, p_.performance);
    std::string out = fmt::format("{} GB/s at n = {} = {} {} ({} GB/s, {} in the same run); ",
                                  fixed(perf.gbps, 1), perf.n, fraction_text(perf.fraction), of,
                                  fixed(perf.measure_gbps(), 1), reference ? "timed" : "measured");
    out += fmt::format("full credit from {}, none at or below {}", fraction_text(threshold),
                       fraction_text(floor));
    if (!perf.measure_note.empty()) out += " (against the ceiling: " + perf.measure_note + ")";
    out += clocks_note(perf);
    if (contains(perf.detail, ",")) out += " [slowest of: " + perf.detail + "]";
    if (perf.fraction >= threshold) {
      out += ": full credit";
    } else if (perf.fraction <= floor) {
      out += ": below the floor, 0 points";
      s_.messages.push_back(fmt::format("performance: {} {}, below the floor {}",
                                        fraction_text(perf.fraction), of, fraction_text(floor)));
    } else {
      out += ": partial credit (linear between floor and threshold)";
      s_.messages.push_back(fmt::format("performance: {} {}, below the threshold {}",
                                        fraction_text(perf.fraction), of,
                                        fraction_text(threshold)));
    }
    add(Item::kPerformance, pts, p_.performance,
        pts >= p_.performance - 1e-9 ? ItemStatus::kPassed : ItemStatus::kFailed, out);
  }

  /// A lab credited per length: each length earns its share of the points on the curve from
  /// the slower of the lab's operations there, so a lab fast at some lengths earns those.
  void per_length(double threshold, double floor, const std::string& of) {
    const PerfFacts& perf = f_.perf;
    s_.lengths = length_credits(perf, threshold, floor, p_.performance);
    double pts = 0;
    std::vector<std::string> parts;
    for (const LengthCredit& c : s_.lengths) {
      pts += c.points;
      const bool full = c.fraction >= threshold, none = c.fraction <= floor;
      parts.push_back(fmt::format("{}: {} {} ({} GB/s), {} of {}{}", c.label, c.op,
                                  fraction_text(c.fraction), fixed(c.gbps, 1),
                                  points_text(round_points(c.points)), points_text(c.max_points),
                                  full   ? ""
                                  : none ? ", below the floor"
                                         : ", below the threshold"));
      if (!full)
        s_.messages.push_back(fmt::format(
            "performance: {}: {} {} {}, below the {} {}", c.label, c.op, fraction_text(c.fraction),
            of, none ? "floor" : "threshold", fraction_text(none ? floor : threshold)));
    }
    std::string out = fmt::format(
        "each of the {} lengths timed at n = {} earns {} of the {} points, from the slower "
        "operation there as a fraction {} ({} GB/s, {} in the same run): full credit from {}, "
        "none at or below {}, linear in between",
        s_.lengths.size(), perf.n, points_text(s_.lengths.front().max_points),
        points_text(p_.performance), of, fixed(perf.measure_gbps(), 1),
        perf.timed_measure() ? "timed" : "measured", fraction_text(threshold),
        fraction_text(floor));
    if (!perf.measure_note.empty()) out += " (against the ceiling: " + perf.measure_note + ")";
    out += clocks_note(perf);
    out += fmt::format(" [{}]: {} of {} points", join(parts, "; "), points_text(round_points(pts)),
                       points_text(p_.performance));
    add(Item::kPerformance, pts, p_.performance,
        pts >= p_.performance - 1e-9 ? ItemStatus::kPassed : ItemStatus::kFailed, out);
  }

  const LabFacts& f_;
  const LabRubric& lr_;
  const Points& p_;
  LabScore s_;
  SuiteTotals pub_, hid_;
};

}  // namespace

std::vector<LengthCredit> length_credits(const PerfFacts& perf, double threshold, double floor,
                                         double max_points) {
  std::vector<LengthCredit> credits;
  for (const TimedRow& row : perf.rows) {
    const std::string key = row.length_key();
    auto it = std::find_if(credits.begin(), credits.end(),
                           [&](const LengthCredit& c) { return c.length == key; });
    if (it == credits.end()) {
      credits.push_back({key, length_label(row), row.op, row.fraction, row.gbps, 0, 0});
    } else if (row.fraction < it->fraction) {  // the slower operation at this length counts
      it->op = row.op, it->fraction = row.fraction, it->gbps = row.gbps;
    }
  }
  // Shorter lengths first: the digits of a longer number sort after a shorter one's.
  std::sort(credits.begin(), credits.end(), [](const LengthCredit& a, const LengthCredit& b) {
    return a.length.size() != b.length.size() ? a.length.size() < b.length.size()
                                              : a.length < b.length;
  });
  for (LengthCredit& c : credits) {
    c.max_points = max_points / static_cast<double>(credits.size());
    c.points = performance_points(c.fraction, threshold, floor, c.max_points);
  }
  return credits;
}

std::string review_reason(const LabFacts& f) {
  const auto found = [](const std::string& text) {
    return contains(text, runner::kForbiddenCallMark);
  };
  for (const std::vector<SuiteRun>* runs : {&f.tests, &f.hidden})
    for (const SuiteRun& run : *runs) {
      if (found(run.problem)) return "its process made a forbidden system call (" + run.op + ")";
      for (const TestOutcome& t : run.tests)
        if (found(t.message)) return "its process made a forbidden system call in " + t.name;
    }
  for (const SanitizerRun& run : f.sanitizer)
    if (found(run.problem) || found(run.excerpt))
      return "its process made a forbidden system call under " + run.tool;
  // Every run's findings count: a rerun adds its words to the first run's (after_rerun()).
  if (found(f.perf.problem) || found(f.perf.lab_text))
    return "its process made a forbidden system call in the benchmark";
  return "";
}

LabScore score_lab(const LabFacts& f, const LabRubric& lr, const Rubric& /*rubric*/) {
  LabScore score = LabScorer(f, lr).score();
  score.review = review_reason(f);
  if (!score.review.empty())
    score.messages.insert(score.messages.begin(), "flagged for review: " + score.review);
  return score;
}

}  // namespace reduce::grade
