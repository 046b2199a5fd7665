// main() of every checker binary: the lab under test comes from the command line, so one binary
// serves every lab of its operation.
//   <op>_test --lab=LIBRARY [--lab-order=serial|tree] [--lab-name=04_sequential] [gtest flags]
//   <op>_test --labs-file=PLAN [--lab-mark=MARK] [gtest flags]   (or REDUCE_LAB_MARK=MARK)
// The options become REDUCE_LAB_LIBRARY, REDUCE_LAB_ORDER and REDUCE_LAB for this process only;
// the runner it starts for the lab gets none of them. With --labs-file, one process tests
// several labs of its operation in turn (PLAN: one "name<TAB>order<TAB>library" line per lab),
// all through one runner that holds every library; see run_labs().
#include <reduce_remote/remote_lab.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace {

/// One lab of a --labs-file plan.
struct PlannedLab {
  std::string name, order, library;
};

/// The plan's labs; a line that does not have three fields is skipped.
std::vector<PlannedLab> read_plan(const char* path) {
  std::vector<PlannedLab> labs;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find('\t');
    const auto b = a == std::string::npos ? a : line.find('\t', a + 1);
    if (b == std::string::npos) continue;
    labs.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return labs;
}

/// Tests every lab of \p labs in turn, once per repetition (one per sanitizer tool, each with
/// its runner under that tool, REDUCE_RUNNER_REPETITION_PREFIXES): before each lab's tests the
/// line "[ lab      ] MARK <repetition> <name>" (the grader splits the output by it; MARK comes
/// from the grader, so no lab can print the line), then GoogleTest's run of the filtered tests,
/// whose JSON report (--gtest_output=json:F.json) is kept as F.<name>.<repetition>.json. One
/// runner serves every lab of a repetition; it is stopped after a lab with a failure, so that the
/// next lab starts in a fresh one.
int run_labs(const std::vector<PlannedLab>& labs, const std::string& mark) {
  const int repetitions = std::max(1, static_cast<int>(::testing::GTEST_FLAG(repeat)));
  ::testing::GTEST_FLAG(repeat) = 1;
  const std::string output = ::testing::GTEST_FLAG(output);
  const std::string json = output.rfind("json:", 0) == 0 ? output.substr(5) : std::string();
  reduce::remote::RemoteLab& remote = reduce::remote::RemoteLab::from_environment();
  int failed = 0;
  for (int repetition = 0; repetition < repetitions; ++repetition) {
    remote.begin_repetition(repetition);
    for (std::size_t i = 0; i < labs.size(); ++i) {
      setenv("REDUCE_LAB", labs[i].name.c_str(), 1);
      setenv("REDUCE_LAB_ORDER", labs[i].order.c_str(), 1);
      remote.use_library(i);
      std::printf("[ lab      ] %s %d %s\n", mark.c_str(), repetition, labs[i].name.c_str());
      std::fflush(stdout);
      const bool passed = RUN_ALL_TESTS() == 0;
      if (!passed) {
        ++failed;
        remote.stop();
      }
      std::fflush(stdout);
      if (!json.empty()) {
        std::error_code ec;
        const std::filesystem::path from(json);
        std::filesystem::rename(
            from,
            from.parent_path() / (from.stem().string() + "." + labs[i].name + "." +
                                  std::to_string(repetition) + from.extension().string()),
            ec);
      }
    }
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  const struct {
    const char* flag;
    const char* variable;
  } options[] = {{"--lab=", "REDUCE_LAB_LIBRARY"},
                 {"--lab-order=", "REDUCE_LAB_ORDER"},
                 {"--lab-name=", "REDUCE_LAB"},
                 {"--labs-file=", "REDUCE_LABS_FILE"},
                 {"--lab-mark=", "REDUCE_LAB_MARK"}};
  for (int i = 0; i < argc; ++i) {
    bool taken = false;
    for (const auto& option : options) {
      const std::size_t length = std::strlen(option.flag);
      if (std::strncmp(argv[i], option.flag, length) == 0) {
        setenv(option.variable, argv[i] + length, 1);
        taken = true;
      }
    }
    if (!taken) rest.push_back(argv[i]);
  }
  int count = static_cast<int>(rest.size());
  rest.push_back(nullptr);
  ::testing::InitGoogleTest(&count, rest.data());
  std::vector<PlannedLab> plan;
  if (const char* file = std::getenv("REDUCE_LABS_FILE")) {
    plan = read_plan(file);
    std::string libraries;  // the runner gets every planned library (RunnerOptions)
    for (const PlannedLab& lab : plan) libraries += (libraries.empty() ? "" : "\x1f") + lab.library;
    setenv("REDUCE_LAB_LIBRARIES", libraries.c_str(), 1);
    unsetenv("REDUCE_LABS_FILE");
  }
  const bool one_lab = plan.empty();
  // Each repetition of the tests may run the lab under another sanitizer tool
  // (REDUCE_RUNNER_REPETITION_PREFIXES): one checker process, one runner per tool.
  struct RepetitionListener : ::testing::EmptyTestEventListener {
    void OnTestIterationStart(const ::testing::UnitTest&, int iteration) override {
      reduce::remote::RemoteLab::from_environment().begin_repetition(iteration);
    }
  };
  if (one_lab && std::getenv("REDUCE_RUNNER_REPETITION_PREFIXES") != nullptr)
    ::testing::UnitTest::GetInstance()->listeners().Append(new RepetitionListener);
  const bool has_lab = std::getenv("REDUCE_LAB_LIBRARY") != nullptr ||
                       std::getenv("REDUCE_LAB_LIBRARIES") != nullptr;
  if (has_lab && !::testing::GTEST_FLAG(list_tests)) {
    // The lab's process first, so that it makes its CUDA context while this one makes its own:
    // under several checkers at once, contexts are much of a grading's time. A runner that
    // cannot start is reported by the first test that calls it.
    try {
      reduce::remote::RemoteLab::from_environment().start_early();
    } catch (const std::exception&) {
    }
    // This process's CUDA context, timed apart from the first test. Without a GPU the tests say
    // so themselves.
    const auto start = std::chrono::steady_clock::now();
    if (cudaFree(nullptr) == cudaSuccess)
      std::fprintf(stderr, "%s%.2f s\n", reduce::remote::kCheckerContextLine,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (!one_lab && !::testing::GTEST_FLAG(list_tests)) {
    const char* mark = std::getenv("REDUCE_LAB_MARK");
    return run_labs(plan, mark != nullptr ? mark : "");
  }
  return RUN_ALL_TESTS();
}
