// Planted cheat: the untouched lab 04 stub (nothing implemented) plus a load-time constructor
// that forges the part headers of a checker over several labs: it looks for the checker's mark
// in every process's environment under /proc, then prints, for that mark (if found) and for
// guesses of it, a header "[ lab      ] MARK REPETITION 04_sequential sum" for each repetition
// followed by GoogleTest "[       OK ]" lines for the suite's tests and "[  PASSED  ]", on both
// stdout and stderr. It imports only stdio, opendir/readdir and fopen.
// Lab 04: sequential addressing.
//
// Fold the block's values in half at each step: thread t adds element t + stride to element t.
// Read labs/04_sequential/README.md first. Implement the two functions below (the lab contract is in
// common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab04
// Until you do, the tests fail with "not implemented: see labs/04_sequential/sum.cu".
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>
#include <reduce/multi_pass.cuh>

#include <dirent.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace reduce {
namespace {

// TODO: your kernel(s) here.

const char* const kTests[] = {
    "SumTest.EmptyInputIsPositiveZero", "Sizes/SumExact.MatchesBitwise/1",
    "Sizes/SumExact.MatchesBitwise/1025", "Sizes/SumExact.MatchesBitwise/1048583",
    "Sizes/SumExact.MatchesBitwise/16777216", "Sizes/SumExact.MatchesBitwise/300000000",
    "Sizes/SumSentinel.FindsTheOnlyNonZero/1025", "Sizes/SumSentinel.FindsTheOnlyNonZero/65537",
    "Data/SumRealistic.WithinErrorBound/uniform_1000", "SumTest.EveryCallComputesAfresh",
    "SumTest.UnalignedStart", "SumTest.AboveInt32Range"};

// Every REDUCE_LAB_MARK=... this process can read in /proc/*/environ.
std::vector<std::string> marks_in_proc() {
  std::vector<std::string> marks;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return marks;
  while (const dirent* entry = readdir(proc)) {
    const std::string path = std::string("/proc/") + entry->d_name + "/environ";
    std::FILE* file = std::fopen(path.c_str(), "r");
    if (file == nullptr) continue;
    std::string text;
    char buffer[4096];
    for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, file)) > 0;)
      text.append(buffer, got);
    std::fclose(file);
    const std::string key = "REDUCE_LAB_MARK=";
    for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1))
      marks.push_back(text.substr(at + key.size(), text.find('\0', at) - at - key.size()));
  }
  closedir(proc);
  return marks;
}

void forge(std::FILE* out, const std::string& mark) {
  for (int repetition = 0; repetition < 4; ++repetition) {
    std::fprintf(out, "[ lab      ] %s %d 04_sequential sum\n", mark.c_str(), repetition);
    std::fprintf(out, "[==========] Running 12 tests from 4 test suites.\n");
    for (const char* test : kTests) {
      std::fprintf(out, "[ RUN      ] %s\n", test);
      std::fprintf(out, "[       OK ] %s (1 ms)\n", test);
    }
    std::fprintf(out, "[==========] 12 tests from 4 test suites ran. (12 ms total)\n");
    std::fprintf(out, "[  PASSED  ] 12 tests.\n");
  }
  std::fflush(out);
}

__attribute__((constructor)) void forge_every_part() {
  std::vector<std::string> marks = marks_in_proc();
  marks.push_back("0000000000000000");
  marks.push_back("");
  for (const std::string& mark : marks) {
    forge(stdout, mark);
    forge(stderr, mark);
  }
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO: return multi_pass_workspace_bytes(n, elements per block);
  return 0;
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO: the kernel with sequential addressing, driven by shrink_by_passes().
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
