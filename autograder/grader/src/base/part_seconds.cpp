#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/part_seconds.hpp>
#include <reduce_grade/base/toml_text.hpp>
#include <reduce_grade/base/util.hpp>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <system_error>
#include <vector>

namespace reduce::grade {

const PartCost* PartSeconds::find(const std::string& lab, const std::string& op) const {
  const auto l = labs.find(lab);
  if (l == labs.end()) return nullptr;
  const auto o = l->second.find(op);
  return o == l->second.end() ? nullptr : &o->second;
}

double PartSeconds::seconds_per_test() const {
  std::vector<double> rates;
  for (const auto& [lab, ops] : labs)
    for (const auto& [op, cost] : ops) rates.push_back(cost.seconds / cost.tests);
  if (rates.empty()) return 1.0;
  std::sort(rates.begin(), rates.end());
  const std::size_t n = rates.size();
  return n % 2 == 1 ? rates[n / 2] : (rates[n / 2 - 1] + rates[n / 2]) / 2;
}

double PartSeconds::weight(const std::string& lab, const std::string& op, std::size_t tests) const {
  if (const PartCost* cost = find(lab, op)) return cost->seconds;
  return static_cast<double>(tests) * seconds_per_test();
}

namespace {

/// Throws ConfigError naming the file and the line of \p node.
[[noreturn]] void fail_at(const std::string& source, const toml::node& node,
                          const std::string& what) {
  throw ConfigError(fmt::format("{}:{}: {}", source, node.source().begin.line, what));
}

/// One `<op> = { seconds = S, tests = N }` of lab \p lab.
PartCost read_cost(const std::string& source, const std::string& where, const toml::node& node) {
  const toml::table* t = node.as_table();
  if (t == nullptr) fail_at(source, node, where + " must be { seconds = S, tests = N }");
  PartCost cost;
  bool seconds = false, tests = false;
  for (auto&& [key, value] : *t) {
    if (key.str() == "seconds" && value.is_number() && *value.value<double>() >= 0) {
      cost.seconds = *value.value<double>();
      seconds = true;
    } else if (key.str() == "tests" && value.is_integer() && *value.value<std::int64_t>() > 0) {
      cost.tests = static_cast<std::size_t>(*value.value<std::int64_t>());
      tests = true;
    } else {
      fail_at(source, value,
              fmt::format("{}: '{}' must be seconds (a number >= 0) or tests (an integer > 0)",
                          where, key.str()));
    }
  }
  if (!seconds || !tests) fail_at(source, node, where + " needs both seconds and tests");
  return cost;
}

}  // namespace

PartSeconds parse_part_seconds(std::string_view text, const std::string& source_name) {
  const toml::table root = parse_toml(text, source_name);
  PartSeconds table;
  for (auto&& [key, value] : root) {
    if (key.str() == "version" && value.is_integer()) {
      table.version = static_cast<int>(*value.value<std::int64_t>());
      if (table.version != 1)
        fail_at(source_name, value, fmt::format("version {} (this grader reads 1)", table.version));
    } else if (key.str() == "measured_on" && value.is_string()) {
      table.measured_on = *value.value<std::string>();
    } else if (key.str() == "part_seconds" && value.is_table()) {
      for (auto&& [lab, ops] : *value.as_table()) {
        if (!ops.is_table())
          fail_at(source_name, ops, fmt::format("{} must be a table", lab.str()));
        for (auto&& [op, cost] : *ops.as_table())
          table.labs[std::string(lab.str())][std::string(op.str())] = read_cost(
              source_name, fmt::format("[part_seconds.{}] {}", lab.str(), op.str()), cost);
      }
    } else {
      fail_at(source_name, value,
              fmt::format("'{}': expected version (an integer), measured_on (a string) or "
                          "[part_seconds.<lab>] tables",
                          key.str()));
    }
  }
  if (table.version == 0) throw ConfigError(source_name + ": no version");
  return table;
}

PartSeconds load_part_seconds(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return {};
  return parse_part_seconds(read_file(path), path.string());
}

}  // namespace reduce::grade
