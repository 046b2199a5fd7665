// main() of every checker binary: the lab under test comes from the command line, so one binary
// serves every lab of its operation.
//   <op>_test --lab=LIBRARY [--lab-order=serial|tree] [--lab-name=04_sequential] [gtest flags]
// The options become REDUCE_LAB_LIBRARY, REDUCE_LAB_ORDER and REDUCE_LAB for this process only;
// the runner it starts for the lab gets none of them.
#include <reduce_remote/remote_lab.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  std::vector<char*> rest;
  const struct {
    const char* flag;
    const char* variable;
  } options[] = {{"--lab=", "REDUCE_LAB_LIBRARY"},
                 {"--lab-order=", "REDUCE_LAB_ORDER"},
                 {"--lab-name=", "REDUCE_LAB"}};
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
  // Each repetition of the tests may run the lab under another sanitizer tool
  // (REDUCE_RUNNER_REPETITION_PREFIXES): one checker process, one runner per tool.
  struct RepetitionListener : ::testing::EmptyTestEventListener {
    void OnTestIterationStart(const ::testing::UnitTest&, int iteration) override {
      reduce::remote::RemoteLab::from_environment().begin_repetition(iteration);
    }
  };
  if (std::getenv("REDUCE_RUNNER_REPETITION_PREFIXES") != nullptr)
    ::testing::UnitTest::GetInstance()->listeners().Append(new RepetitionListener);
  if (std::getenv("REDUCE_LAB_LIBRARY") != nullptr && !::testing::GTEST_FLAG(list_tests)) {
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
  return RUN_ALL_TESTS();
}
