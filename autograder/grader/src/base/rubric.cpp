#include <reduce_grade/base/bench_results.hpp>
#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/base/toml_text.hpp>
#include <reduce_grade/base/util.hpp>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <set>

namespace reduce::grade {
namespace {

/// Reading helpers that name the file and the key in every error.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw ConfigError(fmt::format("{}: [{}] {}", source_, where, what));
  }

  void only_keys(const toml::table& table, const std::string& where,
                 const std::set<std::string>& allowed) const {
    for (auto&& [key, value] : table) {
      if (allowed.count(std::string(key.str())) == 0) {
        std::string list;
        for (const std::string& k : allowed) list += (list.empty() ? "" : ", ") + k;
        fail(where, fmt::format("unknown key '{}' (allowed: {})", key.str(), list));
      }
    }
  }

  double number(const toml::table& table, const std::string& where, const char* key,
                double fallback, double min = 0) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) return fallback;
    const std::optional<double> value = node->value<double>();
    if (!value || !node->is_number()) fail(where, fmt::format("'{}' must be a number", key));
    if (*value < min) fail(where, fmt::format("'{}' must be >= {}", key, min));
    return *value;
  }

  std::string string(const toml::table& table, const std::string& where, const char* key,
                     const std::string& fallback) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) return fallback;
    if (!node->is_string()) fail(where, fmt::format("'{}' must be a string", key));
    return *node->value<std::string>();
  }

  std::vector<std::string> strings(const toml::table& table, const std::string& where,
                                   const char* key,
                                   const std::vector<std::string>& fallback) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) return fallback;
    const toml::array* array = node->as_array();
    if (array == nullptr) fail(where, fmt::format("'{}' must be an array of strings", key));
    std::vector<std::string> out;
    for (const toml::node& item : *array) {
      if (!item.is_string()) fail(where, fmt::format("'{}' must be an array of strings", key));
      out.push_back(*item.value<std::string>());
    }
    return out;
  }

  const toml::table* table(const toml::table& parent, const std::string& where,
                           const char* key) const {
    const toml::node* node = parent.get(key);
    if (node == nullptr) return nullptr;
    const toml::table* t = node->as_table();
    if (t == nullptr) fail(where, fmt::format("'{}' must be a table", key));
    return t;
  }

  Points points(const toml::table& table, const std::string& where, Points base) const {
    only_keys(table, where, {"build", "tests", "hidden", "sanitizer", "performance"});
    base.build = number(table, where, "build", base.build);
    base.tests = number(table, where, "tests", base.tests);
    base.hidden = number(table, where, "hidden", base.hidden);
    base.sanitizer = number(table, where, "sanitizer", base.sanitizer);
    base.performance = number(table, where, "performance", base.performance);
    return base;
  }

 private:
  std::string source_;
};

}  // namespace

const LabRubric* Rubric::find(const std::string& folder) const {
  for (const LabRubric& lab : labs)
    if (lab.lab == folder) return &lab;
  return nullptr;
}

namespace {

Limits read_limits(const Reader& r, const toml::table* t, Limits l) {
  if (t == nullptr) return l;
  r.only_keys(
      *t, "limits",
      {"configure_timeout_s", "build_timeout_s", "test_timeout_s", "hidden_timeout_s",
       "sanitizer_timeout_s", "bench_timeout_s", "output_cap_bytes", "max_restarts",
       "parallel_labs", "parallel_checks", "sanitizer_checkers", "timing_lock", "gpu_memory_gib"});
  l.configure_timeout_s = r.number(*t, "limits", "configure_timeout_s", l.configure_timeout_s, 1);
  l.build_timeout_s = r.number(*t, "limits", "build_timeout_s", l.build_timeout_s, 1);
  l.test_timeout_s = r.number(*t, "limits", "test_timeout_s", l.test_timeout_s, 1);
  l.hidden_timeout_s = r.number(*t, "limits", "hidden_timeout_s", l.hidden_timeout_s, 1);
  l.sanitizer_timeout_s = r.number(*t, "limits", "sanitizer_timeout_s", l.sanitizer_timeout_s, 1);
  l.bench_timeout_s = r.number(*t, "limits", "bench_timeout_s", l.bench_timeout_s, 1);
  l.output_cap_bytes = static_cast<std::size_t>(
      r.number(*t, "limits", "output_cap_bytes", static_cast<double>(l.output_cap_bytes), 1024));
  l.max_restarts = static_cast<int>(r.number(*t, "limits", "max_restarts", l.max_restarts, 0));
  l.parallel_labs = static_cast<int>(r.number(*t, "limits", "parallel_labs", l.parallel_labs, 1));
  l.parallel_checks =
      static_cast<int>(r.number(*t, "limits", "parallel_checks", l.parallel_checks, 1));
  l.sanitizer_checkers =
      static_cast<int>(r.number(*t, "limits", "sanitizer_checkers", l.sanitizer_checkers, 1));
  const std::string lock =
      r.string(*t, "limits", "timing_lock", l.host_wide_timing_lock ? "host" : "gpu");
  if (lock != "gpu" && lock != "host")
    r.fail("limits.timing_lock", "must be \"gpu\" or \"host\", not \"" + lock + "\"");
  l.host_wide_timing_lock = lock == "host";
  l.gpu_memory_gib = r.number(*t, "limits", "gpu_memory_gib", l.gpu_memory_gib, 0);
  return l;
}

SanitizerRules read_sanitizer(const Reader& r, const toml::table* t, SanitizerRules rules) {
  if (t == nullptr) return rules;
  r.only_keys(*t, "sanitizer", {"tools", "filter", "filters"});
  rules.tools = r.strings(*t, "sanitizer", "tools", rules.tools);
  rules.filter = r.string(*t, "sanitizer", "filter", rules.filter);
  if (const toml::table* f = r.table(*t, "sanitizer", "filters")) {
    rules.filters.clear();
    for (auto&& [key, node] : *f) {
      if (!node.is_string()) r.fail("sanitizer.filters", "every value must be a string");
      rules.filters[std::string(key.str())] = *node.value<std::string>();
    }
  }
  for (const std::string& tool : rules.tools) {
    if (tool != "memcheck" && tool != "racecheck" && tool != "synccheck" && tool != "initcheck")
      r.fail("sanitizer", fmt::format("unknown tool '{}' (memcheck, racecheck, synccheck, "
                                      "initcheck)",
                                      tool));
  }
  return rules;
}

PerformanceRules read_performance(const Reader& r, const toml::table* t, PerformanceRules p) {
  if (t == nullptr) return p;
  r.only_keys(*t, "performance", {"size", "ceiling", "floor_ratio", "margin"});
  p.size = r.string(*t, "performance", "size", p.size);
  p.ceiling = r.string(*t, "performance", "ceiling", p.ceiling);
  p.floor_ratio = r.number(*t, "performance", "floor_ratio", p.floor_ratio);
  p.margin = r.number(*t, "performance", "margin", p.margin);
  if (p.ceiling != "probe" && p.ceiling != "stream_read")
    r.fail("performance", "'ceiling' must be \"probe\" or \"stream_read\"");
  if (p.floor_ratio >= 1) r.fail("performance", "'floor_ratio' must be below 1");
  if (p.margin <= 0 || p.margin > 1) r.fail("performance", "'margin' must be in (0, 1]");
  return p;
}

/// A size \p lab is timed at beside its measure (its `size` or `launch_bound_size`): a text such
/// as "2^16", at least 4096 elements, in a lab whose measure is timed like it. Empty: none.
std::string timed_lab_size(const Reader& r, const toml::table& t, const std::string& where,
                           const char* key, const LabRubric& lab) {
  const toml::node_view<const toml::node> size = t[key];
  if (!size) return {};
  const std::string text = size.value_or(std::string());
  if (!size.is_string() || parse_size(text) < 4096)
    r.fail(where, fmt::format("'{}' must be a size such as \"2^16\" (at least 4096)", key));
  if (lab.measure == "probe")
    r.fail(where, fmt::format("'{}' needs a measure timed like the lab (\"reference\" or "
                              "\"cub\"): the probe runs at the rubric's size alone",
                              key));
  return text;
}

/// The [labs.<folder>] entries.
std::vector<LabRubric> read_labs(const Reader& r, const toml::table* labs, const Rubric& rubric) {
  std::vector<LabRubric> out;
  if (labs == nullptr || labs->empty()) r.fail("labs", "no [labs.<folder>] entries");
  for (auto&& [key, node] : *labs) {
    const std::string name(key.str());
    const std::string where = "labs." + name;
    const toml::table* t = node.as_table();
    if (t == nullptr) r.fail(where, "must be a table");
    r.only_keys(
        *t, where,
        {"threshold", "floor", "measured", "points", "library", "measure", "probe_threshold",
         "probe_floor", "races_gate_performance", "size", "launch_bound_size", "credit"});
    LabRubric lab;
    lab.lab = name;
    lab.points = rubric.default_points;
    if (const toml::table* p = r.table(*t, where, "points"))
      lab.points = r.points(*p, where + ".points", rubric.default_points);
    if (const auto measure = (*t)["measure"]) {
      const std::string m = measure.value_or(std::string());
      if (!measure.is_string() || (m != "probe" && m != "reference" && m != "cub"))
        r.fail(where, "'measure' must be \"probe\", \"reference\" or \"cub\"");
      lab.measure = measure.value_or(std::string("probe"));
    }
    lab.threshold = r.number(*t, where, "threshold", 0);
    if (lab.points.performance > 0 && (lab.threshold <= 0 || lab.threshold > 1))
      r.fail(where, "'threshold' (fraction of the ceiling or the reference) must be in (0, 1]");
    lab.floor = r.number(*t, where, "floor", rubric.performance.floor_ratio * lab.threshold);
    if (lab.floor > lab.threshold) r.fail(where, "'floor' must not exceed 'threshold'");
    // Against the probe where the reference cannot be timed (a copy of the course without it).
    if (lab.measure == "probe" && (t->contains("probe_threshold") || t->contains("probe_floor")))
      r.fail(where, "'probe_threshold' and 'probe_floor' belong to a lab of measure \"reference\"");
    lab.probe_threshold = r.number(*t, where, "probe_threshold", lab.threshold);
    if (lab.points.performance > 0 && (lab.probe_threshold <= 0 || lab.probe_threshold > 1))
      r.fail(where, "'probe_threshold' (fraction of the ceiling) must be in (0, 1]");
    lab.probe_floor = lab.measure == "probe"
                          ? lab.floor
                          : r.number(*t, where, "probe_floor",
                                     rubric.performance.floor_ratio * lab.probe_threshold);
    if (lab.probe_floor > lab.probe_threshold)
      r.fail(where, "'probe_floor' must not exceed 'probe_threshold'");
    lab.measured = r.number(*t, where, "measured", 0);
    lab.size = timed_lab_size(r, *t, where, "size", lab);
    lab.launch_bound_size = timed_lab_size(r, *t, where, "launch_bound_size", lab);
    if (const auto credit = (*t)["credit"]) {
      lab.credit = credit.value_or(std::string());
      if (!credit.is_string() || (lab.credit != "slowest" && lab.credit != "per_length"))
        r.fail(where, "'credit' must be \"slowest\" or \"per_length\"");
    }
    if (const auto gate = (*t)["races_gate_performance"]) {
      if (!gate.is_boolean()) r.fail(where, "'races_gate_performance' must be true or false");
      lab.races_gate_performance = gate.value_or(false);
    }
    if (const auto library = (*t)["library"]) {
      if (!library.is_string() || (library.value_or(std::string()) != "none" &&
                                   library.value_or(std::string()) != "primitives"))
        r.fail(where, "'library' must be \"none\" or \"primitives\"");
      lab.library = library.value_or(std::string("none"));
    }
    out.push_back(lab);
  }
  return out;
}

}  // namespace

Rubric parse_rubric(std::string_view text, const std::string& source_name) {
  const toml::table root = parse_toml(text, source_name);
  const Reader r(source_name);
  Rubric rubric;
  r.only_keys(root, "top level",
              {"grader", "points", "limits", "sanitizer", "performance", "library", "labs"});

  if (const toml::table* t = r.table(root, "top level", "grader")) {
    r.only_keys(*t, "grader", {"pass_mark"});
    rubric.pass_mark = r.number(*t, "grader", "pass_mark", 0);
    if (rubric.pass_mark > 100) r.fail("grader", "'pass_mark' is a percentage (0-100)");
  }
  if (const toml::table* t = r.table(root, "top level", "points"))
    rubric.default_points = r.points(*t, "points", rubric.default_points);

  rubric.limits = read_limits(r, r.table(root, "top level", "limits"), rubric.limits);
  rubric.sanitizer = read_sanitizer(r, r.table(root, "top level", "sanitizer"), rubric.sanitizer);
  rubric.performance =
      read_performance(r, r.table(root, "top level", "performance"), rubric.performance);
  if (const toml::table* t = r.table(root, "top level", "library")) {
    r.only_keys(*t, "library", {"forbidden_symbols", "forbidden_needed", "forbidden_includes"});
    LibraryRules& l = rubric.library;
    l.forbidden_symbols = r.strings(*t, "library", "forbidden_symbols", l.forbidden_symbols);
    l.forbidden_needed = r.strings(*t, "library", "forbidden_needed", l.forbidden_needed);
    l.forbidden_includes = r.strings(*t, "library", "forbidden_includes", l.forbidden_includes);
  }
  rubric.labs = read_labs(r, r.table(root, "top level", "labs"), rubric);
  return rubric;
}

Rubric load_rubric(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw ConfigError("rubric not found: " + path.string());
  Rubric rubric = parse_rubric(read_file(path), path.string());
  rubric.source = path;
  return rubric;
}

std::vector<std::string> check_rubric_against_labs(const Rubric& rubric,
                                                   const std::vector<std::string>& course_labs) {
  std::vector<std::string> problems;
  for (const std::string& lab : course_labs)
    if (rubric.find(lab) == nullptr)
      problems.push_back(
          fmt::format("lab {} (course.json) has no [labs.{}] in the "
                      "rubric",
                      lab, lab));
  for (const LabRubric& entry : rubric.labs)
    if (std::find(course_labs.begin(), course_labs.end(), entry.lab) == course_labs.end())
      problems.push_back(
          fmt::format("rubric entry [labs.{}] names no lab of "
                      "course.json",
                      entry.lab));
  return problems;
}

double performance_points(double fraction, double threshold, double floor, double max_points) {
  if (!(fraction > 0) || max_points <= 0) return 0;
  if (fraction >= threshold) return max_points;
  if (fraction <= floor || threshold <= floor) return 0;
  return max_points * (fraction - floor) / (threshold - floor);
}

}  // namespace reduce::grade
