#include <reduce_grade/score.hpp>
#include <reduce_grade/util.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace reduce::grade {
namespace {

struct SuiteTotals {
  int passed = 0, failed = 0, skipped = 0;
  bool ran = false, no_gpu = false, not_implemented = false;
  std::vector<std::string> problems;
  std::vector<std::string> failures;
};

SuiteTotals totals(const std::vector<SuiteRun>& suites) {
  SuiteTotals t;
  for (const SuiteRun& s : suites) {
    t.passed += s.passed();
    t.failed += s.failed();
    t.skipped += s.skipped();
    t.ran = t.ran || s.ran;
    t.no_gpu = t.no_gpu || s.no_gpu;
    t.not_implemented = t.not_implemented || s.not_implemented;
    if (!s.problem.empty()) t.problems.push_back(s.problem);
    for (const std::string& f : s.failure_summaries(5)) t.failures.push_back(f);
  }
  return t;
}

std::string first_line(const std::string& text) {
  const auto nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
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

double round_points(double points) {
  return std::round(points * 100.0) / 100.0;
}

double proportional_points(int passed, int counted, double max_points) {
  if (counted <= 0 || passed <= 0) return 0;
  return max_points * static_cast<double>(std::min(passed, counted)) / counted;
}

LabScore score_lab(const LabFacts& f, const LabRubric& lr, const Rubric& rubric) {
  LabScore s;
  const Points& p = lr.points;
  auto add = [&](Item part, double score, double max, ItemStatus status,
                 const std::string& output) -> ScoredItem& {
    ScoredItem item;
    item.key = item_key(part);
    item.name = item_name(part);
    item.max_score = round_points(max);
    item.score = round_points(std::clamp(score, 0.0, max));
    item.status = status;
    item.output = output;
    s.items.push_back(item);
    return s.items.back();
  };
  auto zero_all = [&](const std::string& why, const std::string& build_text) {
    add(Item::kBuild, 0, p.build, ItemStatus::kFailed, build_text);
    add(Item::kLibrary, 0, 0,
        f.library.forbidden.empty() ? ItemStatus::kSkipped : ItemStatus::kFailed,
        f.library.forbidden.empty() ? "not run: " + why : f.library.describe());
    add(Item::kTests, 0, p.tests, ItemStatus::kFailed, "not run: " + why);
    add(Item::kHidden, 0, p.hidden, ItemStatus::kFailed, "not run: " + why);
    add(Item::kSanitizer, 0, p.sanitizer, ItemStatus::kFailed, "not run: " + why);
    add(Item::kPerformance, 0, p.performance, ItemStatus::kFailed, "not run: " + why);
  };

  if (!f.present) {
    s.status = "missing";
    const std::string why = fmt::format("missing: {} is not in the submission", f.missing_what);
    zero_all(why, why);
    s.messages.push_back(why);
  } else if (!f.build.ok) {
    s.status = "build failed";
    std::string text;
    if (f.build.stage == "configure") {
      text = "build failed: the course could not be configured (a grading problem, not yours)";
    } else if (f.build.timed_out) {
      text = "build failed: the build timed out";
    } else if (f.build.stage == "tests") {
      text =
          "build failed: the lab compiles, but the tests do not link with it (did a function "
          "signature of the lab contract change?)";
    } else {
      text = "build failed: the lab does not compile";
    }
    if (!f.build.errors.empty()) text += "\n" + f.build.errors;
    zero_all("the lab did not build", text);
    s.messages.push_back(first_line(text));
  } else if (!f.library.forbidden.empty()) {
    s.status = "forbidden library";
    const std::string why = f.library.describe() +
                            " - library reductions (CUB, Thrust, cuBLAS, cuDNN...) are not "
                            "allowed inside a lab: 0 points for the whole lab";
    add(Item::kBuild, 0, p.build, ItemStatus::kFailed, why);
    add(Item::kLibrary, 0, 0, ItemStatus::kFailed, why);
    for (const auto& [part, max] :
         {std::pair{Item::kTests, p.tests}, std::pair{Item::kHidden, p.hidden},
          std::pair{Item::kSanitizer, p.sanitizer}, std::pair{Item::kPerformance, p.performance}})
      add(part, 0, max, ItemStatus::kFailed, "0 points: forbidden library reduction");
    s.messages.push_back(why);
  } else {
    const SuiteTotals pub = totals(f.tests);
    const SuiteTotals hid = totals(f.hidden);
    const bool stub = pub.not_implemented || hid.not_implemented || (!f.gpu && f.library.stub);
    if (stub) {
      add(Item::kBuild, 0, p.build, ItemStatus::kFailed,
          "not implemented: the lab is still the stub (it throws reduce::NotImplemented); "
          "complete the TODOs in its .cu file");
      s.messages.push_back("not implemented: the lab is still the stub");
    } else {
      add(Item::kBuild, p.build, p.build, ItemStatus::kPassed,
          "builds and links with the course's tests");
    }
    add(Item::kLibrary, 0, 0, ItemStatus::kPassed,
        f.library.describe() + (f.library.problem.empty() ? "" : " (" + f.library.problem + ")"));

    if (!f.gpu) {
      s.status = "build only (no GPU)";
      const std::string why =
          "needs a GPU: not run (no CUDA device on this machine); "
          "correctness and timing are graded on a GPU";
      add(Item::kTests, 0, p.tests, ItemStatus::kSkipped, why);
      add(Item::kHidden, 0, p.hidden, ItemStatus::kSkipped, why);
      add(Item::kSanitizer, 0, p.sanitizer, ItemStatus::kSkipped, why);
      add(Item::kPerformance, 0, p.performance, ItemStatus::kSkipped, why);
    } else {
      s.status = stub ? "stub" : "graded";
      // ---- public tests
      const int counted = pub.passed + pub.failed;
      std::string out;
      if (f.tests.empty() && f.tests_skipped.empty()) {
        out = "the course has no public tests for this lab's operations";
      } else if (!f.tests_skipped.empty()) {
        out = "not run: " + f.tests_skipped;
      } else {
        out = fmt::format("passed {} of {} public tests", pub.passed, counted);
        if (pub.skipped > 0)
          out += fmt::format(" ({} skipped by the suite, not counted)", pub.skipped);
        if (!pub.problems.empty()) out += "\n" + join(pub.problems, "\n");
        if (!pub.failures.empty()) out += "\nfailed:\n" + join(pub.failures, "\n");
      }
      add(Item::kTests, proportional_points(pub.passed, counted, p.tests), p.tests,
          counted > 0 && pub.failed == 0 ? ItemStatus::kPassed : ItemStatus::kFailed, out);
      if (pub.failed > 0 || counted == 0)
        s.messages.push_back("public tests: " + first_line(out) +
                             (pub.problems.empty() ? "" : "; " + first_line(pub.problems[0])));

      // ---- hidden tests (the count is visible, the details only after publication)
      const int hcounted = hid.passed + hid.failed;
      if (!f.hidden_exists) {
        add(Item::kHidden, 0, 0, ItemStatus::kSkipped,
            "the course has no hidden tests for this lab");
      } else {
        std::string hout, details;
        if (!f.hidden_skipped.empty()) {
          hout = "not run: " + f.hidden_skipped;
        } else {
          hout = fmt::format("passed {} of {} hidden tests", hid.passed, hcounted);
          if (hid.skipped > 0) hout += fmt::format(" ({} skipped, not counted)", hid.skipped);
          if (!hid.problems.empty()) details += join(hid.problems, "\n") + "\n";
          if (!hid.failures.empty()) details += "failed:\n" + join(hid.failures, "\n");
        }
        ScoredItem& item =
            add(Item::kHidden, proportional_points(hid.passed, hcounted, p.hidden), p.hidden,
                hcounted > 0 && hid.failed == 0 ? ItemStatus::kPassed : ItemStatus::kFailed, hout);
        item.hidden_details = trim(details);
        if (hid.failed > 0 || hcounted == 0)
          s.messages.push_back("hidden tests: " + first_line(hout));
      }

      // ---- sanitizer: an equal share per tool that ran clean with its tests passing
      if (!f.sanitizer_skipped.empty() || f.sanitizer.empty()) {
        const std::string why =
            f.sanitizer_skipped.empty() ? "no sanitizer tools configured" : f.sanitizer_skipped;
        add(Item::kSanitizer, 0, p.sanitizer, ItemStatus::kFailed, "not run: " + why);
        s.messages.push_back("sanitizer: not run: " + why);
      } else {
        // One equal share per tool; a tool earns it when every run of it (one per tested
        // operation) was clean.
        std::vector<std::string> tools;
        for (const SanitizerRun& run : f.sanitizer)
          if (std::find(tools.begin(), tools.end(), run.tool) == tools.end())
            tools.push_back(run.tool);
        const double share = p.sanitizer / static_cast<double>(tools.size());
        double earned = 0;
        std::string sout;
        bool all_clean = true;
        for (const std::string& tool : tools) {
          bool clean = true;
          for (const SanitizerRun& run : f.sanitizer) {
            if (run.tool != tool) continue;
            clean = clean && run.clean();
            sout += (sout.empty() ? "" : "\n") + run.describe() + (run.clean() ? " - clean" : "");
            if (!run.clean()) {
              s.messages.push_back("sanitizer: " + run.describe());
              if (!run.excerpt.empty()) sout += "\n" + clip(run.excerpt, 12, 2500);
            }
          }
          if (clean) earned += share;
          all_clean = all_clean && clean;
        }
        if (!all_clean &&
            std::any_of(f.sanitizer.begin(), f.sanitizer.end(), [](const SanitizerRun& r) {
              return r.tool == "racecheck" && r.ran && r.summary.hazards > 0;
            }))
          sout +=
              "\nracecheck hazards are data races on shared memory: a missing __syncthreads() "
              "between tree steps, or warp-synchronous code without __syncwarp()";
        add(Item::kSanitizer, earned, p.sanitizer,
            all_clean ? ItemStatus::kPassed : ItemStatus::kFailed, sout);
      }

      // ---- performance, gated by correctness
      std::string gate;
      if (counted == 0 || pub.failed > 0)
        gate = "the lab fails public tests";
      else if (f.hidden_exists && (hcounted == 0 || hid.failed > 0))
        gate = "the lab fails hidden tests";
      else if (!f.perf_skipped.empty())
        gate = f.perf_skipped;
      else if (!f.perf.ran)
        gate = "the benchmark did not run: " + f.perf.problem;
      else if (f.perf.wrong_results > 0)
        gate = fmt::format("{} timed benchmark runs returned a wrong sum", f.perf.wrong_results);
      else if (!f.perf.problem.empty())
        gate = "the benchmark failed: " + f.perf.problem;
      if (!gate.empty()) {
        add(Item::kPerformance, 0, p.performance, ItemStatus::kFailed,
            "0 points: " + gate + " (correctness gates performance)");
        s.messages.push_back("performance: 0 points: " + gate);
      } else {
        const double pts =
            performance_points(f.perf.fraction, lr.threshold, lr.floor, p.performance);
        std::string pout = fmt::format(
            "{} GB/s at n = {} = {} of the ceiling ({} GB/s measured in the same run); "
            "full credit from {}, none at or below {}",
            fixed(f.perf.gbps, 1), f.perf.n, fraction_text(f.perf.fraction),
            fixed(f.perf.ceiling_gbps, 1), fraction_text(lr.threshold), fraction_text(lr.floor));
        if (contains(f.perf.detail, ",")) pout += " [slowest of: " + f.perf.detail + "]";
        if (f.perf.fraction >= lr.threshold) {
          pout += ": full credit";
        } else if (f.perf.fraction <= lr.floor) {
          pout += ": below the floor, 0 points";
          s.messages.push_back(fmt::format("performance: {} of the ceiling, below the floor {}",
                                           fraction_text(f.perf.fraction),
                                           fraction_text(lr.floor)));
        } else {
          pout += ": partial credit (linear between floor and threshold)";
          s.messages.push_back(fmt::format("performance: {} of the ceiling, below the threshold {}",
                                           fraction_text(f.perf.fraction),
                                           fraction_text(lr.threshold)));
        }
        add(Item::kPerformance, pts, p.performance,
            pts >= p.performance - 1e-9 ? ItemStatus::kPassed : ItemStatus::kFailed, pout);
      }
    }
  }
  (void)rubric;
  for (const ScoredItem& item : s.items) {
    s.score += item.score;
    s.max_score += item.max_score;
  }
  s.score = round_points(s.score);
  s.max_score = round_points(s.max_score);
  return s;
}

}  // namespace reduce::grade
