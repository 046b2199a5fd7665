// A GoogleTest binary that misbehaves on request, so the grader's suite runner can be tested
// without a GPU. FAKE_MODE selects what Fake.Misbehaves does:
//   (unset) pass | crash (SIGSEGV) | hang | flood (endless output) | exit (exit(0) mid-test) |
//   sticky (fails with a CUDA illegal-address message; every later test of the same process
//   then fails the same way, as with a poisoned CUDA context) | nogpu (every test skips with
//   "no CUDA device") | stub (fails as an untouched stub's lab does: "not implemented: see ...") |
//   forge (prints GoogleTest's lines of a pass into its failure, as a lab's exception could).
// With --record=FILE it records its outcomes as the course's checkers do (outcome_record.hpp);
// --record-part=INDEX,REPETITION opens that part of a plan first. With --spec=WHAT alone it runs
// no test: it prints what the launch spec named by REDUCE_LAUNCH_SPEC says (read by the course's
// one reader, as a checker reads it) in words a stand-in checker's shell reads: labs (one line
// per part: name, op, order, entry, library, filters, TAB between), mark, seed, hold (its file),
// hold_limit (seconds), prefix (a word a line) or repetitions (one line each: the report, then
// its words, TAB between).
#include "outcome_record.hpp"

#include <reduce_vocabulary/launch_spec.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

bool g_poisoned = false;  // set by the sticky failure, like a broken CUDA context

std::string mode() {
  const char* m = std::getenv("FAKE_MODE");
  return m != nullptr ? m : "";
}

class Fake : public ::testing::Test {
 protected:
  void SetUp() override {
    if (mode() == "nogpu") GTEST_SKIP() << "[checker] no CUDA device: GPU test skipped";
    if (g_poisoned)
      FAIL() << "CUDA error cudaErrorIllegalAddress (an illegal memory access was encountered)";
  }
};

TEST_F(Fake, Passes) {
  EXPECT_EQ(1 + 1, 2);
}

TEST_F(Fake, Fails) {
  EXPECT_EQ(6 * 7, 43) << "the answer is off by one";
}

TEST_F(Fake, Skips) {
  GTEST_SKIP() << "[checker] not enough device memory";
}

TEST_F(Fake, Misbehaves) {
  const std::string m = mode();
  std::printf("misbehaving: %s\n", m.c_str());
  std::fflush(stdout);
  if (m == "crash") std::raise(SIGSEGV);
  if (m == "hang") std::this_thread::sleep_for(std::chrono::hours(1));
  if (m == "flood")
    for (;;) std::printf("flood flood flood flood flood flood flood flood flood flood\n");
  if (m == "exit") std::exit(0);
  static int runs = 0;  // the second run crashes: a checker that dies in its second repetition
  if (m == "crash_again" && ++runs == 2) std::raise(SIGSEGV);
  if (m == "stub") FAIL() << "the lab threw: not implemented: see labs/04_sequential/sum.cu";
  if (m == "forge")
    FAIL() << "the lab threw: x\n[       OK ] Fake.Misbehaves (0 ms)\n[  PASSED  ] 6 tests.\n";
  if (m == "sticky") {
    g_poisoned = true;
    FAIL() << "CUDA error cudaErrorIllegalAddress (an illegal memory access was encountered) in "
              "cudaStreamSynchronize";
  }
}

TEST_F(Fake, After1) {
  SUCCEED();
}

TEST_F(Fake, After2) {
  SUCCEED();
}

/// \p words, TAB between.
std::string tab_joined(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) line += (line.empty() ? "" : "\t") + word;
  return line;
}

/// Prints \p what of the spec named by REDUCE_LAUNCH_SPEC (see the head of this file); exits 2
/// with the reader's message where the spec does not read.
int print_spec(const std::string& what) {
  using namespace reduce::launch;
  std::optional<LaunchSpec> spec;
  try {
    spec = launch_spec_from_environment(Child::kChecker);
  } catch (const LaunchSpecError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  if (!spec) return 0;
  if (what == "mark") std::printf("%s\n", spec->mark.c_str());
  if (what == "hold" && !spec->hold.empty()) std::printf("%s\n", spec->hold.c_str());
  if (what == "hold_limit") std::printf("%.3f\n", spec->hold_limit_s);
  if (what == "seed" && spec->seed)
    std::printf("%llu\n", static_cast<unsigned long long>(*spec->seed));
  for (const PlannedLab& lab : what == "labs" ? spec->labs : std::vector<PlannedLab>{}) {
    std::vector<std::string> words = {lab.name, lab.op, lab.order, lab.entry, lab.library};
    words.insert(words.end(), lab.filters.begin(), lab.filters.end());
    std::printf("%s\n", tab_joined(words).c_str());
  }
  for (const std::string& word :
       what == "prefix" ? spec->runner.prefix : std::vector<std::string>{})
    std::printf("%s\n", word.c_str());
  for (const RunnerLaunch::Repetition& r :
       what == "repetitions" ? spec->runner.repetitions : std::vector<RunnerLaunch::Repetition>{}) {
    std::vector<std::string> words = {r.report};
    words.insert(words.end(), r.prefix.begin(), r.prefix.end());
    std::printf("%s\n", tab_joined(words).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]).rfind("--spec=", 0) == 0)
    return print_spec(std::string(argv[1]).substr(7));
  ::testing::InitGoogleTest(&argc, argv);
  std::string record, part;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--record=", 0) == 0) record = arg.substr(9);
    if (arg.rfind("--record-part=", 0) == 0) part = arg.substr(14);
  }
  if (!record.empty()) {
    auto* listener = new reduce::testing::OutcomeRecord(record, [] { return g_poisoned; });
    if (!part.empty()) {
      const auto comma = part.find(',');
      listener->part(std::stoi(part.substr(0, comma)), mode(), "op",
                     std::stoi(part.substr(comma + 1)));
    }
    ::testing::UnitTest::GetInstance()->listeners().Append(listener);
  }
  return RUN_ALL_TESTS();
}
