#include <reduce_grade/base/bench_results.hpp>
#include <reduce_grade/base/parse.hpp>
#include <reduce_grade/base/util.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

namespace reduce::grade {
namespace {

/// A number of the benchmark's JSON (a JSON number or a numeric string): finite and not
/// negative, else 0. Times, bandwidths and counts are never negative; 1e999 or "nan" is no
/// measurement.
double number_of(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) return 0;
  std::optional<double> value;
  if (it->is_number()) value = it->get<double>();
  if (it->is_string()) value = parse_number(trim(it->get<std::string>()));
  return value && std::isfinite(*value) && *value > 0 ? *value : 0;
}

bool truthy(const nlohmann::json& object, const char* key) {
  if (!object.contains(key)) return false;
  const auto& v = object[key];
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    return !s.empty() && s != "false" && s != "0" && s != "NotSkipped";
  }
  return false;
}

std::string string_of(const nlohmann::json& object, const char* key) {
  if (!object.contains(key) || !object[key].is_string()) return {};
  return object[key].get<std::string>();
}

/// A verdict field that is a whole number in [0, \p end): a JSON number (Google Benchmark
/// writes counters as numbers; a string is no verdict), else unset.
std::optional<double> whole_number(const nlohmann::json& object, const char* key, double end) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  if (!std::isfinite(value) || value < 0 || value >= end || value != std::floor(value))
    return std::nullopt;
  return value;
}

VerdictFields verdict_fields(const nlohmann::json& row) {
  constexpr double kMostCalls = 1e15;  // more than any row makes, and exact in a double
  VerdictFields fields;
  if (const auto code = whole_number(row, bench::kFailure, bench::kRowFailureEnd))
    fields.failure = static_cast<bench::RowFailure>(static_cast<int>(*code));
  fields.wrong_results = whole_number(row, bench::kWrongResults, kMostCalls);
  fields.warmup_wrong = whole_number(row, bench::kWarmupWrong, kMostCalls);
  if (const auto agree = whole_number(row, bench::kClocksAgree, 2)) fields.clocks_agree = *agree;
  return fields;
}

/// "its field 'x' is missing or not <what>", for a verdict's reason.
std::string bad_field(const char* field, const char* what) {
  return fmt::format("its field '{}' is missing or not {}", field, what);
}

/// The verdict of a row whose field "failure" says it failed, in the course's words: the row's
/// message may quote the lab (what it threw) and is kept for the instructor's log only.
GradedVerdict failed_verdict(const BenchRow& row, bench::RowFailure failure) {
  GradedVerdict v;
  switch (failure) {
    case bench::RowFailure::kWrongResults:
      // At least one, whatever the count field says.
      v.wrong_results = std::max(row.verdict.wrong_results.value_or(1), 1.0);
      v.reason = fmt::format("wrong results in {} timed call(s)", v.wrong_results);
      break;
    case bench::RowFailure::kClocksDisagree:
      v.clocks_disagree = true;
      v.reason = "the lab's CUDA events and the grader's clock disagree about the timed calls";
      break;
    case bench::RowFailure::kThrew:
      v.reason =
          "the row stopped: the lab threw, its process died or hung, or a CUDA error broke it";
      break;
    case bench::RowFailure::kUnavailable:
      v.reason = "the benchmark row cannot run in this build";
      break;
    case bench::RowFailure::kNone:
      break;
  }
  return v;
}

}  // namespace

GradedVerdict graded_verdict(const BenchRow& row) {
  const VerdictFields& f = row.verdict;
  GradedVerdict v;
  if (!f.failure) {
    v.reason = "the benchmark row has no verdict: " + bad_field(bench::kFailure, "a failure code");
    return v;
  }
  if (*f.failure != bench::RowFailure::kNone) return failed_verdict(row, *f.failure);
  // It says it passed: every other verdict field must say so too.
  if (row.error)
    v.reason = std::string("the benchmark row failed but its field '") + bench::kFailure +
               "' says it did not";
  else if (!f.wrong_results || !f.warmup_wrong)
    v.reason = "the benchmark row has no verdict: " +
               bad_field(!f.wrong_results ? bench::kWrongResults : bench::kWarmupWrong, "a count");
  else if (!f.clocks_agree)
    v.reason = "the benchmark row has no verdict: " + bad_field(bench::kClocksAgree, "0 or 1");
  else if (*f.wrong_results > 0 || !*f.clocks_agree)
    v.reason = fmt::format(
        "the benchmark row's verdict contradicts itself: no failure, {} wrong results, clocks {}",
        *f.wrong_results, *f.clocks_agree ? "agree" : "disagree");
  else
    v.passed = true;
  if (!v.passed) v.wrong_results = f.wrong_results.value_or(0);
  return v;
}

const BenchRow* BenchResults::find(const std::string& impl, std::size_t n,
                                   const std::string& family) const {
  for (const BenchRow& row : rows)
    if (row.impl == impl && row.n == n && (family.empty() || row.family == family)) return &row;
  return nullptr;
}

std::size_t parse_size(const std::string& text) {
  const std::string t = trim(text);
  const auto caret = t.find('^');
  // Below 2^63 either way: 2^62 is the largest size an exponent may name.
  constexpr std::uint64_t kMost = (std::uint64_t{1} << 63) - 1;
  if (caret == std::string::npos)
    return static_cast<std::size_t>(parse_count(t, kMost).value_or(0));
  const auto base = parse_number(std::string_view(t).substr(0, caret));
  const auto exponent = parse_number(std::string_view(t).substr(caret + 1));
  if (!base || !exponent || *base <= 0 || *exponent < 0 || *exponent > 62) return 0;
  const double value = std::pow(*base, *exponent);
  if (!std::isfinite(value) || value >= 9.2e18) return 0;  // llround's range, too
  return static_cast<std::size_t>(std::llround(value));
}

BenchResults parse_bench_json(const std::string& text) {
  BenchResults results;
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    results.problem =
        text.empty() ? "no benchmark output file" : "the benchmark output is not JSON";
    return results;
  }
  if (json.contains("context") && json["context"].is_object()) {
    results.ceiling_gbps = number_of(json["context"], "ceiling_gbps");
    results.theoretical_gbps = number_of(json["context"], "theoretical_gbps");
    results.gpu = string_of(json["context"], "gpu");
  }
  if (json.contains("benchmarks") && json["benchmarks"].is_array()) {
    for (const auto& b : json["benchmarks"]) {
      if (!b.is_object()) continue;
      if (b.contains("run_type") && string_of(b, "run_type") != "iteration") continue;
      const std::vector<std::string> parts = split(string_of(b, "name"), "/");
      if (parts.size() < 3) continue;
      BenchRow row;
      row.family = parts[0];
      row.impl = parts[1];
      row.n = parse_size(parts[2]);
      row.median_us = number_of(b, "median_us");
      row.median_gbps = number_of(b, "median_gbps");
      row.wrong_results = number_of(b, bench::kWrongResults);
      row.noise = number_of(b, bench::kNoise);
      row.event_us = number_of(b, bench::kEventUs);
      row.throttled_samples =
          static_cast<int>(std::clamp(number_of(b, bench::kThrottledSamples), 0.0, 1e6));
      row.throttled_figure = number_of(b, bench::kThrottledFigure) > 0;
      const double starts = std::min(number_of(b, "lab_process_starts"), 1e6);
      results.lab_process_starts = std::max(results.lab_process_starts, static_cast<int>(starts));
      // 1.7: error_occurred/error_message; 1.8: the same for SkipWithError, or
      // skipped/skip_message for SkipWithMessage.
      row.error = truthy(b, "error_occurred") || truthy(b, "skipped");
      row.error_message = string_of(b, "error_message");
      if (row.error_message.empty()) row.error_message = string_of(b, "skip_message");
      if (row.error && row.error_message.empty()) row.error_message = "the benchmark row failed";
      row.verdict = verdict_fields(b);
      results.rows.push_back(row);
    }
  }
  results.parsed = true;
  return results;
}

}  // namespace reduce::grade
