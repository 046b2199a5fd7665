#include <reduce_grade/bench_results.hpp>
#include <reduce_grade/parse.hpp>
#include <reduce_grade/util.hpp>

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

}  // namespace

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
      row.wrong_results = number_of(b, "wrong_results");
      const double starts = std::min(number_of(b, "lab_process_starts"), 1e6);
      results.lab_process_starts = std::max(results.lab_process_starts, static_cast<int>(starts));
      // 1.7: error_occurred/error_message; 1.8: the same for SkipWithError, or
      // skipped/skip_message for SkipWithMessage.
      row.error = truthy(b, "error_occurred") || truthy(b, "skipped");
      row.error_message = string_of(b, "error_message");
      if (row.error_message.empty()) row.error_message = string_of(b, "skip_message");
      if (row.error && row.error_message.empty()) row.error_message = "the benchmark row failed";
      results.rows.push_back(row);
    }
  }
  results.parsed = true;
  return results;
}

}  // namespace reduce::grade
