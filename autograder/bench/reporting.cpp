// Rows and their verdicts in the JSON.
#include "reporting.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

namespace reduce::bench {
namespace {

/// Google Benchmark's JSON reporter, but a row that failed keeps its verdict counters, which
/// Google Benchmark drops with every other counter of a row skipped with an error.
class VerdictJsonReporter : public benchmark::JSONReporter {
 public:
  explicit VerdictJsonReporter(const Rows& rows) : rows_(rows) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> kept = runs;
    for (Run& run : kept)
      if (const Row* row = rows_.named(run.run_name.function_name))
        for (const auto& [name, counter] : row->verdict) run.counters.emplace(name, counter);
    benchmark::JSONReporter::ReportRuns(kept);
  }

 private:
  const Rows& rows_;
};

/// The value of Google Benchmark's flag --\p flag: its last occurrence in argv, else the
/// environment variable it falls back to (the flag's name in upper case), else empty.
std::string flag_value(int argc, char** argv, const char* flag) {
  const std::string prefix = std::string("--") + flag + "=";
  std::string value;
  bool given = false;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) {
      value = argv[i] + prefix.size();
      given = true;
    }
  if (given) return value;
  std::string variable = flag;
  std::transform(variable.begin(), variable.end(), variable.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  const char* env = std::getenv(variable.c_str());
  return env != nullptr ? env : "";
}

}  // namespace

RowId RowId::of(const std::string& family, const std::string& impl, std::size_t n) {
  return {family, n, impl, family + "/" + impl + "/" + std::to_string(n)};
}

Row& Rows::open(const RowId& id) {
  const Key key{id.family, id.n, id.impl};
  names_[id.name] = key;
  return rows_[key];
}

const Row* Rows::find(const std::string& family, std::size_t n, const std::string& impl) const {
  const auto it = rows_.find({family, n, impl});
  return it == rows_.end() ? nullptr : &it->second;
}

const Row* Rows::named(const std::string& name) const {
  const auto it = names_.find(name);
  return it == names_.end() ? nullptr : &rows_.at(it->second);
}

void pass_row(benchmark::State& state, Row& row) {
  state.counters[kFailure] = static_cast<double>(RowFailure::kNone);
  row.verdict.clear();  // an earlier run's, where Google Benchmark ran the row more than once
}

void fail_row(benchmark::State& state, Row& row, RowFailure failure, const std::string& message,
              bool skip) {
  state.counters[kFailure] = static_cast<double>(failure);
  row.verdict.clear();
  for (const char* field : kVerdictFields)
    if (const auto it = state.counters.find(field); it != state.counters.end())
      row.verdict.emplace(field, it->second);
  row.status = message;
  if (skip) state.SkipWithError(row.status.c_str());
}

std::unique_ptr<benchmark::BenchmarkReporter> verdict_file_reporter(int argc, char** argv,
                                                                    const Rows& rows) {
  // Google Benchmark exits when it is given a file reporter without a file: only with one.
  const std::string format = flag_value(argc, argv, "benchmark_out_format");
  if (flag_value(argc, argv, "benchmark_out").empty() || (!format.empty() && format != "json"))
    return nullptr;
  return std::make_unique<VerdictJsonReporter>(rows);
}

double floor_gbps(const Rows& rows, std::size_t n) {
  const Row* floor = rows.find("sum", n, "floor");
  return floor == nullptr || floor->status != "ok" ? 0.0 : floor->gbps;
}

}  // namespace reduce::bench
